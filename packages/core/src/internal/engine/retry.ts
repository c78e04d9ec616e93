/**
 * What a driver does with a request that failed: a failure that decides nothing about the task
 * is tried again later, never sooner than the task's interval.
 */
import * as Effect from "effect/Effect"
import type * as HandleRecord from "../../HandleRecord.js"
import * as Polling from "../../Polling.js"
import * as Transition from "../../Transition.js"
import * as Wire from "../../Wire.js"
import { problemOf, recordInterval, ttlDeadline } from "./answers.js"
import type { Engine } from "./context.js"
import { type CommitError, commit, type LeaseMode } from "./leases.js"

/** One step of a driver: the row as it was written. */
export type Step = Effect.Effect<HandleRecord.HandleRecord, CommitError>

/** A request that failed without deciding the task's fate: try again later, never sooner than its interval. */
export const retryLater = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  error: Wire.WireError,
  mode: LeaseMode,
): Step =>
  Effect.gen(function* () {
    const now = yield* ctx.store.now
    const deadline = ttlDeadline(record)
    if (deadline !== undefined && now >= deadline) {
      return yield* commit(ctx, record, Transition.Event.TtlElapsed({ now }), "action", mode)
    }
    const problem = problemOf(error)
    if (error._tag !== "NoAnswer" && error._tag !== "NotSent" && error._tag !== "ServerBusy") {
      yield* Effect.logWarning("task request failed; the task stays open", { key: record.key, problem })
    }
    const backoff = yield* Polling.retryDelay(
      ctx.polling,
      record.attempts + 1,
      error._tag === "ServerBusy" ? error.retryAfterMs : undefined,
    )
    // A failed request may have reached the server (only its answer was lost), so the retry
    // keeps the task's interval too: never sooner than the server asked. One that provably never
    // left (a refused connection) asked the server nothing: the backoff alone applies, so a
    // refused cancel is tried again well before the task can end on its own.
    const delay = error._tag === "NotSent" ? backoff : Math.max(backoff, yield* recordInterval(ctx, record))
    return yield* commit(
      ctx,
      record,
      Transition.Event.PollFailed({ problem, now, retryAt: now + delay }),
      "action",
      mode,
    )
  })

export const isUnknownTask = (error: Wire.WireError) =>
  error._tag === "RpcErrorAnswer" && error.error.code === Wire.invalidParams
