import type { InputRequests, Outcome } from "../Config.js"

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
