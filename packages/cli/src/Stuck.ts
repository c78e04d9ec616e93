/**
 * Whether an open call looks stuck, and why: what `list --stuck` shows an on-call engineer.
 * Each rule reads only the row and the time, so `list` can judge a whole store without
 * talking to any server.
 *
 * @since 0.2.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Transition from "@mcp-handles/core/Transition"
import * as Render from "./Render.js"

/**
 * The thresholds.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults = {
  /**
   * Overdue by this many poll intervals (and at least `minOverdueMs`): nobody is polling the
   * call. A lease that ran out alone is no sign: a call whose process detached has one.
   */
  missedIntervals: 10,
  /** The interval assumed for a task whose server gave none. */
  intervalMs: 5_000,
  /** Never call a call overdue sooner than this, whatever its interval. */
  minOverdueMs: 60_000,
  /** Failed attempts in a row (transport, auth, protocol) before it counts as stuck. */
  failedAttempts: 5,
  /** Waiting for a person's input this long. */
  inputWaitMs: 10 * 60_000,
  /** `tools/call` unanswered this long (its timeout is far shorter). */
  pendingMs: 2 * 60_000,
} as const

const ago = (then: number, now: number) => Render.age(then, now)

/**
 * Why the call looks stuck, or undefined. A stray task whose cancel keeps failing makes any call
 * stuck; otherwise only open calls can be: a terminal call is done, and an in-doubt call waits
 * on a decision (`list --status in-doubt`), not on a process.
 *
 * @since 0.2.0
 */
export const reason = (record: HandleRecord.HandleRecord, now: number): string | undefined => {
  const strays = Transition.uncancelledStrays(record)
  const failures = strays.reduce((sum, stray) => sum + stray.cancelFailures, 0)
  if (failures > 0) {
    // The server may still run it, and this row is the only record of its id.
    return `${strays.length} stray task(s) still to cancel after ${failures} failed tasks/cancel: retried with backoff (mcp-handles resume retries too)`
  }
  if (!HandleRecord.openStatuses.includes(record.status)) return undefined
  if (record.stuckSince !== null) {
    return `the server still asks for input answered ${ago(record.stuckSince, now)} ago`
  }
  if (record.attempts >= defaults.failedAttempts) {
    return `${record.attempts} failed attempts in a row${record.lastProblem === null ? "" : `: ${record.lastProblem}`}`
  }
  if (record.status === "input_required" && record.inputRequests !== null) {
    const waiting = Object.keys(record.inputRequests).filter((key) => !Object.hasOwn(record.answers, key))
    // The server's clock says when the task began to wait; a skewed one only delays this.
    const since = record.snapshot?.lastUpdatedAt ?? record.updatedAt
    if (waiting.length > 0 && now - since > defaults.inputWaitMs) {
      return `waiting ${ago(since, now)} for input (${waiting.join(", ")}): answer with mcp-handles resume`
    }
  }
  if (record.status === "pending" && now - record.createdAt > defaults.pendingMs) {
    return `no answer to tools/call for ${ago(record.createdAt, now)}`
  }
  if (record.nextPollAt !== null) {
    const interval = record.snapshot?.pollIntervalMs ?? defaults.intervalMs
    const overdue = now - record.nextPollAt
    if (overdue > Math.max(defaults.minOverdueMs, defaults.missedIntervals * interval)) {
      // A lease that ran out says who drove it last: a process that died, hung, or detached.
      const last =
        record.leaseOwner !== null && record.leaseExpiresAt !== null && record.leaseExpiresAt < now
          ? `; the lease of ${record.leaseOwner} ran out ${ago(record.leaseExpiresAt, now)} ago`
          : ""
      return `not polled for ${ago(record.nextPollAt, now)} past its due time${last}: no process is driving it (mcp-handles resume does)`
    }
  }
  return undefined
}
