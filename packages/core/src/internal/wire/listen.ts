/**
 * `subscriptions/listen` over Streamable HTTP: one POST whose answer is an event stream that
 * stays open, carrying the acknowledgement, then `notifications/tasks` for the agreed tasks, and
 * (when the server ends the subscription gracefully) the request's own result.
 *
 * The request/answer exchange (exchange.ts) waits for one answer and closes; a subscription is
 * read as it arrives instead, so it has its own small fetch here. Every message is parsed from
 * the raw text with the JSON limits and decoded with the same schemas as a `tasks/get` answer:
 * a notification is trusted no more than a poll.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Json from "../../Json.js"
import {
  type ListenEvent,
  MalformedAnswer,
  NoAnswer,
  type ServerEndpoint,
  type WireError,
} from "../../Wire.js"
import type * as Adapter from "./adapter.js"
import { classify, classifyFetchError, classifyMessage } from "./classify.js"
import { protocolVersionMeta, type RpcRequest } from "./envelope.js"
import { makeRecorder } from "./exchange.js"
import type { OpenListen } from "./methods.js"
import * as Protocol from "./protocol.js"
import { makeSseReader } from "./sse.js"

const method = "subscriptions/listen"

/** @internal */
export const acknowledged = "notifications/subscriptions/acknowledged"
/** @internal */
export const taskNotification = "notifications/tasks"
/** @internal */
export const toolsListChanged = "notifications/tools/list_changed"

/** @internal */
export interface ListenInput {
  readonly url: string
  /** The `subscriptions/listen` request, envelope included (its version names the header). */
  readonly message: RpcRequest
  /** Endpoint headers (credentials). */
  readonly headers: Readonly<Record<string, string>>
  readonly fetch: typeof globalThis.fetch
  /** Per message: a single event larger than this, or deeper, is refused. */
  readonly limits: Json.JsonLimits
  /** How long the server may take to start its answer. */
  readonly timeout: number
  /** Called on `notifications/tools/list_changed` (asked for with `toolsListChanged`). */
  readonly onToolsListChanged?: (() => void) | undefined
}

type Item =
  | { readonly _tag: "Event"; readonly event: ListenEvent }
  | { readonly _tag: "End" }
  | { readonly _tag: "Skip" }

const isObject = (value: unknown): value is Json.JsonObject =>
  value !== null && typeof value === "object" && !Array.isArray(value)

/**
 * The task a refused message was about (its JSON holds a hostile key, or is too deep), so that
 * the task is polled instead: only a string is read from it, nothing of it is kept.
 */
const taskIdOf = (text: string): string | undefined => {
  try {
    const message: unknown = JSON.parse(text)
    if (!isObject(message) || message.method !== taskNotification || !isObject(message.params))
      return undefined
    const taskId = message.params.taskId
    return typeof taskId === "string" ? taskId : undefined
  } catch {
    return undefined
  }
}

/** One message of the stream: an event for the caller, the graceful end, or something to ignore. */
const readEvent = (input: ListenInput, text: string): Effect.Effect<Item, WireError> =>
  Effect.gen(function* () {
    const parsed = yield* Effect.either(Json.parse(`${method} message`, text, input.limits))
    if (Either.isLeft(parsed)) {
      const taskId = taskIdOf(text)
      return { _tag: "Event", event: { _tag: "Malformed", taskId, reason: parsed.left.reason } }
    }
    const message = parsed.right
    if (!isObject(message)) return { _tag: "Skip" }
    if (typeof message.method !== "string") {
      if (message.id !== input.message.id) return { _tag: "Skip" }
      // The subscription's own answer: a result ends it gracefully, an error fails it.
      const now = yield* Clock.currentTimeMillis
      yield* classifyMessage(message, { method, id: input.message.id, now, limits: input.limits })
      return { _tag: "End" }
    }
    const params = isObject(message.params) ? message.params : {}
    if (message.method === acknowledged) {
      const notifications = isObject(params.notifications) ? params.notifications : {}
      const taskIds = Array.isArray(notifications.taskIds)
        ? notifications.taskIds.filter((id): id is string => typeof id === "string")
        : []
      return { _tag: "Event", event: { _tag: "Acknowledged", taskIds } }
    }
    if (message.method === toolsListChanged) {
      yield* Effect.sync(() => input.onToolsListChanged?.())
      return { _tag: "Skip" }
    }
    if (message.method !== taskNotification) return { _tag: "Skip" }
    const taskId = typeof params.taskId === "string" ? params.taskId : undefined
    if (taskId === undefined) {
      return {
        _tag: "Event",
        event: { _tag: "Malformed", taskId, reason: "a task notification without taskId" },
      }
    }
    const decoded = Protocol.decodeTaskState(params, taskId)
    return Either.isRight(decoded)
      ? { _tag: "Event", event: { _tag: "Task", task: decoded.right } }
      : { _tag: "Event", event: { _tag: "Malformed", taskId, reason: decoded.left } }
  })

/** An answer that is not an event stream: an error (or an immediate end), classified as any answer. */
const notAStream = (input: ListenInput, response: Response) =>
  Effect.gen(function* () {
    const recorder = makeRecorder()
    recorder.fetchCalled = true
    recorder.status = response.status
    recorder.headers = response.headers
    recorder.contentType = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase()
    const text = yield* Effect.promise(() => response.text().catch(() => ""))
    if (text.length > input.limits.maxBytes) recorder.oversize = true
    else recorder.bodyText = text
    const now = yield* Clock.currentTimeMillis
    yield* classify(recorder, { method, id: input.message.id, now, limits: input.limits })
    return Stream.empty as Stream.Stream<ListenEvent, WireError>
  })

/** Bytes without a message: a listener that times out silent streams hears them. */
const alive: Item = { _tag: "Event", event: { _tag: "Alive" } }

/** Splits the body into messages; a run of bytes with no message in it is bounded too. */
const messages = (input: ListenInput, body: ReadableStream<Uint8Array>) => {
  const sse = makeSseReader()
  let sinceEvent = 0
  const chunks = Stream.fromReadableStream({
    evaluate: () => body,
    onError: (error) => {
      const { reason } = classifyFetchError(method, error)
      return new NoAnswer({ method, reason: `the subscription stream dropped (${reason})` })
    },
  }).pipe(Stream.decodeText())
  return chunks.pipe(
    Stream.mapConcatEffect((text) => {
      sse.push(text)
      sinceEvent = sse.events.length > 0 ? 0 : sinceEvent + text.length
      if (sinceEvent > input.limits.maxBytes) {
        return Effect.fail(
          new MalformedAnswer({ method, reason: `a message exceeds ${input.limits.maxBytes} bytes` }),
        )
      }
      if (sse.events.length === 0) return Effect.succeed([alive])
      return Effect.forEach(sse.events.splice(0), (data) => readEvent(input, data))
    }),
    // A stream that just stops, without the subscription's answer, was cut.
    Stream.concat(
      Stream.fail(new NoAnswer({ method, reason: "the subscription stream ended without its answer" })),
    ),
    Stream.takeWhile((item) => item._tag !== "End"),
    Stream.filterMap((item) => (item._tag === "Event" ? Option.some(item.event) : Option.none())),
  )
}

/**
 * Opens the subscription. The stream fails with the request's classified error when the server
 * refuses it, and with `NoAnswer` when the connection drops; it ends when the server ends the
 * subscription gracefully. Interrupting it closes the connection.
 *
 * @internal
 */
export const open = (input: ListenInput): Stream.Stream<ListenEvent, WireError> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const version = input.message.params._meta
      const protocolVersion =
        isObject(version) && typeof version[protocolVersionMeta] === "string"
          ? (version[protocolVersionMeta] as string)
          : undefined
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      const response = yield* Effect.tryPromise({
        try: () =>
          input.fetch(input.url, {
            method: "POST",
            signal: controller.signal,
            headers: {
              ...input.headers,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-method": method,
              ...(protocolVersion === undefined ? {} : { "mcp-protocol-version": protocolVersion }),
            },
            body: JSON.stringify(input.message),
          }),
        catch: (error) => classifyFetchError(method, error),
      }).pipe(
        Effect.timeoutFail({
          duration: input.timeout,
          onTimeout: () => new NoAnswer({ method, reason: `no answer within ${input.timeout} ms` }),
        }),
      )
      const contentType = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase()
      if (!response.ok || contentType !== "text/event-stream" || response.body === null) {
        return yield* notAStream(input, response)
      }
      const events: Stream.Stream<ListenEvent, WireError> = messages(input, response.body)
      return events
    }),
  )

/**
 * What an HTTP adapter hands to `fromRpc`: subscriptions opened with its request numbering,
 * limits, timeout, fetch and the endpoint's credentials.
 *
 * @internal
 */
export const opener =
  (
    adapter: Adapter.Adapter,
    fetch: typeof globalThis.fetch,
    headersOf: (server: ServerEndpoint) => Effect.Effect<Readonly<Record<string, string>>>,
  ): OpenListen =>
  (server, version, taskIds, onToolsListChanged) =>
    Stream.unwrap(
      Effect.map(headersOf(server), (headers) =>
        open({
          url: server.url,
          message: adapter.request(
            method,
            {
              notifications:
                onToolsListChanged === undefined
                  ? { taskIds: [...taskIds] }
                  : { taskIds: [...taskIds], toolsListChanged: true },
            },
            { [protocolVersionMeta]: version },
          ),
          headers,
          fetch,
          limits: adapter.limits,
          timeout: Duration.toMillis(adapter.timeout),
          onToolsListChanged,
        }),
      ),
    )
