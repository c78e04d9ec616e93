/**
 * The wire over Streamable HTTP: JSON-RPC 2.0 framed by the official SDK's
 * `StreamableHTTPClientTransport`, spoken statelessly (protocol revision 2026-07-28), every
 * answer decoded with Effect Schema and every failure classified (see `Wire`).
 *
 * It never routes `tools/call` through the SDK's `Client`, which rejects `resultType: "task"` and
 * drops the task id. Runs wherever `fetch` exists: no `node:*` import, no `Buffer`.
 *
 * Servers of the 2025-11-25 generation (`initialize`, sessions, `CreateTaskResult`,
 * `tasks/result`) are spoken to in theirs: each endpoint's generation is learnt from its first
 * answer and remembered, and requests about a task go the way its row says it was created.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as LiveClock from "./internal/liveClock.js"
import * as Adapter from "./internal/wire/adapter.js"
import { classify } from "./internal/wire/classify.js"
import { makeRecorder, type Observation, prefixBytes } from "./internal/wire/exchange.js"
import * as Generation from "./internal/wire/generation.js"
import * as Lean from "./internal/wire/lean.js"
import * as Listen from "./internal/wire/listen.js"
import { fromRpc, type Rpc } from "./internal/wire/methods.js"
import * as V2025 from "./internal/wire/wire2025.js"
import * as Json from "./Json.js"
import { type AdapterOptions, type ServerEndpoint, Wire } from "./Wire.js"

/**
 * Options of the HTTP wire: those of every adapter (timeout, answer size, client info and
 * capabilities; defaults in `Wire.defaults`), and the fetch to use.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options extends AdapterOptions {
  /** The fetch to use (tests inject an in-process server here); defaults to `globalThis.fetch`. */
  readonly fetch?: typeof globalThis.fetch | undefined
  /**
   * Sends the stateless requests whose answer is read whole (`tasks/get`, `tools/call`, ...):
   * a runtime's faster client than fetch (`@mcp-handles/client` gives Node's). Defaults to one
   * over `fetch`. Whatever it passes on (an event stream, a redirect), and every 2025-11-25
   * request, goes through `fetch`.
   */
  readonly request?: Request | undefined
}

/**
 * The headers of an answer, as the wire reads them (a fetch `Headers` is one).
 *
 * @since 0.6.0
 * @category models
 */
export interface HeaderLookup {
  /** The value of the header named `name` (lower case), or null when it is absent. */
  readonly get: (name: string) => string | null
}

/**
 * One request for `Options.request`: a POST of `body` (JSON) to `url` with exactly `headers`
 * (names in lower case), reading at most `maxBytes` of the answer.
 *
 * @since 0.6.0
 * @category models
 */
export interface RequestInput {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly maxBytes: number
}

/**
 * What became of a request, as fetch would have told it:
 *
 * - `Failed`: no response at all; `error` as the client gave it, its `code` (`ECONNREFUSED`,
 *   `ECONNRESET`, ...) on it or on its `cause`, which decides whether it may have been sent.
 * - `Answered`: any response but a redirect or a 2xx `text/event-stream`, its body read whole as
 *   UTF-8 `text`; past `maxBytes`, reading stops and `oversizePrefix` holds the first MiB; a
 *   connection lost while reading is `bodyError`.
 * - `Passed`: a redirect (3xx) or a 2xx `text/event-stream`, unread, as a fetch `Response`: the
 *   wire's SDK path takes it from there.
 *
 * @since 0.6.0
 * @category models
 */
export type RequestOutcome =
  | { readonly _tag: "Failed"; readonly error: unknown }
  | {
      readonly _tag: "Answered"
      readonly status: number
      readonly headers: HeaderLookup
      readonly text?: string | undefined
      readonly oversizePrefix?: string | undefined
      readonly bodyError?: unknown
    }
  | { readonly _tag: "Passed"; readonly response: Response }

/**
 * A request function for `Options.request`: sends `input`, calls `done` once with the outcome,
 * and returns a function that aborts the request (after which `done` need not be called).
 *
 * @since 0.6.0
 * @category models
 */
export type Request = (input: RequestInput, done: (outcome: RequestOutcome) => void) => () => void

/**
 * The size of `oversizePrefix` in a `RequestOutcome`: what is kept of an answer over the limit.
 *
 * @since 0.6.0
 * @category constants
 */
export const oversizePrefixBytes: number = prefixBytes

/**
 * The server's own messages on an answer stream, each parsed and validated as JSON; what is not
 * a JSON object is left out (it cannot be a request or a notification).
 */
const messagesOf = (observation: Observation, limits: Json.JsonLimits) =>
  Effect.map(
    Effect.forEach(observation.sseEvents, (text) =>
      Effect.option(Json.parse("server message", text, limits)),
    ),
    (parsed) =>
      parsed.flatMap((value) => {
        if (Option.isNone(value)) return []
        const message = value.value
        return message !== null && typeof message === "object" && !Array.isArray(message)
          ? [message as Json.JsonObject]
          : []
      }),
  )

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
export const make = (options: Options = {}): Effect.Effect<Wire> =>
  Effect.sync(() => {
    const adapter = Adapter.make(options)
    const timeoutMs = Duration.toMillis(adapter.timeout)
    // Looked up per request, so a fetch installed later (a test's interceptor) is honoured.
    const fetch: typeof globalThis.fetch = (input, init) => (options.fetch ?? globalThis.fetch)(input, init)
    const request = options.request ?? Lean.overFetch(fetch)

    const send: V2025.Send = (server, message, session, inputWindow, onNotification) =>
      Effect.gen(function* () {
        const method = "method" in message ? message.method : "answer to the server"
        const isRequest = "id" in message && "method" in message
        const recorder = makeRecorder()
        const exchanged = (headers: Readonly<Record<string, string>>, timeoutMs?: number) =>
          Effect.async<Observation>((resume) => {
            const stop = Lean.leanExchange(
              {
                url: server.url,
                message,
                headers,
                fetch,
                maxAnswerBytes: adapter.limits.maxBytes,
                session,
                inputWindow,
                timeoutMs,
                onNotification,
              },
              request,
              recorder,
              (observation) => resume(Effect.succeed(observation)),
            )
            return Effect.sync(stop)
          })
        const observed = yield* Effect.clockWith((clock) =>
          clock === LiveClock.liveClock && server.headers === undefined && LiveClock.timerFits(timeoutMs)
            ? // The common case: the exchange's own timer, no fiber raced against a sleep.
              Effect.map(exchanged({}, timeoutMs), (observation) =>
                observation.timedOut ? Option.none() : Option.some(observation),
              )
            : // A test clock decides the timeout, and a credential lookup that hangs is a request
              // not sent: both under Effect's timeout.
              Effect.timeoutOption(
                Effect.flatMap(endpointHeaders(server), (headers) => exchanged(headers)),
                adapter.timeout,
              ),
        )
        if (Option.isNone(observed)) return yield* adapter.timedOut(method, recorder.fetchCalled)
        // 2025-11-25: a 404 to a request naming a session says the session is gone.
        if (session?.id !== undefined && observed.value.status === 404) {
          return yield* new V2025.SessionGone({ method })
        }
        const sessionId = observed.value.headers?.get("mcp-session-id") ?? undefined
        const { status } = observed.value
        const accepted = status !== undefined && status >= 200 && status < 300
        // A notification or an answer to the server: accepted (202) is all there is to it.
        if (!isRequest && accepted) return { result: {}, sessionId }
        if (
          inputWindow !== undefined &&
          accepted &&
          !observed.value.answered &&
          observed.value.bodyText === undefined
        ) {
          const serverMessages = yield* messagesOf(observed.value, adapter.limits)
          return { result: {}, sessionId, stopped: true as const, serverMessages }
        }
        const now = yield* Clock.currentTimeMillis
        const result = yield* classify(observed.value, {
          method,
          id: "id" in message && typeof message.id === "number" ? message.id : 0,
          now,
          limits: adapter.limits,
        })
        return { result, sessionId }
      })

    const rpc: Rpc = (server, method, params, extraMeta, onNotification) =>
      send(server, adapter.request(method, params, extraMeta), undefined, undefined, onNotification).pipe(
        Effect.catchTag("SessionGone", () => Effect.die("a stateless request named no session")),
        Effect.map((sent) => sent.result),
      )

    // The generation switch: each endpoint is spoken to in the generation it answers to.
    // subscriptions/listen holds its own stream open (see listen.ts).
    const openListen = Listen.opener(adapter, fetch, endpointHeaders)
    return Generation.make(fromRpc(rpc, options, openListen), V2025.make(send, options))
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<Wire> => Layer.effect(Wire, make(options))
