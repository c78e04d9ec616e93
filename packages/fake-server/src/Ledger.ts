/**
 * The outside observer's record of everything a fake server did: every launch, every task's polls,
 * updates and cancels, every request with the time it arrived and the time its answer left, every
 * restart. It survives `restart()` (it models what an operator could reconstruct from logs, not
 * the server's memory), so tests check "no orphan" and "no double launch" across crashes.
 *
 * @since 0.1.0
 */
import type { JsonObject } from "./Json.js"

/**
 * One execution of a tool: a task created, or a direct answer computed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Launch {
  readonly seq: number
  readonly tool: string
  readonly arguments: JsonObject
  /** The key the client sent in `params._meta["io.github.mcp-handles/key"]`, if any. */
  readonly idempotencyKey: string | null
  /** `null` for a direct (non-task) answer. */
  readonly taskId: string | null
  readonly resultType: "task" | "complete" | "error"
  /** Clock time of the launch. */
  readonly at: number
  /**
   * False when a fault lost or garbled the response that carried the outcome, or the client
   * went away while a direct answer was held (it is true until then).
   */
  responseDelivered: boolean
  /** The fault applied to the launching response, if any. */
  fault: string | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface TaskUpdate {
  readonly at: number
  /** Keys the client sent. */
  readonly keys: readonly string[]
  /** Keys that answered an outstanding request (the others were ignored). */
  readonly accepted: readonly string[]
}

/**
 * What happened to one task, from the server's side.
 *
 * @since 0.1.0
 * @category models
 */
export interface Task {
  readonly taskId: string
  readonly tool: string
  readonly launchSeq: number
  readonly idempotencyKey: string | null
  readonly createdAt: number
  /** Times of every `tasks/get` for this task that reached it. */
  readonly polls: number[]
  /** Polls that came sooner than the `pollIntervalMs` of the previous answer about the task. */
  earlyPolls: number
  readonly updates: TaskUpdate[]
  readonly cancels: number[]
  /** When a `tasks/get` or a `notifications/tasks` first reported a terminal status (and which). */
  terminalSeenAt: number | null
  terminalStatus: string | null
  /** Which of the two reported it first. */
  terminalSeenBy: "tasks/get" | "notifications/tasks" | null
  /** When the task was lost in a non-durable restart. */
  lostAt: number | null
  /** When the task was deleted after expiry. */
  purgedAt: number | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly seq: number
  /** Clock time at which the server processed the request (after any `before` latency). */
  readonly at: number
  /** Clock time the request arrived: with `endedAt`, what was in flight at once. */
  readonly startedAt: number
  /**
   * Clock time the answer (or the cut connection) left: after a direct answer's hold (for an
   * event stream, once its last message left) and any `after` latency.
   */
  readonly endedAt: number
  readonly method: string | null
  readonly tool: string | null
  readonly taskId: string | null
  /** The idempotency key the request carried in `_meta["io.github.mcp-handles/key"]`. */
  readonly idempotencyKey: string | null
  /** Who sent it: the request's `x-client-id` header (tests name their client instances). */
  readonly client: string | null
  readonly httpStatus: number
  /**
   * `dropped`: the connection was cut (a fault, or a restart while the answer was held);
   * `abandoned`: the client went away (its timeout, say) while a direct answer was held;
   * `malformed`: the body was not valid JSON.
   */
  readonly outcome: "result" | "error" | "dropped" | "abandoned" | "malformed" | "stream"
  readonly errorCode: number | null
  readonly fault: string | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Restart {
  readonly at: number
  readonly durable: boolean
  readonly lostTaskIds: readonly string[]
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly launches: readonly Launch[]
  readonly tasks: readonly Task[]
  readonly requests: readonly Request[]
  readonly restarts: readonly Restart[]
}

/**
 * What tests read. The server writes through an internal recorder; a test only reads (and may
 * clear between phases).
 *
 * @since 0.1.0
 * @category models
 */
export interface Ledger {
  readonly launches: readonly Launch[]
  readonly tasks: readonly Task[]
  readonly requests: readonly Request[]
  readonly restarts: readonly Restart[]
  task(taskId: string): Task | undefined
  /** Every launch made under one idempotency key (more than one is a double launch). */
  launchesForKey(key: string): readonly Launch[]
  /** Number of `tasks/get` that reached a task. */
  pollCount(taskId: string): number
  /** A deep, JSON-safe copy: what `GET {prefix}ledger` serves. */
  snapshot(): Snapshot
  clear(): void
}
