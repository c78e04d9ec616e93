import { isObject } from "./json.js"
import {
  headerMismatch,
  invalidEnvelope,
  invalidRequest,
  parseError,
  type RpcFailure,
  unsupportedVersion,
} from "./rpcFailure.js"

export const protocolVersionKey = "io.modelcontextprotocol/protocolVersion"
export const clientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
export const clientInfoKey = "io.modelcontextprotocol/clientInfo"
export const serverInfoKey = "io.modelcontextprotocol/serverInfo"
export const subscriptionIdKey = "io.modelcontextprotocol/subscriptionId"
export const tasksExtension = "io.modelcontextprotocol/tasks"
/** The vendor `_meta` key our client puts its idempotency key under. */
export const idempotencyKeyMeta = "io.github.mcp-handles/key"

export type RequestId = string | number

/** A JSON-RPC request whose envelope passed every edge check. */
export interface EnvelopedRequest {
  readonly id: RequestId
  readonly method: string
  readonly params: Record<string, unknown>
  readonly protocolVersion: string
  readonly clientCapabilities: Record<string, unknown>
  readonly idempotencyKey: string | undefined
}

export type Envelope =
  | { readonly kind: "request"; readonly request: EnvelopedRequest }
  | { readonly kind: "notification"; readonly method: string }
  | { readonly kind: "rejected"; readonly id: RequestId | null; readonly failure: RpcFailure }

/** What the edge needs from the HTTP request: its body text and (case-insensitive) headers. */
export interface InboundHttp {
  readonly body: string
  readonly headers: Headers
}

/** The first, cheap look at a body: enough to match fault rules before anything else happens. */
export interface Peek {
  readonly method: string | undefined
  readonly tool: string | undefined
  readonly taskId: string | undefined
  /** The idempotency key in `params._meta["io.github.mcp-handles/key"]`, if any. */
  readonly idempotencyKey: string | undefined
}

export const peek = (parsed: unknown): Peek => {
  if (!isObject(parsed))
    return { method: undefined, tool: undefined, taskId: undefined, idempotencyKey: undefined }
  const params = isObject(parsed.params) ? parsed.params : {}
  const meta = isObject(params._meta) ? params._meta : {}
  const key = meta[idempotencyKeyMeta]
  return {
    idempotencyKey: typeof key === "string" ? key : undefined,
    method: typeof parsed.method === "string" ? parsed.method : undefined,
    tool: parsed.method === "tools/call" && typeof params.name === "string" ? params.name : undefined,
    taskId: typeof params.taskId === "string" ? params.taskId : undefined,
  }
}

export const parseBody = (body: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(body) as unknown }
  } catch {
    return { ok: false }
  }
}

/** Methods whose body field the `Mcp-Name` header mirrors (SEP-2243, plus SEP-2663 for tasks). */
const mcpNameSource: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
}

export interface EnvelopeOptions {
  readonly supportedVersions: readonly string[]
  readonly validateHeaders: boolean
}

/**
 * The edge of the validation ladder, in the SDK's order: JSON, JSON-RPC shape, protocol version
 * header against the body, the `_meta` envelope, the supported revision, then the standard
 * routing headers. Method existence, capabilities and params come later, in the dispatcher.
 */
export const decodeEnvelope = (http: InboundHttp, options: EnvelopeOptions): Envelope => {
  const parsed = parseBody(http.body)
  if (!parsed.ok) return rejected(null, parseError("Parse error: the body is not valid JSON"))
  const message = parsed.value
  if (Array.isArray(message)) return rejected(null, invalidRequest("Batch requests are not supported"))
  if (!isObject(message)) return rejected(null, invalidRequest("A JSON-RPC message must be an object"))

  const rawId = message.id
  const hasId = Object.hasOwn(message, "id")
  const id: RequestId | null = typeof rawId === "string" || typeof rawId === "number" ? rawId : null
  if (message.jsonrpc !== "2.0") return rejected(id, invalidRequest('Invalid Request: jsonrpc must be "2.0"'))
  if (typeof message.method !== "string" || message.method === "") {
    return rejected(id, invalidRequest("Invalid Request: method must be a non-empty string"))
  }
  if (hasId && id === null)
    return rejected(null, invalidRequest("Invalid Request: id must be a string or number"))
  if (message.params !== undefined && !isObject(message.params)) {
    return rejected(id, invalidRequest("Invalid Request: params must be an object"))
  }
  const method = message.method
  if (id === null) return { kind: "notification", method }
  const params = isObject(message.params) ? message.params : {}

  const versionHeader = headerValue(http.headers, "mcp-protocol-version")
  const meta = isObject(params._meta) ? params._meta : undefined
  const claimed = meta?.[protocolVersionKey]
  if (options.validateHeaders && versionHeader !== undefined && typeof claimed === "string") {
    if (versionHeader !== claimed) {
      return rejected(
        id,
        headerMismatch(
          "MCP-Protocol-Version",
          `the MCP-Protocol-Version header is ${versionHeader} but _meta names protocol version ${claimed}`,
        ),
      )
    }
  }
  if (meta === undefined) return rejected(id, invalidEnvelope("Invalid params: _meta is required"))
  if (typeof claimed !== "string") {
    return rejected(id, invalidEnvelope(`Invalid params: _meta["${protocolVersionKey}"] is required`))
  }
  const capabilities = meta[clientCapabilitiesKey]
  if (!isObject(capabilities)) {
    return rejected(id, invalidEnvelope(`Invalid params: _meta["${clientCapabilitiesKey}"] is required`))
  }
  const clientInfo = meta[clientInfoKey]
  if (clientInfo !== undefined && !isObject(clientInfo)) {
    return rejected(id, invalidEnvelope(`Invalid params: _meta["${clientInfoKey}"] must be an object`))
  }
  if (!options.supportedVersions.includes(claimed)) {
    return rejected(id, unsupportedVersion(claimed, options.supportedVersions))
  }

  if (options.validateHeaders) {
    const failure = checkRoutingHeaders(http.headers, method, params)
    if (failure !== undefined) return rejected(id, failure)
  }

  const key = meta[idempotencyKeyMeta]
  return {
    kind: "request",
    request: {
      id,
      method,
      params,
      protocolVersion: claimed,
      clientCapabilities: capabilities,
      idempotencyKey: typeof key === "string" ? key : undefined,
    },
  }
}

const checkRoutingHeaders = (
  headers: Headers,
  method: string,
  params: Record<string, unknown>,
): RpcFailure | undefined => {
  if (headerValue(headers, "mcp-protocol-version") === undefined) {
    return headerMismatch("(missing)", "the required MCP-Protocol-Version header is absent")
  }
  const methodHeader = headerValue(headers, "mcp-method")
  if (methodHeader === undefined) {
    return headerMismatch(
      "(missing)",
      `the body names method ${method} but the required Mcp-Method header is absent`,
    )
  }
  // Header values are case-sensitive: only surrounding whitespace is forgiven (RFC 9110 §5.5).
  if (methodHeader !== method) {
    return headerMismatch(
      methodHeader,
      `the Mcp-Method header is ${methodHeader} but the body method is ${method}`,
    )
  }
  const field = Object.hasOwn(mcpNameSource, method) ? mcpNameSource[method] : undefined
  if (field === undefined) return undefined
  const bodyValue = params[field]
  if (typeof bodyValue !== "string") return undefined
  const nameHeader = headerValue(headers, "mcp-name")
  if (nameHeader === undefined) {
    return headerMismatch(
      "(missing)",
      `the body carries params.${field} but the required Mcp-Name header is absent`,
    )
  }
  const decoded = decodeSentinel(nameHeader)
  if (decoded === undefined)
    return headerMismatch(nameHeader, "the Mcp-Name header carries an invalid Base64 value")
  if (decoded !== bodyValue) {
    return headerMismatch(
      nameHeader,
      `the Mcp-Name header is ${decoded} but the body carries params.${field}`,
    )
  }
  return undefined
}

const headerValue = (headers: Headers, name: string): string | undefined => {
  const raw = headers.get(name)
  return raw === null ? undefined : raw.replace(/^[\t ]+|[\t ]+$/g, "")
}

/** SEP-2243 lets a header carry a non-ASCII value as `=?base64?...?=`. */
const decodeSentinel = (value: string): string | undefined => {
  const match = /^=\?base64\?(.*)\?=$/i.exec(value)
  if (match === null) return value
  try {
    const binary = atob(match[1] ?? "")
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0))
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}

const rejected = (id: RequestId | null, failure: RpcFailure): Envelope => ({ kind: "rejected", id, failure })
