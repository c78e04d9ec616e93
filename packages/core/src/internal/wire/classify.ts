/**
 * Turns what one exchange observed into either the raw JSON-RPC `result` object or exactly one
 * classified wire error. This is where "not sent" is told apart from "sent, no usable answer":
 * the state machine may retry the first freely, while the second leaves a `tools/call` in doubt.
 * When unsure, we say "no answer": claiming "not sent" for a request that did reach the server
 * could launch a tool twice.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { RpcError } from "../../HandleRecord.js"
import * as Json from "../../Json.js"
import {
  MalformedAnswer,
  NoAnswer,
  NotSent,
  RpcErrorAnswer,
  ServerBusy,
  Unauthorized,
  type WireError,
} from "../../Wire.js"
import { completedTaskOf } from "./completed.js"
import type { Observation } from "./exchange.js"

/**
 * Error codes (Node/undici, Bun) that only occur before a connection exists, so before a byte of
 * the request was written: DNS failures, refused or unroutable connections, connect timeouts,
 * TLS certificate rejections.
 */
const notSentCodes: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EAI_FAIL",
  "EAI_NODATA",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "ERR_INVALID_URL",
  // Bun
  "ConnectionRefused",
  "FailedToOpenSocket",
])

/** Every `code` (and message) along an error's `cause` chain, including AggregateError members. */
const collect = (error: unknown, codes: Array<string>, messages: Array<string>, depth = 0): void => {
  if (depth > 8 || error === null || typeof error !== "object") return
  const record = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
  if (typeof record.code === "string") codes.push(record.code)
  if (typeof record.message === "string") messages.push(record.message)
  if (Array.isArray(record.errors))
    for (const inner of record.errors) collect(inner, codes, messages, depth + 1)
  collect(record.cause, codes, messages, depth + 1)
}

/**
 * A fetch that rejected before any response. Only a failure that can only happen before
 * connecting is `NotSent`; a reset, a socket closed by the peer, or an error without a code (a
 * browser's opaque "Failed to fetch") may have happened after the request was written.
 *
 * @internal
 */
export const classifyFetchError = (method: string, error: unknown): NotSent | NoAnswer => {
  const codes: Array<string> = []
  const messages: Array<string> = []
  collect(error, codes, messages)
  const described = [...new Set([...codes, ...messages])].join("; ") || String(error)
  // The fetch standard's blocked ports ("bad port") are refused before any connection.
  const blockedPort = messages.includes("bad port")
  if (
    (codes.length > 0 && codes.every((code) => notSentCodes.has(code))) ||
    (codes.length === 0 && blockedPort)
  ) {
    return new NotSent({ method, reason: `request not sent: ${described}` })
  }
  return new NoAnswer({
    method,
    reason: `connection failed, the request may have been delivered: ${described}`,
  })
}

/**
 * `Retry-After` as delay-seconds or an HTTP date, in milliseconds from `now`; undefined when
 * absent or unreadable.
 *
 * @internal
 */
export const retryAfterMs = (value: string | null | undefined, now: number): number | undefined => {
  if (value === null || value === undefined) return undefined
  const text = value.trim()
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000)
  const date = Date.parse(text)
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined
}

const ErrorObject = Schema.Struct({
  code: Schema.Number.pipe(Schema.int()),
  message: Schema.String,
  data: Schema.optional(Json.JsonValue),
})

const ResponseEnvelope = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.Union(Schema.Number, Schema.String, Schema.Null),
  result: Schema.optional(Json.JsonObject),
  error: Schema.optional(ErrorObject),
})

const decodeEnvelope = Schema.decodeUnknownEither(ResponseEnvelope)

/** @internal */
export const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 2000)

type Found =
  | { readonly _tag: "Result"; readonly result: Json.JsonObject }
  | { readonly _tag: "Error"; readonly error: RpcError }
  | { readonly _tag: "Invalid"; readonly reason: string; readonly completedTaskId?: string }
  | { readonly _tag: "Other" }

/**
 * Reads one JSON-RPC message from raw text. `acceptNullId` admits an error with a null id, which
 * a server sends when it could not read the request's id (HTTP 400 rejections do this).
 */
const readMessage = (
  method: string,
  id: number,
  text: string,
  limits: Json.JsonLimits,
  acceptNullId: boolean,
): Effect.Effect<Found> =>
  Effect.map(readJson(id, Json.parse(`${method} answer`, text, limits), acceptNullId), (found) => {
    // Only an answer refused for what it holds (too deep, hostile keys), not one garbled on the
    // way: that is a passing problem, and the next poll may read fine.
    if (found._tag !== "Invalid" || method !== "tasks/get" || !isJson(text)) return found
    const completedTaskId = completedTaskOf(id, text)
    return completedTaskId === undefined ? found : { ...found, completedTaskId }
  })

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

const readJson = (
  id: number,
  parsed: Effect.Effect<Json.JsonValue, Json.InvalidJson>,
  acceptNullId: boolean,
): Effect.Effect<Found> =>
  parsed.pipe(
    Effect.map((json): Found => {
      if (json === null || typeof json !== "object" || Array.isArray(json)) {
        return { _tag: "Invalid", reason: "the answer is not a JSON-RPC message object" }
      }
      const object = json as Json.JsonObject
      const isOurs = object.id === id || (acceptNullId && object.id === null && "error" in object)
      if (!isOurs) {
        return "method" in object
          ? { _tag: "Other" }
          : { _tag: "Invalid", reason: "answer to another request id" }
      }
      const envelope = decodeEnvelope(object)
      if (Either.isLeft(envelope)) {
        return { _tag: "Invalid", reason: `invalid JSON-RPC response: ${describeParseError(envelope.left)}` }
      }
      const { error, result } = envelope.right
      if (error !== undefined && result === undefined) {
        return {
          _tag: "Error",
          error: new RpcError(
            error.data === undefined
              ? { code: error.code, message: error.message }
              : { code: error.code, message: error.message, data: error.data },
          ),
        }
      }
      if (result !== undefined && error === undefined) return { _tag: "Result", result }
      return { _tag: "Invalid", reason: "a JSON-RPC response needs exactly one of result and error" }
    }),
    Effect.catchTag("InvalidJson", (invalid) =>
      Effect.succeed<Found>({ _tag: "Invalid", reason: invalid.reason }),
    ),
  )

/** What `classify` needs to know of the request. @internal */
export interface ClassifyContext {
  readonly method: string
  readonly id: number
  readonly now: number
  readonly limits: Json.JsonLimits
}

/**
 * The raw `result` object of a successful exchange, or the classified error.
 *
 * | observed                                                   | error          |
 * | ---------------------------------------------------------- | -------------- |
 * | fetch never called                                         | NotSent        |
 * | fetch rejected: DNS, refused, unroutable, TLS, bad port    | NotSent        |
 * | fetch rejected otherwise (reset, socket closed, no code)   | NoAnswer       |
 * | HTTP 429, 503                                              | ServerBusy     |
 * | HTTP 401, 403                                              | Unauthorized   |
 * | HTTP 408, 5xx other than 503                               | NoAnswer       |
 * | answer over the byte limit                                 | MalformedAnswer|
 * | JSON-RPC error for our id (any 2xx, or any other 3xx/4xx)  | RpcErrorAnswer |
 * | other 3xx/4xx without a JSON-RPC error for our id          | MalformedAnswer|
 * | 2xx with a content type other than JSON or event stream    | MalformedAnswer|
 * | 2xx: body not JSON, `__proto__`, wrong envelope, wrong id  | MalformedAnswer|
 * | 2xx: connection dropped while reading the answer           | NoAnswer       |
 * | 2xx event stream closed without our answer                 | NoAnswer       |
 *
 * @internal
 */
export const classify = (
  observation: Observation,
  context: ClassifyContext,
): Effect.Effect<Json.JsonObject, WireError> =>
  Effect.gen(function* () {
    const { method, id } = context
    const status = observation.status
    if (!observation.fetchCalled) {
      const cause = observation.sendError === undefined ? "" : `: ${String(observation.sendError)}`
      return yield* new NotSent({ method, reason: `request not sent${cause}` })
    }
    if (status === undefined) return yield* classifyFetchError(method, observation.fetchError)
    if (status === 429 || status === 503) {
      const retryAfter = retryAfterMs(observation.headers?.get("retry-after"), context.now)
      return yield* new ServerBusy(
        retryAfter === undefined ? { method, status } : { method, status, retryAfterMs: retryAfter },
      )
    }
    if (status === 401 || status === 403) return yield* new Unauthorized({ method, status })
    if (status === 408 || status >= 500) {
      return yield* new NoAnswer({
        method,
        reason: `HTTP ${status}: the server may have processed the request`,
      })
    }
    if (observation.oversize) {
      const reason = `answer exceeds ${context.limits.maxBytes} bytes`
      const taskId =
        method === "tasks/get" && observation.oversizePrefix !== undefined
          ? completedTaskOf(id, observation.oversizePrefix)
          : undefined
      return yield* new MalformedAnswer(
        taskId === undefined ? { method, reason } : { method, reason, taskId, completed: true },
      )
    }
    const ok = status >= 200 && status < 300
    if (
      ok &&
      observation.contentType !== "application/json" &&
      observation.contentType !== "text/event-stream"
    ) {
      return yield* new MalformedAnswer({
        method,
        reason: `unexpected content type ${JSON.stringify(observation.contentType ?? "")} (HTTP ${status})`,
      })
    }
    const candidates =
      observation.contentType === "text/event-stream" && ok
        ? observation.sseEvents
        : observation.bodyText === undefined
          ? []
          : [observation.bodyText]
    let invalid: string | undefined
    let completedTaskId: string | undefined
    for (const text of candidates) {
      const found = yield* readMessage(method, id, text, context.limits, !ok)
      if (found._tag === "Result") {
        if (!ok) break
        return found.result
      }
      if (found._tag === "Error") return yield* new RpcErrorAnswer({ method, error: found.error })
      if (found._tag === "Invalid") {
        invalid ??= found.reason
        completedTaskId ??= found.completedTaskId
      }
    }
    if (!ok) {
      return yield* new MalformedAnswer({
        method,
        reason: `HTTP ${status} without a JSON-RPC error for the request`,
      })
    }
    if (observation.bodyError !== undefined) {
      const { reason } = classifyFetchError(method, observation.bodyError)
      return yield* new NoAnswer({
        method,
        reason: `connection dropped while reading the answer (${reason})`,
      })
    }
    if (invalid !== undefined) {
      return yield* new MalformedAnswer(
        completedTaskId === undefined
          ? { method, reason: invalid }
          : { method, reason: invalid, taskId: completedTaskId, completed: true },
      )
    }
    if (observation.contentType === "text/event-stream") {
      return yield* new NoAnswer({ method, reason: "the answer stream ended without an answer" })
    }
    return yield* new MalformedAnswer({ method, reason: "the answer holds no JSON-RPC response" })
  })

/**
 * The raw `result` of a message a non-HTTP transport (stdio) already parsed, or the classified
 * error. The message is re-checked as JSON (plain objects, depth and size limits) since the
 * transport's parser is not ours.
 *
 * @internal
 */
export const classifyMessage = (
  message: unknown,
  context: ClassifyContext,
): Effect.Effect<Json.JsonObject, WireError> =>
  Effect.gen(function* () {
    const { method, id } = context
    const found = yield* readJson(id, Json.validate(`${method} answer`, message, context.limits), false)
    switch (found._tag) {
      case "Result":
        return found.result
      case "Error":
        return yield* new RpcErrorAnswer({ method, error: found.error })
      case "Invalid":
        return yield* new MalformedAnswer({ method, reason: found.reason })
      case "Other":
        return yield* new MalformedAnswer({ method, reason: "not a JSON-RPC response" })
    }
  })
