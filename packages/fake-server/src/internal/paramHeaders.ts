/**
 * SEP-2243 custom headers, server side: a tool's `inputSchema` marks properties with
 * `x-mcp-header: Name`, and a client mirrors those arguments into `Mcp-Param-Name` headers of
 * its `tools/call`. The server checks that each header agrees with the body, so that a gateway
 * routing on the header and the server acting on the body never see two different requests:
 *
 * - an argument present in the body (string, integer or boolean) needs its header;
 * - a header needs its argument, with the same text (`true`/`false`, integers in decimal);
 * - a value of the form `=?base64?{B}?=` is decoded: `B` must be canonical, padded Base64 of
 *   UTF-8; anything else (a missing prefix or suffix included) is taken literally.
 *
 * A disagreement is HTTP 400 with JSON-RPC -32020 (HeaderMismatch). Declarations are read
 * through `properties` alone, as the client reads them (`packages/core/src/internal/wire/paramHeaders.ts`).
 */
import type { Tool } from "../Config.js"
import { isObject } from "./json.js"
import { headerMismatch, type RpcFailure } from "./rpcFailure.js"

interface Declaration {
  readonly path: readonly string[]
  readonly name: string
}

/** Declarations reached from the root through `properties` alone. */
const declarations = (schema: unknown, path: readonly string[] = []): Declaration[] => {
  if (!isObject(schema) || !isObject(schema.properties)) return []
  const found: Declaration[] = []
  for (const [key, property] of Object.entries(schema.properties)) {
    if (!isObject(property)) continue
    const name = property["x-mcp-header"]
    if (typeof name === "string" && name !== "") found.push({ path: [...path, key], name })
    found.push(...declarations(property, [...path, key]))
  }
  return found
}

const strictBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** The text a header value stands for, or `undefined` when its Base64 form is invalid. */
export const decodeParamValue = (value: string): string | undefined => {
  const match = /^=\?base64\?(.*)\?=$/i.exec(value)
  if (match === null) return value
  const encoded = match[1] ?? ""
  if (!strictBase64.test(encoded)) return undefined
  try {
    const binary = atob(encoded)
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))
  } catch {
    return undefined
  }
}

/** The header text of an argument, or `undefined` when it is absent or not of a header's type. */
const textOf = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value)
  return undefined
}

const headerValue = (headers: Headers, name: string): string | undefined => {
  const raw = headers.get(name)
  // Only surrounding whitespace is forgiven (RFC 9110 section 5.5).
  return raw === null ? undefined : raw.replace(/^[\t ]+|[\t ]+$/g, "")
}

/** The -32020 failure for a `tools/call` whose `Mcp-Param-*` headers disagree with its arguments. */
export const checkParamHeaders = (tool: Tool, args: unknown, headers: Headers): RpcFailure | undefined => {
  for (const declaration of declarations(tool.inputSchema)) {
    let value: unknown = args
    for (const key of declaration.path) value = isObject(value) ? value[key] : undefined
    const expected = textOf(value)
    const headerName = `Mcp-Param-${declaration.name}`
    const sent = headerValue(headers, headerName)
    if (sent === undefined) {
      if (expected === undefined) continue
      return headerMismatch(
        "(missing)",
        `the body carries arguments.${declaration.path.join(".")} but the required ${headerName} header is absent`,
      )
    }
    const decoded = decodeParamValue(sent)
    if (decoded === undefined) {
      return headerMismatch(sent, `the ${headerName} header carries an invalid Base64 value`)
    }
    if (expected === undefined) {
      return headerMismatch(
        sent,
        `the ${headerName} header is present but arguments.${declaration.path.join(".")} is not`,
      )
    }
    if (decoded !== expected) {
      return headerMismatch(
        sent,
        `the ${headerName} header is ${JSON.stringify(decoded)} but arguments.${declaration.path.join(".")} is ${JSON.stringify(expected)}`,
      )
    }
  }
  return undefined
}
