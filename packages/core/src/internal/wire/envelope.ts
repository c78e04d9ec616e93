/**
 * The stateless 2026-07-28 request envelope: every request names the protocol revision, the
 * client and its capabilities in `params._meta`, since there is no `initialize` to remember them.
 * Declaring the Tasks extension on every request is what allows a server to answer with a task.
 *
 * @internal
 */
import type { JsonObject } from "../../Json.js"
import { protocolVersion, tasksExtension } from "../../Wire.js"

/** @internal */
export const protocolVersionMeta = "io.modelcontextprotocol/protocolVersion"
/** @internal */
export const clientInfoMeta = "io.modelcontextprotocol/clientInfo"
/** @internal */
export const clientCapabilitiesMeta = "io.modelcontextprotocol/clientCapabilities"

/** @internal */
export interface ClientInfo {
  readonly name: string
  readonly version: string
}

/** @internal */
export interface RpcRequest {
  readonly jsonrpc: "2.0"
  readonly id: number
  readonly method: string
  readonly params: JsonObject
}

const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === "object" && !Array.isArray(value)

/**
 * The caller's capabilities with the Tasks extension declared: every extension the caller
 * declared is kept (a server may offer it only to clients that say so), and its own settings for
 * the Tasks extension too, if it gave any.
 *
 * @internal
 */
export const withTasksExtension = (capabilities: JsonObject): JsonObject => {
  const declared = isObject(capabilities.extensions) ? capabilities.extensions : {}
  const tasks = declared[tasksExtension]
  return {
    ...capabilities,
    extensions: { ...declared, [tasksExtension]: isObject(tasks) ? tasks : {} },
  }
}

/**
 * A JSON-RPC request with the envelope in `params._meta`. `extraMeta` adds keys (the idempotency
 * key of `tools/call`); it cannot replace the envelope's own keys, but for the protocol version,
 * which the version negotiation chooses per endpoint (see negotiation.ts).
 *
 * @internal
 */
export const request = (
  id: number,
  method: string,
  params: JsonObject,
  clientInfo: ClientInfo,
  extraMeta: JsonObject = {},
  capabilities: JsonObject = {},
): RpcRequest => {
  // The one envelope key `extraMeta` may set: the version the negotiation chose for the endpoint.
  const version = extraMeta[protocolVersionMeta]
  return {
    jsonrpc: "2.0",
    id,
    method,
    params: {
      ...params,
      _meta: {
        ...extraMeta,
        [protocolVersionMeta]: typeof version === "string" ? version : protocolVersion,
        [clientInfoMeta]: { name: clientInfo.name, version: clientInfo.version },
        [clientCapabilitiesMeta]: withTasksExtension(capabilities),
      },
    },
  }
}
