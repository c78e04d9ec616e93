/**
 * Which protocol generation a request speaks, judged from the request alone, as the official
 * SDK's dual-era entry judges it: a `_meta` protocol version claim, or an
 * `MCP-Protocol-Version` header naming 2026-07-28 or later, is the stateless generation;
 * `initialize`, a posted response, and a request that claims no version or an earlier one are
 * 2025-11-25. What a server of one generation answers a request of the other is here too.
 */
import { type Envelope, protocolVersionKey, type RequestId } from "./envelope.js"
import { isObject } from "./json.js"
import { invalidRequest, unsupportedVersion } from "./rpcFailure.js"

export type Era = "2026-07-28" | "2025-11-25"

/** The first stateless revision: every dated version before it had `initialize`. */
const firstStateless = "2026-07-28"

const isLegacyVersion = (version: string): boolean =>
  /^\d{4}-\d{2}-\d{2}$/.test(version) && version < firstStateless

/** The era of a parsed body; anything but one valid JSON-RPC message is left to the 2026-07-28 edge's errors. */
export const eraOf = (message: unknown, headers: Headers): Era => {
  if (!isObject(message) || message.jsonrpc !== "2.0") return "2026-07-28"
  const id = message.id
  if (Object.hasOwn(message, "id") && typeof id !== "string" && typeof id !== "number") return "2026-07-28"
  if (typeof message.method !== "string")
    return "result" in message || "error" in message ? "2025-11-25" : "2026-07-28"
  const params = isObject(message.params) ? message.params : {}
  const meta = isObject(params._meta) ? params._meta : {}
  if (Object.hasOwn(meta, protocolVersionKey)) return "2026-07-28"
  if (message.method === "initialize") return "2025-11-25"
  const header = headers.get("mcp-protocol-version")?.trim()
  return header === undefined || isLegacyVersion(header) ? "2025-11-25" : "2026-07-28"
}

/**
 * A stateless server's answer to a 2025-era message: a request learns which versions the server
 * speaks (-32022, naming the version it asked for: `initialize`'s, or its header's); a
 * notification is accepted and dropped; a posted response has nothing to answer.
 */
export const refuseLegacy = (
  message: Record<string, unknown>,
  headers: Headers,
  supported: readonly string[],
): Envelope => {
  const id: RequestId | null =
    typeof message.id === "string" || typeof message.id === "number" ? message.id : null
  if (typeof message.method !== "string") {
    return {
      kind: "rejected",
      id,
      failure: invalidRequest("Bad Request: JSON-RPC responses cannot be posted here"),
    }
  }
  if (id === null) return { kind: "notification", method: message.method }
  const params = isObject(message.params) ? message.params : {}
  const asked =
    message.method === "initialize" ? params.protocolVersion : headers.get("mcp-protocol-version")?.trim()
  return {
    kind: "rejected",
    id,
    failure: unsupportedVersion(typeof asked === "string" ? asked : undefined, supported),
  }
}
