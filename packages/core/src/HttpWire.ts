/**
 * The wire over Streamable HTTP: JSON-RPC 2.0 framed by the official SDK's
 * `StreamableHTTPClientTransport`, spoken statelessly (protocol revision 2026-07-28), every
 * answer decoded with Effect Schema and every failure classified (see `Wire`).
 *
 * It never routes `tools/call` through the SDK's `Client`, which rejects `resultType: "task"` and
 * drops the task id. Runs wherever `fetch` exists: no `node:*` import, no `Buffer`.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { settle } from "./internal/wire/classify.js"
import * as Envelope from "./internal/wire/envelope.js"
import { exchange, makeRecorder } from "./internal/wire/exchange.js"
import * as Protocol from "./internal/wire/protocol.js"
import * as Json from "./Json.js"
import {
  type CallAnswer,
  type HttpWireOptions,
  idempotencyKeyMeta,
  MalformedAnswer,
  NoAnswer,
  NotSent,
  type ServerEndpoint,
  type ToolInfo,
  Wire,
  type WireError,
} from "./Wire.js"

/** @since 0.1.0 */
export const defaultRequestTimeout: Duration.Duration = Duration.seconds(30)

/** @since 0.1.0 */
export const defaultMaxAnswerBytes = 16 * 1024 * 1024

/** `tools/list` pages followed at most; a server that keeps handing out cursors is malformed. */
const maxToolPages = 1000

const endpointHeaders = (server: ServerEndpoint): Effect.Effect<Readonly<Record<string, string>>> => {
  if (server.headers === undefined) return Effect.succeed({})
  return Effect.suspend(() => {
    const headers = server.headers?.() ?? {}
    return Effect.isEffect(headers) ? headers : Effect.succeed(headers)
  })
}

const malformed =
  (method: string) =>
  <A>(decoded: Either.Either<A, string>): Effect.Effect<A, MalformedAnswer> =>
    Either.isRight(decoded)
      ? Effect.succeed(decoded.right)
      : Effect.fail(new MalformedAnswer({ method, reason: decoded.left }))

/**
 * Builds the wire. Each request uses a fresh SDK transport (the protocol is stateless); request
 * ids are unique per wire.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: HttpWireOptions = {}): Effect.Effect<Wire> =>
  Effect.sync(() => {
    const timeout = Duration.decode(options.requestTimeout ?? defaultRequestTimeout)
    const limits: Json.JsonLimits = {
      maxBytes: options.maxAnswerBytes ?? defaultMaxAnswerBytes,
      maxDepth: Json.defaultResultLimits.maxDepth,
    }
    const clientInfo = options.clientInfo ?? Envelope.defaultClientInfo
    // Looked up per request, so a fetch installed later (a test's interceptor) is honoured.
    const fetch: typeof globalThis.fetch = (input, init) => (options.fetch ?? globalThis.fetch)(input, init)
    let lastId = 0

    const rpc = (
      server: ServerEndpoint,
      method: string,
      params: Json.JsonObject,
      extraMeta?: Json.JsonObject,
    ): Effect.Effect<Json.JsonObject, WireError> =>
      Effect.gen(function* () {
        lastId += 1
        const id = lastId
        const recorder = makeRecorder()
        const message = Envelope.request(id, method, params, clientInfo, extraMeta)
        // The credential lookup is inside the timeout: a lookup that hangs is a request not sent.
        const observed = yield* endpointHeaders(server).pipe(
          Effect.flatMap((headers) =>
            Effect.promise((signal) =>
              exchange(
                { url: server.url, message, headers, fetch, maxAnswerBytes: limits.maxBytes },
                recorder,
                signal,
              ),
            ),
          ),
          Effect.timeoutOption(timeout),
        )
        if (Option.isNone(observed)) {
          const after = Duration.format(timeout)
          return yield* recorder.fetchCalled
            ? new NoAnswer({ method, reason: `no answer within ${after}` })
            : new NotSent({ method, reason: `timed out after ${after} before sending` })
        }
        const now = yield* Clock.currentTimeMillis
        return yield* settle(observed.value, { method, id, now, limits })
      })

    const callTool: Wire["callTool"] = (server, request) => {
      const method = "tools/call"
      const params: Record<string, Json.JsonValue> = { name: request.name, arguments: request.arguments }
      if (request.inputResponses !== undefined) params.inputResponses = request.inputResponses
      if (request.requestState !== undefined) params.requestState = request.requestState
      return rpc(server, method, params, { [idempotencyKeyMeta]: request.idempotencyKey }).pipe(
        Effect.flatMap((result) => {
          const decoded = Protocol.decodeCallAnswer(result)
          if (Either.isRight(decoded)) return Effect.succeed<CallAnswer>(decoded.right)
          // A task the server announced is never thrown away, even when its handle is malformed.
          const taskId =
            result.resultType === "task" && typeof result.taskId === "string" ? result.taskId : undefined
          return Effect.fail(
            new MalformedAnswer(
              taskId === undefined
                ? { method, reason: decoded.left }
                : { method, reason: decoded.left, taskId },
            ),
          )
        }),
      )
    }

    const listTools: Wire["listTools"] = (server) =>
      Effect.gen(function* () {
        const method = "tools/list"
        const all: Array<ToolInfo> = []
        const seen = new Set<string>()
        let cursor: string | undefined
        for (let page = 0; page < maxToolPages; page++) {
          const result = yield* rpc(server, method, cursor === undefined ? {} : { cursor })
          const decoded = yield* malformed(method)(Protocol.decodeToolsPage(result))
          all.push(...decoded.tools)
          if (decoded.nextCursor === undefined) return all
          if (seen.has(decoded.nextCursor)) {
            return yield* new MalformedAnswer({ method, reason: "tools/list repeated a cursor" })
          }
          seen.add(decoded.nextCursor)
          cursor = decoded.nextCursor
        }
        return yield* new MalformedAnswer({
          method,
          reason: `tools/list did not end within ${maxToolPages} pages`,
        })
      })

    return Wire.of({
      discover: (server) =>
        rpc(server, "server/discover", {}).pipe(
          Effect.flatMap((result) => malformed("server/discover")(Protocol.decodeDiscover(result))),
        ),
      listTools,
      callTool,
      getTask: (server, taskId) =>
        rpc(server, "tasks/get", { taskId }).pipe(
          Effect.flatMap((result) => malformed("tasks/get")(Protocol.decodeTaskState(result, taskId))),
        ),
      updateTask: (server, taskId, inputResponses) =>
        rpc(server, "tasks/update", { taskId, inputResponses }).pipe(
          Effect.flatMap((result) => malformed("tasks/update")(Protocol.decodeAck(result))),
        ),
      cancelTask: (server, taskId) =>
        rpc(server, "tasks/cancel", { taskId }).pipe(
          Effect.flatMap((result) => malformed("tasks/cancel")(Protocol.decodeAck(result))),
        ),
    })
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: HttpWireOptions = {}): Layer.Layer<Wire> => Layer.effect(Wire, make(options))
