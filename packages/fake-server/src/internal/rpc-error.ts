import type { Json } from "../json.js"

/** JSON-RPC error codes the server emits. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const

/**
 * A request answered with a JSON-RPC error. `httpStatus` follows the SDK's validation ladder:
 * transport-level rejections are 4xx, errors produced while handling a valid request stay in-band
 * on HTTP 200 (except -32021, which the spec pins to 400).
 */
export class RpcFailure {
  readonly _tag = "RpcFailure"
  constructor(
    readonly code: number,
    readonly message: string,
    readonly httpStatus: number,
    readonly data?: Json,
  ) {}

  toJson(): { code: number; message: string; data?: Json } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data }
  }
}

export const parseError = (message: string) => new RpcFailure(ErrorCode.ParseError, message, 400)
export const invalidRequest = (message: string) => new RpcFailure(ErrorCode.InvalidRequest, message, 400)
export const methodNotFound = (method: string) =>
  new RpcFailure(ErrorCode.MethodNotFound, `Method not found: ${method}`, 404)
/** An invalid `_meta` envelope: rejected at the edge, HTTP 400. */
export const invalidEnvelope = (message: string) => new RpcFailure(ErrorCode.InvalidParams, message, 400)
/** Invalid params of a valid request: in-band, HTTP 200. */
export const invalidParams = (message: string, data?: Json) =>
  new RpcFailure(ErrorCode.InvalidParams, message, 200, data)
export const headerMismatch = (header: string, body: string) =>
  new RpcFailure(
    ErrorCode.HeaderMismatch,
    `Bad Request: the request headers and body disagree: ${body}`,
    400,
    {
      mismatch: { header, body },
    },
  )
export const missingCapability = (requiredCapabilities: { readonly [key: string]: Json }) =>
  new RpcFailure(ErrorCode.MissingRequiredClientCapability, "Missing required client capability", 400, {
    requiredCapabilities,
  })
export const unsupportedVersion = (requested: string, supported: readonly string[]) =>
  new RpcFailure(ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${requested}`, 400, {
    requested,
    supported: [...supported],
  })
