/**
 * SEP-2243 custom headers: a tool's `inputSchema` may mark properties with `x-mcp-header: Name`,
 * and on Streamable HTTP the client then mirrors that argument's value into an `Mcp-Param-Name`
 * header of every `tools/call` (so that gateways can route on it without reading bodies).
 *
 * The constraints on a declaration (a tool breaking any of them is invalid and must not be
 * called): it sits on a property reached from the root through `properties` alone (never under
 * `items`, `additionalProperties`, a combinator, a conditional or a definition); its name is a
 * non-empty RFC 9110 token, unique among the tool's declarations regardless of case; the
 * property's `type` is `string`, `integer` or `boolean`. A value is sent as it is when it is
 * plain visible ASCII (tabs allowed, no leading or trailing whitespace), otherwise as
 * `=?base64?{base64 of its UTF-8}?=`, as is a value that happens to look like that form.
 *
 * @internal
 */
import type * as Json from "../../Json.js"

/** One `x-mcp-header` declaration: the argument's path and the header's name. @internal */
export interface Declaration {
  readonly path: ReadonlyArray<string>
  readonly name: string
}

/** A tool's declarations, or why its definition is invalid. @internal */
export type Scan =
  | { readonly _tag: "Valid"; readonly declarations: ReadonlyArray<Declaration> }
  | { readonly _tag: "Invalid"; readonly reason: string }

const annotation = "x-mcp-header"

// RFC 9110 section 5.6.2: token = 1*tchar.
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

const headerTypes: ReadonlySet<unknown> = new Set(["string", "integer", "boolean"])

/** Keywords whose subschemas are not reached through `properties` alone. */
const elsewhere: ReadonlyArray<string> = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "patternProperties",
  "dependentSchemas",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions",
]

/** Of those, the ones whose value maps names to subschemas. */
const named: ReadonlySet<string> = new Set(["patternProperties", "dependentSchemas", "$defs", "definitions"])

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

const where = (path: ReadonlyArray<string>) => (path.length === 0 ? "the schema's root" : path.join("."))

/** Checks a tool's `inputSchema` and collects its declarations. @internal */
export const scan = (inputSchema: unknown): Scan => {
  const declarations: Array<Declaration> = []
  const seen = new Map<string, string>()
  const visit = (node: unknown, path: ReadonlyArray<string>, reachable: boolean): string | undefined => {
    if (!isObject(node)) return undefined
    if (Object.hasOwn(node, annotation)) {
      const name = node[annotation]
      if (!reachable || path.length === 0) {
        return `${annotation} at ${where(path)}: only properties reached through "properties" alone may carry it`
      }
      if (typeof name !== "string" || !token.test(name)) {
        return `${annotation} at ${where(path)}: ${JSON.stringify(name)} is not a valid header name (an RFC 9110 token)`
      }
      if (!headerTypes.has(node.type)) {
        return `${annotation} at ${where(path)}: the property's type must be string, integer or boolean, not ${JSON.stringify(node.type ?? null)}`
      }
      const prior = seen.get(name.toLowerCase())
      if (prior !== undefined)
        return `${annotation} ${JSON.stringify(name)} is declared twice (also as ${JSON.stringify(prior)})`
      seen.set(name.toLowerCase(), name)
      declarations.push({ path, name })
    }
    if (isObject(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const fault = visit(child, [...path, key], reachable)
        if (fault !== undefined) return fault
      }
    }
    for (const keyword of elsewhere) {
      const sub = node[keyword]
      if (sub === undefined) continue
      const branches = Array.isArray(sub)
        ? sub
        : named.has(keyword) && isObject(sub)
          ? Object.values(sub)
          : [sub]
      for (const branch of branches) {
        const fault = visit(branch, [...path, `<${keyword}>`], false)
        if (fault !== undefined) return fault
      }
    }
    return undefined
  }
  const fault = visit(inputSchema, [], true)
  return fault === undefined ? { _tag: "Valid", declarations } : { _tag: "Invalid", reason: fault }
}

const base64Prefix = "=?base64?"
const base64Suffix = "?="

const plain = (value: string): boolean => {
  if (value.length === 0 || value !== value.trim()) return false
  if (value.startsWith(base64Prefix) && value.endsWith(base64Suffix)) return false
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code !== 0x09 && (code < 0x20 || code > 0x7e)) return false
  }
  return true
}

/** No `Buffer` in core: base64 of the UTF-8 bytes through `btoa`. */
const base64 = (value: string): string => {
  let binary = ""
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** A header value: as it is when plain visible ASCII, otherwise in the base64 form. @internal */
export const encode = (value: string): string =>
  plain(value) ? value : `${base64Prefix}${base64(value)}${base64Suffix}`

const text = (value: Json.JsonValue | undefined): string | undefined => {
  if (typeof value === "string") return value
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value)
  // Absent, null, or not of a header's type: no header (the server judges the arguments).
  return undefined
}

/** The `Mcp-Param-*` headers of one call. @internal */
export const headers = (
  declarations: ReadonlyArray<Declaration>,
  args: Json.JsonObject,
): Readonly<Record<string, string>> => {
  const out: Record<string, string> = {}
  for (const declaration of declarations) {
    let value: Json.JsonValue | undefined = args
    for (const key of declaration.path) {
      value = isObject(value) ? (value as Json.JsonObject)[key] : undefined
    }
    const mirrored = text(value)
    if (mirrored !== undefined) out[`Mcp-Param-${declaration.name}`] = encode(mirrored)
  }
  return out
}
