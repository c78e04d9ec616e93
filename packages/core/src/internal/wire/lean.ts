/**
 * The lean exchange: a stateless request (no 2025-11-25 session, no input window) is sent by us,
 * not by the SDK's transport, with the very headers and body the transport would send, through a
 * `Request` function; its answer fills the same recorder, so classification is the same. An
 * answer the lean path does not read itself (an event stream, a redirect) is handed, unread, to
 * the SDK-transport exchange, which takes it from there as if it had fetched it: the request is
 * never sent twice.
 *
 * Why: per poll, the transport built two `Headers`, a combined abort signal, a fetch tap and a
 * dozen promises around one fetch; the lean path builds a plain header record and one request.
 *
 * @internal
 */
import type { Request, RequestInput } from "../../HttpWire.js"
import { protocolVersionMeta } from "./envelope.js"
import {
  type BodySink,
  type ExchangeInput,
  exchange,
  mediaType,
  type Observation,
  type Recorder,
  readBounded,
  snapshot,
} from "./exchange.js"
import { encode } from "./paramHeaders.js"

/** Whether a response is left to the SDK rather than read whole: a redirect or an event stream. @internal */
export const passes = (status: number, contentType: string | undefined): boolean =>
  (status >= 300 && status < 400) || (status >= 200 && status < 300 && contentType === "text/event-stream")

/** A `Request` over fetch: one `AbortController` per request, as the SDK's transport has. @internal */
export const overFetch =
  (fetch: typeof globalThis.fetch): Request =>
  (input, done) => {
    const controller = new AbortController()
    fetch(input.url, {
      method: "POST",
      headers: input.headers,
      body: input.body,
      signal: controller.signal,
      // As the SDK's transport asks: a redirect is passed on, and its policy decides.
      redirect: "manual",
    }).then(
      (response) => {
        if (passes(response.status, mediaType(response.headers.get("content-type")))) {
          done({ _tag: "Passed", response })
          return
        }
        const sink: BodySink = { bodyError: undefined, oversize: false, oversizePrefix: undefined }
        readBounded(response, input.maxBytes, sink).then(
          (text) => done({ _tag: "Answered", status: response.status, headers: response.headers, text }),
          () =>
            done({
              _tag: "Answered",
              status: response.status,
              headers: response.headers,
              oversizePrefix: sink.oversizePrefix,
              bodyError: sink.bodyError,
            }),
        )
      },
      (error: unknown) => done({ _tag: "Failed", error }),
    )
    return () => controller.abort()
  }

/** The transport's `Mcp-Name` sources (the SDK's `MCP_NAME_HEADER_SOURCE`). */
const nameSources: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
}

// RFC 9110 token, and a field value without what `Headers` would refuse.
const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const badValue = /[\r\n\0]/

/**
 * The headers the SDK's transport sends with `message`, as a plain record, or undefined when the
 * endpoint's headers hold something `Headers` would refuse (the transport's path reports that).
 */
const headersOf = (
  endpoint: Readonly<Record<string, string>>,
  method: string,
  version: string,
  params: object | undefined,
): Record<string, string> | undefined => {
  const headers: Record<string, string> = {}
  for (const name in endpoint) {
    const value = endpoint[name] as string
    if (!headerName.test(name) || badValue.test(value)) return undefined
    const lower = name.toLowerCase()
    const trimmed = value.trim()
    const prior = headers[lower]
    headers[lower] = prior === undefined ? trimmed : `${prior}, ${trimmed}`
  }
  headers["mcp-protocol-version"] = version
  headers["mcp-method"] = method
  const field = Object.hasOwn(nameSources, method) ? nameSources[method] : undefined
  if (field !== undefined) {
    const name = (params as Record<string, unknown> | undefined)?.[field]
    if (typeof name === "string") headers["mcp-name"] = encode(name)
  }
  headers["content-type"] = "application/json"
  const accept = headers.accept
  headers.accept =
    accept === undefined
      ? "application/json, text/event-stream"
      : [
          ...new Set([
            ...accept.split(",").map((type) => type.trim().toLowerCase()),
            "application/json",
            "text/event-stream",
          ]),
        ].join(", ")
  return headers
}

/** URLs known to parse (an endpoint's is asked on every poll; a bad one goes the transport's way). */
const parsable = new Set<string>()

/**
 * The lean request of `input`, or undefined when it takes the transport's path: a session, an
 * input window, a notification or an answer to the server, or no protocol version in the
 * envelope (the transport derives its routing headers from that).
 */
const leanInput = (input: ExchangeInput): RequestInput | undefined => {
  const message = input.message
  if (input.session !== undefined || input.inputWindow !== undefined) return undefined
  if (message.id === undefined || message.method === undefined) return undefined
  const meta = (message.params as { readonly _meta?: Record<string, unknown> } | undefined)?._meta
  const version = meta?.[protocolVersionMeta]
  if (typeof version !== "string") return undefined
  if (!parsable.has(input.url)) {
    if (!URL.canParse(input.url)) return undefined
    if (parsable.size > 1000) parsable.clear()
    parsable.add(input.url)
  }
  const headers = headersOf(input.headers, message.method, version, message.params)
  if (headers === undefined) return undefined
  return { url: input.url, headers, body: JSON.stringify(message), maxBytes: input.maxAnswerBytes }
}

/**
 * `exchange`, by the lean path when the request allows it. Same contract: `resolve` is called
 * once with everything observed, and the returned function ends the exchange early.
 *
 * @internal
 */
export const leanExchange = (
  input: ExchangeInput,
  request: Request,
  recorder: Recorder,
  resolve: (observation: Observation) => void,
): (() => void) => {
  const lean = leanInput(input)
  if (lean === undefined) return exchange(input, recorder, resolve)
  let done = false
  let deadline: ReturnType<typeof setTimeout> | undefined
  // Once the SDK's exchange has the answer, ending early is its business.
  let handedOver: (() => void) | undefined
  const settle = () => {
    if (done) return
    done = true
    if (deadline !== undefined) clearTimeout(deadline)
    resolve(snapshot(recorder))
  }
  recorder.fetchCalled = true
  const abort = request(lean, (outcome) => {
    if (done) return
    switch (outcome._tag) {
      case "Failed":
        recorder.fetchError = outcome.error
        settle()
        return
      case "Answered":
        recorder.status = outcome.status
        recorder.headers = outcome.headers
        recorder.contentType = mediaType(outcome.headers.get("content-type"))
        recorder.bodyText = outcome.text
        recorder.oversize = outcome.oversizePrefix !== undefined
        recorder.oversizePrefix = outcome.oversizePrefix
        recorder.bodyError = outcome.bodyError
        settle()
        return
      case "Passed": {
        let response: Response | undefined = outcome.response
        // The transport's first fetch is the request already made; a redirect it follows is a
        // fetch of its own.
        const replay: typeof globalThis.fetch = (url, init) => {
          if (response === undefined) return input.fetch(url, init)
          const first = response
          response = undefined
          return Promise.resolve(first)
        }
        handedOver = exchange({ ...input, fetch: replay, timeoutMs: undefined }, recorder, (observation) => {
          if (done) return
          done = true
          if (deadline !== undefined) clearTimeout(deadline)
          resolve(observation)
        })
        return
      }
    }
  })
  const stop = () => {
    if (handedOver !== undefined) {
      handedOver()
      return
    }
    if (done) return
    settle()
    abort()
  }
  // A request function may answer at once (a refused URL, a test's): then no timer is left behind.
  if (input.timeoutMs !== undefined && !done) {
    deadline = setTimeout(() => {
      recorder.timedOut = true
      stop()
    }, input.timeoutMs)
  }
  return stop
}
