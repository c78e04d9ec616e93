import type { Clock } from "../clock.js"
import type { FakeServerConfig, ToolConfig } from "../config.js"
import type { Json } from "../json.js"
import type { LaunchEntry, Ledger } from "../ledger.js"
import type { EnvelopedRequest } from "./envelope.js"
import type { Random } from "./random.js"
import type { RateLimiter } from "./rate-limiter.js"
import type { RpcFailure } from "./rpc-error.js"
import type { Subscriptions } from "./subscriptions.js"
import type { TaskStore } from "./task-store.js"

/** The long-lived state every method handler works on. */
export interface ServerContext {
  readonly config: FakeServerConfig
  readonly clock: Clock
  readonly ledger: Ledger
  readonly store: TaskStore
  readonly tools: ReadonlyMap<string, ToolConfig>
  readonly shapeRandom: Random
  readonly outcomeRandom: Random
  readonly rateLimiter: RateLimiter
  readonly subscriptions: Subscriptions
  readonly newTaskId: () => string
}

/** One request being handled: the instant it is handled at and per-response distortions. */
export interface Call {
  readonly request: EnvelopedRequest
  readonly now: number
  readonly skewMs: number
  readonly signal: AbortSignal | undefined
}

export type HandlerResult =
  | { readonly kind: "result"; readonly result: Record<string, Json>; readonly launch?: LaunchEntry }
  | { readonly kind: "failure"; readonly failure: RpcFailure; readonly launch?: LaunchEntry }
  | { readonly kind: "stream"; readonly stream: ReadableStream<Uint8Array> }
  | {
      readonly kind: "http"
      readonly status: number
      readonly headers: Readonly<Record<string, string>>
      readonly body: string
    }

export const result = (value: Record<string, Json>, launch?: LaunchEntry): HandlerResult =>
  launch === undefined ? { kind: "result", result: value } : { kind: "result", result: value, launch }

export const failure = (value: RpcFailure, launch?: LaunchEntry): HandlerResult =>
  launch === undefined ? { kind: "failure", failure: value } : { kind: "failure", failure: value, launch }

export const tooManyRequests = (retryAfterSeconds: number): HandlerResult => ({
  kind: "http",
  status: 429,
  headers: { "retry-after": String(retryAfterSeconds), "content-type": "text/plain" },
  body: "Too Many Requests",
})

export const declaresTasks = (capabilities: Record<string, unknown>): boolean => {
  const extensions = capabilities.extensions
  return (
    typeof extensions === "object" &&
    extensions !== null &&
    Object.hasOwn(extensions, "io.modelcontextprotocol/tasks") &&
    typeof (extensions as Record<string, unknown>)["io.modelcontextprotocol/tasks"] === "object"
  )
}
