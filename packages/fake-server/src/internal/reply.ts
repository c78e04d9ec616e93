/**
 * A handled request on its way out: the shapes a handler's answer takes before it is written as
 * HTTP (a JSON-RPC message, a stream, a held answer), and what the ledger records of it.
 */
import type { Fault } from "../Config.js"
import type { Json } from "../Json.js"
import type * as Ledger from "../Ledger.js"
import type { Answer, HandlerResult, Held } from "./context.js"
import type { RequestId } from "./envelope.js"
import { distort } from "./wrongShape.js"

/** What the ledger records of an answer. */
export type LogFields = Pick<Ledger.Request, "httpStatus" | "outcome" | "errorCode">

/** A held answer that never left: the client went away, or the server restarted under it. */
export const cutLog = (client: AbortSignal | undefined): LogFields => ({
  httpStatus: 0,
  outcome: client?.aborted === true ? "abandoned" : "dropped",
  errorCode: null,
})

export const eventStreamHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache" }

/** A handled request, ready to be written as HTTP. */
export type Handled =
  | { readonly kind: "accepted" }
  | {
      readonly kind: "http"
      readonly status: number
      readonly headers: Readonly<Record<string, string>>
      readonly body: string
    }
  | { readonly kind: "stream"; readonly stream: ReadableStream<Uint8Array> }
  | RpcAnswer
  | {
      readonly kind: "held"
      readonly holdMs: number
      readonly answer: RpcAnswer
      readonly progress: Held["progress"]
    }

/** A JSON-RPC message answering the request. */
export interface RpcAnswer {
  readonly kind: "rpc"
  readonly id: RequestId | null
  readonly message: Record<string, Json>
  readonly status: number
  readonly errorCode: number | null
  readonly launch: Ledger.Launch | undefined
}

export const fromHandler = (handled: HandlerResult, id: RequestId | null): Handled => {
  switch (handled.kind) {
    case "http":
    case "stream":
      return handled
    case "held":
      return {
        kind: "held",
        holdMs: handled.holdMs,
        answer: fromAnswer(handled.answer, id),
        progress: handled.progress,
      }
    default:
      return fromAnswer(handled, id)
  }
}

const fromAnswer = (handled: Answer, id: RequestId | null): RpcAnswer => {
  switch (handled.kind) {
    case "result":
      return {
        kind: "rpc",
        id,
        message: { jsonrpc: "2.0", id, result: handled.result },
        status: 200,
        errorCode: null,
        launch: handled.launch,
      }
    case "failure":
      return {
        kind: "rpc",
        id,
        message: { jsonrpc: "2.0", id, error: handled.failure.toJson() },
        status: handled.failure.httpStatus,
        errorCode: handled.failure.code,
        launch: handled.launch,
      }
  }
}

export const toResponse = (
  handled: Exclude<Handled, { kind: "held" }>,
  wrongShape: Extract<Fault, { kind: "wrong-shape" }> | undefined,
): { response: Response; log: LogFields } => {
  switch (handled.kind) {
    case "accepted":
      return {
        response: new Response(null, { status: 202 }),
        log: { httpStatus: 202, outcome: "result", errorCode: null },
      }
    case "http":
      return {
        response: new Response(handled.body, { status: handled.status, headers: handled.headers }),
        log: { httpStatus: handled.status, outcome: "error", errorCode: null },
      }
    case "stream":
      return {
        response: new Response(handled.stream, { status: 200, headers: eventStreamHeaders }),
        log: { httpStatus: 200, outcome: "stream", errorCode: null },
      }
    case "rpc": {
      const message = wrongShape === undefined ? handled.message : distort(handled.message, wrongShape.shape)
      return {
        response: new Response(JSON.stringify(message), {
          status: handled.status,
          headers: { "content-type": "application/json" },
        }),
        log: {
          httpStatus: handled.status,
          outcome: handled.errorCode === null ? "result" : "error",
          errorCode: handled.errorCode,
        },
      }
    }
  }
}

export const statusText = (status: number): string =>
  ({
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
  })[status] ?? `HTTP ${status}`
