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
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { settle } from "./internal/wire/classify.js"
import * as Envelope from "./internal/wire/envelope.js"
import { exchange, makeRecorder } from "./internal/wire/exchange.js"
import { fromRpc, type Rpc } from "./internal/wire/methods.js"
import * as Json from "./Json.js"
import { type HttpWireOptions, NoAnswer, NotSent, type ServerEndpoint, Wire } from "./Wire.js"

/** @since 0.1.0 */
export const defaultRequestTimeout: Duration.Duration = Duration.seconds(30)

/** @since 0.1.0 */
export const defaultMaxAnswerBytes = 16 * 1024 * 1024

const endpointHeaders = (server: ServerEndpoint): Effect.Effect<Readonly<Record<string, string>>> => {
  if (server.headers === undefined) return Effect.succeed({})
  return Effect.suspend(() => {
    const headers = server.headers?.() ?? {}
    return Effect.isEffect(headers) ? headers : Effect.succeed(headers)
  })
}

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

    const rpc: Rpc = (server, method, params, extraMeta) =>
      Effect.gen(function* () {
        lastId += 1
        const id = lastId
        const recorder = makeRecorder()
        const message = Envelope.request(
          id,
          method,
          params,
          clientInfo,
          extraMeta,
          options.clientCapabilities,
        )
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

    return fromRpc(rpc)
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: HttpWireOptions = {}): Layer.Layer<Wire> => Layer.effect(Wire, make(options))
