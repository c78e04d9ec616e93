/**
 * One HTTP request/answer exchange over the SDK's `StreamableHTTPClientTransport`, observed at
 * the fetch boundary. The transport does the framing (POST, the body-derived `MCP-Protocol-Version`
 * / `Mcp-Method` / `Mcp-Name` headers, JSON or SSE answers, same-origin redirects); a fetch tap
 * underneath it records what actually happened on the wire: whether fetch was called, whether it
 * failed before any response, the HTTP status and headers, and the raw text of the answer (bounded
 * by a byte limit). Classification then works from that record, never from the SDK's error
 * messages, and decoding works from the raw text, never from objects the SDK already parsed (its
 * parser silently drops `__proto__` keys).
 *
 * A fresh transport per request: the 2026-07-28 protocol is stateless, a transport is a few
 * fields, and it means answers can never be delivered to the wrong caller.
 *
 * @internal
 */
import { type JSONRPCMessage, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { makeSseReader } from "./sse.js"

/**
 * The headers of an answer, as far as classification reads them: a fetch `Headers` is one, and so
 * is a lighter lookup a request function of its own may give (see lean.ts).
 *
 * @internal
 */
export interface HeaderLookup {
  /** The value of a header named in lower case, or null when absent. */
  readonly get: (name: string) => string | null
}

/** What the fetch tap and the transport saw during one exchange. @internal */
export interface Observation {
  /** The tap's fetch was invoked at least once: the request may have left. */
  readonly fetchCalled: boolean
  /** The underlying fetch rejected before any response (last hop). */
  readonly fetchError: unknown
  /** Status of the last response (after same-origin redirects), if any. */
  readonly status: number | undefined
  readonly headers: HeaderLookup | undefined
  /** Media type essence of the last response, lower case. */
  readonly contentType: string | undefined
  /** The whole body, for every response that is not an event stream (bounded). */
  readonly bodyText: string | undefined
  /** Raw `data` of each message event, for event-stream answers. */
  readonly sseEvents: ReadonlyArray<string>
  /** The event stream ended normally (the server closed it). */
  readonly sseComplete: boolean
  /** The answer exceeded the byte limit; reading stopped. */
  readonly oversize: boolean
  /** The start of an oversize answer (its first MiB), for what can still be learnt from it. */
  readonly oversizePrefix: string | undefined
  /** Reading the body failed after the response started (connection dropped mid-answer). */
  readonly bodyError: unknown
  /** The SDK rejected `send` (HTTP error, unexpected content type, unparsable JSON, ...). */
  readonly sendError: unknown
  /** The SDK delivered a response whose id is ours (from an event stream; a whole body is `bodyText`). */
  readonly answered: boolean
  /** `ExchangeInput.timeoutMs` ran out first: whatever else is here is what came before. */
  readonly timedOut: boolean
}

/** @internal */
export interface ExchangeInput {
  readonly url: string
  /** A request; 2025-11-25 also sends notifications (no id) and answers to the server (no method). */
  readonly message: {
    readonly jsonrpc: "2.0"
    readonly id?: number | string | undefined
    readonly method?: string | undefined
    readonly params?: object | undefined
  }
  /** Endpoint headers (credentials). The SDK gives them as the base; it owns the MCP routing headers. */
  readonly headers: Readonly<Record<string, string>>
  readonly fetch: typeof globalThis.fetch
  readonly maxAnswerBytes: number
  /** 2025-11-25 only: the session to name (`Mcp-Session-Id`) and the negotiated revision. */
  readonly session?: { readonly id: string | undefined; readonly protocolVersion: string } | undefined
  /**
   * 2025-11-25 `tasks/result` while a task waits for input: the exchange ends at the first
   * request the server sends on the answer stream (its events are in the observation), or after
   * `windowMs` with no answer, rather than waiting for the task to finish.
   */
  readonly inputWindow?: { readonly windowMs: number } | undefined
  /** Told each notification the server sends on the answer's stream (progress, say). */
  readonly onNotification?:
    | ((message: { readonly method: string; readonly params?: unknown }) => void)
    | undefined
  /**
   * Ends the exchange after this long on a timer of its own (the observation says `timedOut`).
   * For callers on the live clock: a timer is far cheaper than racing a fiber against a sleep.
   */
  readonly timeoutMs?: number | undefined
}

/** A live, mutable observation; `snapshot` freezes it when the exchange ends. @internal */
export interface Recorder {
  fetchCalled: boolean
  fetchError: unknown
  status: number | undefined
  headers: HeaderLookup | undefined
  contentType: string | undefined
  bodyText: string | undefined
  sseEvents: Array<string>
  sseComplete: boolean
  oversize: boolean
  oversizePrefix: string | undefined
  bodyError: unknown
  sendError: unknown
  answered: boolean
  timedOut: boolean
}

/** @internal */
export const makeRecorder = (): Recorder => ({
  fetchCalled: false,
  fetchError: undefined,
  status: undefined,
  headers: undefined,
  contentType: undefined,
  bodyText: undefined,
  sseEvents: [],
  sseComplete: false,
  oversize: false,
  oversizePrefix: undefined,
  bodyError: undefined,
  sendError: undefined,
  answered: false,
  timedOut: false,
})

/** @internal */
export const snapshot = (recorder: Recorder): Observation => ({
  ...recorder,
  sseEvents: [...recorder.sseEvents],
})

/**
 * Thrown by the tap to stop the SDK once the observation holds everything we need. One for
 * every exchange: the SDK only rethrows it, the observation says what happened, and an Error
 * made per request would capture a stack trace on every poll.
 */
const tapStop = new Error("the fetch tap read the whole answer")

class AnswerTooLarge extends Error {}

/** @internal */
export const mediaType = (value: string | null | undefined): string | undefined =>
  value === null || value === undefined ? undefined : (value.split(";")[0] ?? "").trim().toLowerCase()

/** How much of an oversize answer is kept to look for a decided task in (see completed.ts). @internal */
export const prefixBytes = 1024 * 1024

/** Where `readBounded` says how reading went. @internal */
export type BodySink = Pick<Recorder, "bodyError" | "oversize" | "oversizePrefix">

/**
 * Reads a whole body as text, stopping (and cancelling the stream) past `limit` bytes.
 *
 * @internal
 */
export const readBounded = async (response: Response, limit: number, recorder: BodySink): Promise<string> => {
  if (response.body === null) return ""
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  const parts: Array<string> = []
  let total = 0
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>
    try {
      chunk = await reader.read()
    } catch (error) {
      recorder.bodyError = error
      throw error
    }
    if (chunk.done) break
    total += chunk.value.byteLength
    if (total > limit) {
      recorder.oversize = true
      // What was read before, and the start of the chunk that crossed the limit (it may be the
      // whole answer in one).
      const head = parts.join("")
      recorder.oversizePrefix = (
        head +
        decoder.decode(chunk.value.subarray(0, Math.max(0, prefixBytes - head.length)), { stream: true })
      ).slice(0, prefixBytes)
      // Not awaited: a peer that keeps writing must not hold us here.
      reader.cancel().catch(() => {})
      throw new AnswerTooLarge(`answer exceeds ${limit} bytes`)
    }
    parts.push(decoder.decode(chunk.value, { stream: true }))
  }
  parts.push(decoder.decode())
  return parts.join("")
}

/**
 * Passes an event stream through to the SDK while keeping the raw event data, counting bytes,
 * and telling a dropped connection (a read error) apart from our own refusal (oversize).
 */
const recordEventStream = (
  body: ReadableStream<Uint8Array>,
  limit: number,
  recorder: Recorder,
): ReadableStream<Uint8Array> => {
  const source = body.getReader()
  const decoder = new TextDecoder()
  const sse = makeSseReader()
  recorder.sseEvents = sse.events
  let total = 0
  return new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      let chunk: ReadableStreamReadResult<Uint8Array>
      try {
        chunk = await source.read()
      } catch (error) {
        recorder.bodyError = error
        controller.error(error)
        return
      }
      if (chunk.done) {
        sse.push(decoder.decode())
        sse.end()
        recorder.sseComplete = true
        controller.close()
        return
      }
      total += chunk.value.byteLength
      if (total > limit) {
        recorder.oversize = true
        source.cancel().catch(() => {})
        controller.error(new AnswerTooLarge(`answer exceeds ${limit} bytes`))
        return
      }
      sse.push(decoder.decode(chunk.value, { stream: true }))
      controller.enqueue(chunk.value)
    },
    cancel: (reason) => source.cancel(reason),
  })
}

const makeTap =
  (input: ExchangeInput, recorder: Recorder): typeof globalThis.fetch =>
  async (url, init) => {
    recorder.fetchCalled = true
    let response: Response
    try {
      response = await input.fetch(url, init)
    } catch (error) {
      recorder.fetchError = error
      throw error
    }
    recorder.fetchError = undefined
    recorder.status = response.status
    recorder.headers = response.headers
    recorder.contentType = mediaType(response.headers.get("content-type"))
    // Redirects go back to the SDK untouched: its same-origin policy decides whether to follow.
    if (response.status >= 300 && response.status < 400) return response
    if (response.ok && recorder.contentType === "text/event-stream" && response.body !== null) {
      return new Response(recordEventStream(response.body, input.maxAnswerBytes, recorder), {
        status: response.status,
        statusText: response.statusText,
        headers: { "content-type": "text/event-stream" },
      })
    }
    recorder.bodyText = await readBounded(response, input.maxAnswerBytes, recorder)
    // The whole answer is in hand: it is classified and decoded from this text and the status.
    // The SDK is stopped here rather than handed a copy to parse and validate a second time
    // (and kept out of HTTP errors, with its auth and step-up machinery we do not configure).
    throw tapStop
  }

/**
 * Sends one JSON-RPC request and calls `resolve` once, when its answer arrived, the answer
 * stream ended, the SDK gave up, or the returned function was called (timeout, interruption):
 * every outcome is in the observation. A function rather than an `AbortSignal`, because each
 * signal Node makes is a transferable object: a tenth of what a poll costs us on top of the SDK.
 *
 * @internal
 */
export const exchange = (
  input: ExchangeInput,
  recorder: Recorder,
  resolve: (observation: Observation) => void,
): (() => void) => {
  let url: URL
  try {
    url = new URL(input.url)
  } catch (error) {
    recorder.sendError = error
    resolve(snapshot(recorder))
    return () => {}
  }
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: makeTap(input, recorder),
    requestInit: { headers: { ...input.headers } },
    ...(input.session === undefined
      ? {}
      : {
          protocolVersion: input.session.protocolVersion,
          ...(input.session.id === undefined ? {} : { sessionId: input.session.id }),
        }),
    // SSE resumption (a GET with Last-Event-ID) is off: a stateless server has nothing to
    // resume, and a dropped answer stream is "no answer", which the caller handles.
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 0,
      maxReconnectionDelay: 0,
      reconnectionDelayGrowFactor: 1,
    },
  })
  let done = false
  let listening: ReturnType<typeof setTimeout> | undefined
  let deadline: ReturnType<typeof setTimeout> | undefined
  const finish = () => {
    if (done) return
    done = true
    if (listening !== undefined) clearTimeout(listening)
    if (deadline !== undefined) clearTimeout(deadline)
    resolve(snapshot(recorder))
    // Closing aborts the transport's controller, which builds a DOMException and wakes every
    // abort listener: a twentieth of a poll's CPU. A JSON answer is read whole by the tap and
    // an ended event stream holds nothing, so only an exchange still on the wire is closed.
    const nothingLeft =
      recorder.bodyText !== undefined || recorder.sseComplete || recorder.fetchError !== undefined
    if (!nothingLeft) transport.close().catch(() => {})
  }
  transport.onmessage = (message) => {
    if ("id" in message && message.id === input.message.id && ("result" in message || "error" in message)) {
      recorder.answered = true
      finish()
    } else if (!("id" in message) && "method" in message) {
      input.onNotification?.(message)
    } else if (input.inputWindow !== undefined && "id" in message && "method" in message) {
      // A request of the server's: the caller answers it on its own, later.
      finish()
    }
  }
  if (input.inputWindow !== undefined) listening = setTimeout(finish, input.inputWindow.windowMs)
  if (input.timeoutMs !== undefined) {
    deadline = setTimeout(() => {
      recorder.timedOut = true
      finish()
    }, input.timeoutMs)
  }
  // Errors the SDK reports out of band (SSE parse failures, stream drops) are also visible in
  // the observation; nothing to do here but keep the SDK from logging them.
  transport.onerror = () => {}
  transport
    .start()
    .then(() =>
      transport.send(input.message as unknown as JSONRPCMessage, {
        onRequestStreamEnd: finish,
      }),
    )
    .then(
      () => {
        // An event stream is still running; anything else ended inside `send` (a whole body
        // stops the SDK from the tap, so `send` rejects).
        const streaming =
          recorder.contentType === "text/event-stream" &&
          recorder.status !== undefined &&
          recorder.status >= 200 &&
          recorder.status < 300
        if (!streaming) finish()
      },
      (error: unknown) => {
        recorder.sendError = error
        finish()
      },
    )
  return finish
}
