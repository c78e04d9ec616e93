import type { Json, JsonObject } from "../Json.js"
import { isObject } from "./json.js"

/**
 * The opaque `requestState` of a multi round-trip `tools/call`: which round the client is in and
 * the answers gathered so far. The server is stateless between rounds, so it all travels here.
 */
export interface MrtrState {
  readonly tool: string
  readonly round: number
  readonly inputs: JsonObject
}

export const encodeRequestState = (state: MrtrState): string => {
  const bytes = new TextEncoder().encode(JSON.stringify({ v: 1, ...state }))
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** `undefined` for anything this server did not mint (tampered or foreign state). */
export const decodeRequestState = (value: string): MrtrState | undefined => {
  try {
    const binary = atob(value)
    const text = new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(binary, (char) => char.charCodeAt(0)),
    )
    const parsed: unknown = JSON.parse(text)
    if (!isObject(parsed) || parsed.v !== 1) return undefined
    const { tool, round, inputs } = parsed
    if (typeof tool !== "string" || typeof round !== "number" || !Number.isInteger(round) || round < 0) {
      return undefined
    }
    if (!isObject(inputs)) return undefined
    return { tool, round, inputs: inputs as { [key: string]: Json } }
  } catch {
    return undefined
  }
}
