import type { InputRequests, InputStep, Outcome, PollIntervalConfig } from "../config.js"
import type { Json, JsonObject } from "../json.js"

/**
 * Everything decided about a task when it was created, frozen so that later config changes, random
 * draws or a reload from a durable store cannot change its fate.
 */
export interface TaskPlan {
  readonly durationMs: number
  /** Sorted by `atMs`. */
  readonly steps: readonly InputStep[]
  readonly outcome: Outcome
  readonly ttlMs: number | null
  readonly pollIntervalMs: PollIntervalConfig | undefined
  readonly cancellable: boolean
  readonly cancelDelayMs: number
  readonly workingMessage: string | undefined
}

/**
 * The server-side state of one task: only facts (when it was created, which answers arrived when,
 * when cancel was asked). Its status at any instant is derived from these and the clock.
 */
export interface TaskRecord {
  readonly taskId: string
  readonly tool: string
  readonly arguments: JsonObject
  /** Answers gathered by multi round-trip rounds before the task was created. */
  readonly mrtrInputs: { readonly [key: string]: Json }
  readonly createdAt: number
  readonly plan: TaskPlan
  readonly launchSeq: number
  /** The client's idempotency key (`_meta["mcp-handles/key"]`), kept for `deduplicateByKey`. */
  readonly idempotencyKey: string | null
  answers: { [key: string]: { readonly at: number; readonly response: Json } }
  cancelRequestedAt: number | null
}

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled"

export const isTerminal = (status: TaskStatus): boolean =>
  status === "completed" || status === "failed" || status === "cancelled"

/** A task as observed at one instant. */
export interface TaskView {
  readonly status: TaskStatus
  readonly lastUpdatedAt: number
  readonly statusMessage: string | undefined
  /** Outstanding requests (only when `input_required`). */
  readonly inputRequests: InputRequests | undefined
  /** The outcome (only when terminal and not cancelled). */
  readonly outcome: Outcome | undefined
}
