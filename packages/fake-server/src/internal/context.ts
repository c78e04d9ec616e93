import type { Config, Progress, Tool } from "../Config.js"
import type { Json } from "../Json.js"
import type * as Ledger from "../Ledger.js"
import type { ServerClock } from "../ServerClock.js"
import { type EnvelopedRequest, tasksExtension } from "./envelope.js"
import type { Recorder } from "./ledger.js"
import type { Random } from "./random.js"
import type { RateLimiter } from "./rateLimiter.js"
import { missingCapability, type RpcFailure } from "./rpcFailure.js"
import type { Subscriptions } from "./subscriptions.js"
import type { TaskStore } from "./taskStore.js"

/** The long-lived state every method handler works on. */
export interface ServerContext {
  readonly config: Config
  readonly clock: ServerClock
  readonly ledger: Recorder
  readonly store: TaskStore
  readonly tools: ReadonlyMap<string, Tool>
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
  /**
   * 2025-11-25: whether the `tools/call` carried `task` (that revision's client opts in per
   * request). Undefined in 2026-07-28, where the server decides from the declared extension.
   */
  readonly taskRequested?: boolean | undefined
}

/** A JSON-RPC answer: a result or an error, with the launch it reports when it reports one. */
export type Answer =
  | { readonly kind: "result"; readonly result: Record<string, Json>; readonly launch?: Ledger.Launch }
  | { readonly kind: "failure"; readonly failure: RpcFailure; readonly launch?: Ledger.Launch }

/**
 * A direct answer held while its tool works, as a real server holds the request: it leaves
 * `holdMs` after the request was handled, with `notifications/progress` on the way when the
 * client sent a progress token (and accepts an event stream).
 */
export interface Held {
  readonly kind: "held"
  readonly holdMs: number
  readonly answer: Answer
  readonly progress: { readonly token: string | number; readonly schedule: Progress } | undefined
}

export type HandlerResult =
  | Answer
  | Held
  | { readonly kind: "stream"; readonly stream: ReadableStream<Uint8Array> }
  | {
      readonly kind: "http"
      readonly status: number
      readonly headers: Readonly<Record<string, string>>
      readonly body: string
    }

export const result = (value: Record<string, Json>, launch?: Ledger.Launch): Answer =>
  launch === undefined ? { kind: "result", result: value } : { kind: "result", result: value, launch }

export const failure = (value: RpcFailure, launch?: Ledger.Launch): Answer =>
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
    Object.hasOwn(extensions, tasksExtension) &&
    typeof (extensions as Record<string, unknown>)[tasksExtension] === "object"
  )
}

/** The answer to a client that did not declare the tasks extension where it is needed. */
export const tasksNotDeclared = (): RpcFailure => missingCapability({ extensions: { [tasksExtension]: {} } })
