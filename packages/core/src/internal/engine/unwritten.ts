/**
 * Task ids the server handed out that the store has not taken yet. Their write is asked again for
 * as long as the client lives (see leases.ts, `persistently`); closing ends that, and with the
 * process the id would be gone while the task runs on.
 *
 * The rule on close: ask the store once more (it may answer again by now: the task is then handed
 * off like any other open call); if it still refuses, send `tasks/cancel`. A side record for the
 * next process would have to be written to the very store that refuses (core has no other durable
 * place), so cancelling is what keeps the task from running with no record of it. The row stays
 * `pending`, and the next process marks the call in doubt, as after a crash: it cannot know the
 * call launched, and its in-doubt policy decides whether to reissue. Only a cancel that fails too
 * (server and store both unreachable) leaves the task to run, and that is logged as an error.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as HandleRecord from "../../HandleRecord.js"
import * as Redaction from "../../Redaction.js"
import { problemOf } from "./answers.js"
import { defaults, type Engine, endpointOf, type Unwritten } from "./context.js"
import { commit } from "./leases.js"
import { isUnknownTask } from "./retry.js"

/** Runs the write of a received task, the id kept here until the write lands. */
export const writing = <E, R>(
  ctx: Engine,
  held: Unwritten,
  write: Effect.Effect<HandleRecord.HandleRecord, E, R>,
): Effect.Effect<HandleRecord.HandleRecord, E, R> =>
  Effect.suspend(() => {
    const taskId = held.event.task.taskId
    ctx.unwritten.set(taskId, held)
    // A write that is interrupted (closing) or fails (the row was deleted meanwhile) leaves the id
    // here for close to settle.
    return Effect.tap(write, () => Effect.sync(() => ctx.unwritten.delete(taskId)))
  })

const settleOne = (ctx: Engine, held: Unwritten) =>
  Effect.gen(function* () {
    const { task } = held.event
    const written = yield* Effect.either(commit(ctx, held.record, held.event, "fact", "driver", "once"))
    if (Either.isRight(written)) return
    const endpoint = endpointOf(ctx, held.record)
    const log = { key: held.record.key, taskId: Redaction.taskId(task.taskId), store: written.left.message }
    if (endpoint === undefined) {
      return yield* Effect.logError(
        "closing with a task id the store did not take, and no server to cancel it",
        log,
      )
    }
    const sent = yield* Effect.either(
      ctx.wire.cancelTask(endpoint, task.taskId, { generation: task.generation, session: task.session }),
    )
    if (Either.isRight(sent) || isUnknownTask(sent.left)) {
      return yield* Effect.logError(
        "closing with a task id the store did not take: the task was cancelled",
        log,
      )
    }
    yield* Effect.logError("closing with a task id the store did not take, and its cancel failed", {
      ...log,
      problem: problemOf(sent.left),
    })
  }).pipe(
    Effect.ensuring(Effect.sync(() => ctx.unwritten.delete(held.event.task.taskId))),
    Effect.interruptible,
    Effect.timeoutOption(Duration.millis(defaults.handOffTimeoutMs)),
    Effect.ignore,
  )

/** Close's part: every task id still held only in memory is written, or else cancelled. */
export const settle = (ctx: Engine): Effect.Effect<void> =>
  Effect.forEach([...ctx.unwritten.values()], (held) => settleOne(ctx, held), {
    discard: true,
    concurrency: 16,
  })
