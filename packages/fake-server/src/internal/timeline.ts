import type { InputRequests, PollInterval } from "../Config.js"
import type { TaskRecord } from "../Persistence.js"
import { isTerminal, type TaskView } from "./taskRecord.js"

/**
 * Derive a task's state at `now` from its record alone: no timers run anywhere. Working time
 * accumulates only while the task is not blocked on input; each input step blocks at its `atMs` of
 * working time until every key has an answer; after the last step the remaining working time runs
 * and the outcome is reached.
 */
export const viewAt = (record: TaskRecord, now: number): TaskView => {
  const cancelAt = record.cancelRequestedAt
  if (cancelAt !== null && record.plan.cancellable) {
    const effectiveAt = cancelAt + record.plan.cancelDelayMs
    const atCancel = naturalViewAt(record, cancelAt)
    // A cancel only wins over work that was still running when it arrived.
    if (!isTerminal(atCancel.status) && now >= effectiveAt) {
      const natural = naturalViewAt(record, effectiveAt)
      if (!isTerminal(natural.status) || natural.lastUpdatedAt >= effectiveAt) {
        return {
          status: "cancelled",
          lastUpdatedAt: effectiveAt,
          statusMessage: "Cancelled at the client's request",
          inputRequests: undefined,
          outcome: undefined,
        }
      }
    }
  }
  return naturalViewAt(record, now)
}

const naturalViewAt = (record: TaskRecord, now: number): TaskView => {
  const { plan } = record
  let resumedAt = record.createdAt
  let worked = 0
  for (const step of plan.steps) {
    const reachedAt = resumedAt + Math.max(0, step.atMs - worked)
    if (now < reachedAt) return working(record, resumedAt)
    const outstanding: Record<string, InputRequests[string]> = {}
    let lastAnswerAt = reachedAt
    for (const [key, request] of Object.entries(step.requests)) {
      const answer = record.answers[key]
      if (answer === undefined || answer.at > now) outstanding[key] = request
      else lastAnswerAt = Math.max(lastAnswerAt, answer.at)
    }
    if (Object.keys(outstanding).length > 0) {
      return {
        status: "input_required",
        lastUpdatedAt: lastAnswerAt,
        statusMessage: step.statusMessage ?? "Waiting for input",
        inputRequests: outstanding,
        outcome: undefined,
      }
    }
    resumedAt = lastAnswerAt
    worked = Math.max(worked, step.atMs)
  }
  const finishedAt = resumedAt + Math.max(0, plan.durationMs - worked)
  if (now < finishedAt) return working(record, resumedAt)
  const outcome = plan.outcome
  return {
    status: outcome.kind === "error" ? "failed" : "completed",
    lastUpdatedAt: finishedAt,
    statusMessage: outcome.kind === "error" ? `Tool execution failed: ${outcome.message}` : undefined,
    inputRequests: undefined,
    outcome,
  }
}

const working = (record: TaskRecord, since: number): TaskView => ({
  status: "working",
  lastUpdatedAt: since,
  statusMessage: record.plan.workingMessage,
  inputRequests: undefined,
  outcome: undefined,
})

/**
 * Until when the clock alone leaves what a stream would say of the task as it is at `now`: its
 * finish, its expiry (`expiresAt`), the interval's next change. Worked out only for a task with
 * no input steps and no cancel; any other is `now` (looked at every time).
 */
export const quietUntil = (record: TaskRecord, now: number, expiresAt: number): number => {
  if (record.plan.steps.length > 0 || record.cancelRequestedAt !== null) return now
  let until = Math.min(record.createdAt + record.plan.durationMs, expiresAt)
  const schedule = record.plan.pollIntervalMs
  if (schedule !== undefined && typeof schedule !== "number") {
    for (const change of schedule) {
      const at = record.createdAt + change.afterMs
      if (at > now) until = Math.min(until, at)
    }
  }
  return until
}

/** The interval a task advertises at `now`; `undefined` when none is configured. */
export const pollIntervalAt = (
  config: PollInterval | undefined,
  createdAt: number,
  now: number,
): number | undefined => {
  if (config === undefined || typeof config === "number") return config
  const elapsed = now - createdAt
  let current: number | undefined
  for (const change of config) if (elapsed >= change.afterMs) current = change.pollIntervalMs
  return current
}
