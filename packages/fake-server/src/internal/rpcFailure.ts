import * as Schema from "effect/Schema"
import type { Json } from "../Json.js"

/** JSON-RPC error codes the server emits. */
export const errorCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  headerMismatch: -32020,
  missingRequiredClientCapability: -32021,
  unsupportedProtocolVersion: -32022,
} as const

/**
 * A request answered with a JSON-RPC error. `httpStatus` follows the SDK's validation ladder:
 * transport-level rejections are 4xx, errors produced while handling a valid request stay in-band
 * on HTTP 200 (except -32021, which the spec pins to 400).
 */
export class RpcFailure extends Schema.TaggedError<RpcFailure>()("RpcFailure", {
  code: Schema.Number,
  message: Schema.String,
  httpStatus: Schema.Number,
  data: Schema.optional(Schema.Unknown),
}) {
  toJson(): { code: number; message: string; data?: Json } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data as Json }
  }
}

const rpcFailure = (code: number, message: string, httpStatus: number, data?: Json) =>
  new RpcFailure(data === undefined ? { code, message, httpStatus } : { code, message, httpStatus, data })

export const parseError = (message: string) => rpcFailure(errorCodes.parseError, message, 400)
export const invalidRequest = (message: string) => rpcFailure(errorCodes.invalidRequest, message, 400)
export const methodNotFound = (method: string) =>
  rpcFailure(errorCodes.methodNotFound, `Method not found: ${method}`, 404)
/** An invalid `_meta` envelope: rejected at the edge, HTTP 400. */
export const invalidEnvelope = (message: string) => rpcFailure(errorCodes.invalidParams, message, 400)
/** Invalid params of a valid request: in-band, HTTP 200. */
export const invalidParams = (message: string, data?: Json) =>
  rpcFailure(errorCodes.invalidParams, message, 200, data)
/** The error a tool's outcome names: in-band, HTTP 200. */
export const toolError = (error: { readonly code: number; readonly message: string; readonly data?: Json }) =>
  rpcFailure(error.code, error.message, 200, error.data)
export const headerMismatch = (header: string, body: string) =>
  rpcFailure(errorCodes.headerMismatch, `Bad Request: the request headers and body disagree: ${body}`, 400, {
    mismatch: { header, body },
  })
export const missingCapability = (requiredCapabilities: { readonly [key: string]: Json }) =>
  rpcFailure(errorCodes.missingRequiredClientCapability, "Missing required client capability", 400, {
    requiredCapabilities,
  })
export const unsupportedVersion = (requested: string | undefined, supported: readonly string[]) =>
  requested === undefined
    ? rpcFailure(
        errorCodes.unsupportedProtocolVersion,
        "Unsupported protocol version: the request did not name a protocol version",
        400,
        { supported: [...supported] },
      )
    : rpcFailure(errorCodes.unsupportedProtocolVersion, `Unsupported protocol version: ${requested}`, 400, {
        requested,
        supported: [...supported],
      })
/**
 * 2025-11-25's answer to a `tools/call` whose `task` (or its absence) the tool's
 * `execution.taskSupport` does not allow: -32601, in-band.
 */
export const taskSupportRefused = (tool: string, support: "forbidden" | "required") =>
  rpcFailure(
    errorCodes.methodNotFound,
    support === "required"
      ? `Tool ${tool} requires task augmentation (taskSupport: 'required')`
      : `Tool ${tool} does not support task augmentation (taskSupport: 'forbidden')`,
    200,
  )
