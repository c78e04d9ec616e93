/**
 * Driving a task one step at a time: finish a cancel, cancel stray tasks, answer input, poll.
 * Only the holder of the row's lease acts; every request it sends is made while holding it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as HandleRecord from "../../HandleRecord.js"
import type * as Json from "../../Json.js"
import * as Outcome from "../../Outcome.js"
import * as Polling from "../../Polling.js"
import * as Redaction from "../../Redaction.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Transition from "../../Transition.js"
import * as Wire from "../../Wire.js"
import { checkResult, localError, pollDelay, problemOf, recordInterval, ttlDeadline } from "./answers.js"
import { type Driver, type Engine, endpointOf } from "./context.js"
import { answerInput, needsInput, type Seen, warnUnanswerable } from "./input.js"
import {
  type CommitError,
  commit,
  commitNow,
  holding,
  knownInterval,
  LeaseLost,
  type LeaseMode,
  leasedByOther,
  takeLease,
} from "./leases.js"
import * as Push from "./push.js"
import * as Quiet from "./quiet.js"
import { isUnknownTask, retryLater, type Step } from "./retry.js"

/**
 * Sends `tasks/cancel` for every stray task of the row (a task the server created for this key
 * besides the row's own). A failure is recorded on the stray and tried again with backoff: a live
 * row before its next poll, a row that rests when it is due again (any instance's sweep finds
 * it; `gc` keeps it until then).
 */
export const cancelStrays = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  mode: LeaseMode = "driver",
): Step => {
  const strays = Transition.uncancelledStrays(record)
  const endpoint = endpointOf(ctx, record)
  // Checked before any Effect step: it runs before every poll, and a stray is rare.
  if (strays.length === 0 || endpoint === undefined) return Effect.succeed(record)
  return Effect.gen(function* () {
    let current = record
    for (const stray of strays) {
      const sent = yield* Effect.either(
        ctx.wire.cancelTask(endpoint, stray.taskId, record.snapshot ?? undefined),
      )
      const now = yield* ctx.store.now
      if (Either.isLeft(sent) && !isUnknownTask(sent.left)) {
        yield* Effect.logWarning("could not cancel a stray task; will try again", {
          key: record.key,
          taskId: Redaction.taskId(stray.taskId),
          problem: problemOf(sent.left),
        })
        const retryAfterMs = sent.left._tag === "ServerBusy" ? sent.left.retryAfterMs : undefined
        const delay = yield* Polling.retryDelay(ctx.polling, stray.cancelFailures + 1, retryAfterMs)
        current = yield* commit(
          ctx,
          current,
          Transition.Event.StrayCancelFailed({ taskId: stray.taskId, now, retryAt: now + delay }),
          "action",
          mode,
        )
        continue
      }
      current = yield* commit(
        ctx,
        current,
        Transition.Event.StrayCancelled({ taskId: stray.taskId, now }),
        "fact",
      )
    }
    return current
  })
}

const sendCancel = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  endpoint: Wire.ServerEndpoint,
  taskId: string,
  mode: LeaseMode,
): Step =>
  Effect.gen(function* () {
    const sent = yield* Effect.either(ctx.wire.cancelTask(endpoint, taskId, record.snapshot ?? undefined))
    // -32602 here means the server will not cancel (the task is finished or unknown): the
    // intent is done with, and the next poll says how the task ended.
    if (Either.isLeft(sent) && !isUnknownTask(sent.left))
      return yield* retryLater(ctx, record, sent.left, mode)
    const now = yield* ctx.store.now
    const delay = yield* recordInterval(ctx, record)
    return yield* commit(
      ctx,
      record,
      Transition.Event.CancelSent({ now, nextPollAt: now + delay }),
      "action",
      mode,
    )
  })

/**
 * Where the row's task lives, and the questions the row holds: a 2025-11-25 server asks each one
 * once, so after a restart only the row knows them; `heard` writes the ones it asks now.
 */
const originOf = (
  record: Pick<HandleRecord.HandleRecord, "snapshot" | "inputRequests" | "answers">,
  heard: Wire.TaskOrigin["heard"],
): Wire.TaskOrigin | undefined =>
  record.snapshot === null
    ? undefined
    : {
        generation: record.snapshot.generation,
        session: record.snapshot.session,
        inputRequests: record.inputRequests,
        answers: record.answers,
        expiresAt: ttlDeadline(record),
        heard,
      }

const poll = (
  ctx: Engine,
  polledRecord: HandleRecord.HandleRecord,
  endpoint: Wire.ServerEndpoint,
  taskId: string,
  mode: LeaseMode,
  seen: Seen,
): Step =>
  Effect.gen(function* () {
    // The row as last written: questions heard during the poll are written while it runs.
    let record = polledRecord
    const heard = (requests: Readonly<Record<string, Json.JsonValue>>) =>
      commitNow(ctx, record, (now) => Transition.Event.InputHeard({ requests, now }), "action", mode).pipe(
        Effect.tap((written) =>
          Effect.sync(() => {
            record = written
          }),
        ),
        // Not written (the lease went, the store failed): the port still reports the questions,
        // and the poll's own write below tries again.
        Effect.catchAll((error) =>
          Effect.logWarning("could not store input questions as they were heard", {
            key: record.key,
            error: error._tag,
          }),
        ),
        Effect.asVoid,
      )
    const polled = yield* Effect.either(
      ctx.wire.getTask(endpoint, taskId, originOf(record, heard)).pipe(holding(ctx, polledRecord, mode)),
    )
    if (Either.isRight(polled)) seen.polled = true
    return yield* settle(ctx, record, taskId, polled, mode)
  })

/** What a poll's answer (or its failure) does to the row, as last written: written before it is acted on. */
const settle = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  taskId: string,
  polled: Either.Either<Wire.TaskState, Wire.WireError>,
  mode: LeaseMode,
): Step =>
  Effect.gen(function* () {
    if (Either.isLeft(polled)) {
      const error = polled.left
      const now = yield* ctx.store.now
      if (isUnknownTask(error))
        return yield* commit(ctx, record, Transition.Event.TaskGone({ now }), "action", mode)
      if (error._tag === "MalformedAnswer" && error.completed === true && error.taskId === taskId) {
        // The server says the task completed; we refuse what it returned. That ends the call
        // now, as failed locally with the task id kept, instead of polling it until its TTL.
        const rejected = new Wire.TaskState({
          taskId,
          status: "failed",
          createdAt: record.snapshot?.createdAt ?? now,
          lastUpdatedAt: now,
          ttlMs: record.snapshot?.ttlMs ?? null,
          error: localError(
            `the task completed, but its result was refused: ${error.reason}`,
            "result_rejected",
          ),
        })
        return yield* commit(
          ctx,
          record,
          Transition.Event.Polled({ task: rejected, now, nextPollAt: now }),
          "action",
          mode,
        )
      }
      return yield* retryLater(ctx, record, error, mode)
    }
    const now = yield* ctx.store.now
    if (polled.right.taskId !== taskId) {
      return yield* retryLater(
        ctx,
        record,
        new Wire.MalformedAnswer({ method: "tasks/get", reason: "the answer is about another task" }),
        mode,
      )
    }
    const task = yield* checkResult(ctx, polled.right)
    const deadline = ttlDeadline(record)
    const stillOpen = task.status === "working" || task.status === "input_required"
    if (stillOpen && deadline !== undefined && now >= deadline && task.ttlMs === record.snapshot?.ttlMs) {
      return yield* commit(ctx, record, Transition.Event.TtlElapsed({ now }), "action", mode)
    }
    const delay = yield* pollDelay(ctx, task, record)
    const event = Transition.Event.Polled({ task, now, nextPollAt: now + delay })
    if (mode === "driver") {
      const after = Transition.step(record, event)
      if (yield* Quiet.isQuietStep(ctx, record, after)) {
        Quiet.remember(ctx, record, after, knownInterval(ctx, record))
        return after
      }
    }
    const next = yield* commit(ctx, record, event, "action", mode)
    if (next.stuckSince !== null && now - next.stuckSince >= ctx.polling.stuckAfterMs) {
      yield* Effect.logWarning("task waits on input that was already answered and acknowledged", {
        key: next.key,
        taskId: Redaction.taskId(taskId),
      })
    }
    return next
  })

/** One action on a due row: finish a cancel, answer input, or poll. */
export const advance = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  handler: TaskClient.InputHandler | undefined,
  mode: LeaseMode,
  seen: Seen,
): Step =>
  Effect.gen(function* () {
    const endpoint = endpointOf(ctx, record)
    const taskId = record.taskId
    if (taskId === null || (record.status !== "working" && record.status !== "input_required")) return record
    if (endpoint === undefined) {
      // This instance cannot reach the row's server: the row is freed at once for one that can
      // (holding it, even to write a retry time, would keep that one from driving it).
      yield* ctx.store.release(record.scope, record.key, mode === "driver" ? ctx.driverOwner : ctx.owner)
      return yield* Effect.fail(new LeaseLost())
    }
    if (record.cancel !== null && !record.cancel.sent)
      return yield* sendCancel(ctx, record, endpoint, taskId, mode)
    if (seen.polled && needsInput(record, handler)) {
      const answered = yield* answerInput(ctx, record, endpoint, taskId, handler, mode, seen)
      if (answered.status !== "input_required" || answered.nextPollAt !== record.nextPollAt) return answered
      // An answer sent before the row's poll is due (one stored by another instance, see
      // `answerToSend`) is not followed by a poll sooner than the task's interval.
      if ((answered.nextPollAt ?? 0) > (yield* ctx.store.now)) return answered
      record = answered
    }
    const polled = yield* poll(ctx, record, endpoint, taskId, mode, seen)
    if (handler === undefined) yield* warnUnanswerable(record, polled)
    return polled
  })

/**
 * Whether the row holds an answer (stored by any instance, as intents are) that this driver may
 * send now, before the row's next poll: a question its own poll heard still open, answered and
 * not yet acknowledged. It needs no poll first (the driver polled since it took the row, and has
 * sent nothing since), so it is sent at once, like a cancel.
 */
const answerToSend = (driver: Driver, record: HandleRecord.HandleRecord): boolean => {
  if (!driver.polled || record.status !== "input_required" || record.inputRequests === null) return false
  for (const [inputKey, answer] of Object.entries(record.answers))
    if (!answer.acknowledged && record.inputRequests[inputKey] !== undefined) return true
  return false
}

const rests = (record: HandleRecord.HandleRecord) =>
  Outcome.fromRecord(record) !== undefined || record.status === "pending"

/** How a stretch of driving ended: the row rests (or was deleted), or the driver parked. */
export type Drove = HandleRecord.HandleRecord | "parked" | "gone"

/**
 * Parks the driver until `due` (on the store's clock) unless a wake came while it acted: then
 * it must look at the row again. Decided in one step, so a wake is never lost in between.
 */
const park = (ctx: Engine, driver: Driver, due: number, now: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (clockNow) =>
    Effect.sync(() => {
      if (driver.woken) {
        driver.woken = false
        return false
      }
      driver.parked = true
      ctx.alarms.set(driver.id, clockNow + (due - now))
      return true
    }),
  )

/** A quiet row's answer that is to be written: the row is read, and the answer settled on it. */
interface Unquiet {
  readonly polled: Either.Either<Wire.TaskState, Wire.WireError>
  /** The row's version the poll was sent for: a row changed since drops the answer. */
  readonly version: number
}

/**
 * A resumed driver's quiet row (quiet.ts), polled from what its driver kept instead of from a
 * read of its record: `peek` finds the version kept (nothing but its lease can have moved, and
 * the stamp says where), push leaves it alone, and an answer that changes nothing keeps the next
 * poll in memory as before, so the row is never read whole. The checks before the poll are
 * `drive`'s own, in its order. Undefined when the row is to be read and driven as usual (it
 * changed, its lease is not plainly ours, or a wake came); an `Unquiet` when the answer is to be
 * written.
 */
const glance = (
  ctx: Engine,
  driver: Driver,
): Effect.Effect<"parked" | "gone" | Unquiet | undefined, CommitError> =>
  Effect.suspend(() => {
    const known = ctx.quiet.size === 0 ? undefined : ctx.quiet.get(driver.id)
    // A 2025-11-25 task may put questions on its poll's stream, which are written as they are heard.
    // A row with a stray to cancel is read (drive cancels it before every poll): after each poll
    // the attempt is written, which forgets the entry, so this guards a path that would not.
    if (known === undefined || known.strays || known.snapshot.generation !== undefined)
      return Effect.succeed(undefined)
    const endpoint = endpointOf(ctx, known)
    if (endpoint === undefined || !Push.leavesAlone(ctx, driver.id, known)) return Effect.succeed(undefined)
    return Effect.gen(function* () {
      const stamp = yield* ctx.store.peek(known.scope, known.key)
      if (Option.isNone(stamp)) return "gone" as const
      const { version, leaseOwner, leaseExpiresAt, nextPollAt } = stamp.value
      if (version !== known.version || leaseOwner !== ctx.driverOwner) return undefined
      known.leaseUntil = leaseExpiresAt ?? 0
      known.storedNextPollAt = nextPollAt ?? 0
      const now = yield* ctx.store.now
      if (known.due > now) return (yield* park(ctx, driver, known.due, now)) ? ("parked" as const) : undefined
      if ((leaseExpiresAt ?? 0) <= now || !(yield* Quiet.cover(ctx, known.scope, known.key, now)))
        return undefined
      const origin = originOf(
        { snapshot: known.snapshot, inputRequests: null, answers: known.answers },
        undefined,
      )
      const polled = yield* Effect.either(
        ctx.wire.getTask(endpoint, known.taskId, origin).pipe(holding(ctx, known)),
      )
      if (Either.isLeft(polled)) return { polled, version }
      driver.polled = true
      const due = yield* Quiet.quietAnswer(ctx, known, polled.right, yield* ctx.store.now)
      if (due === undefined) return { polled, version }
      known.due = due
      known.polls++
      const then = yield* ctx.store.now
      // A pushed state that came during the poll is acted on now (drive, with the row read).
      if (due <= then || !Push.leavesAlone(ctx, driver.id, known)) return undefined
      return (yield* park(ctx, driver, due, then)) ? ("parked" as const) : undefined
    })
  })

/**
 * Drives a row until it rests or has nothing to do until its next action: then the driver
 * parks, and an alarm (or a wake: a cancel recorded here) resumes it with a fresh read. Without
 * `initial` (resumed), the row is read first.
 */
export const drive = (
  ctx: Engine,
  driver: Driver,
  initial?: HandleRecord.HandleRecord,
): Effect.Effect<Drove, CommitError> =>
  Effect.gen(function* () {
    // Whether `record` was just read from (or written to) the store, so needs no re-read.
    let fresh = initial === undefined
    // The store refused to renew the lease of the row before a poll (see below).
    let uncovered = false
    let record: HandleRecord.HandleRecord
    if (initial === undefined) {
      const glanced = yield* glance(ctx, driver)
      if (typeof glanced === "string") return glanced
      const found = yield* Quiet.read(ctx, driver.scope, driver.key)
      if (Option.isNone(found)) return "gone"
      record = found.value
      if (glanced !== undefined && glanced.version === record.version && record.taskId !== null) {
        // As `advance` would have left it had the row been read before the poll: it is the same row.
        const settled = yield* settle(ctx, record, record.taskId, glanced.polled, "driver")
        if (driver.handler === undefined) yield* warnUnanswerable(record, settled)
        record = settled
        fresh = false
      }
    } else {
      record = initial
    }
    for (;;) {
      record = yield* cancelStrays(ctx, record)
      if (rests(record)) return record
      const now = yield* ctx.store.now
      // An unsent cancel is due at once, unless sending it failed: then it backs off like a poll.
      const cancelNow = record.cancel !== null && !record.cancel.sent && record.attempts === 0
      const due =
        cancelNow ||
        (record.attempts === 0 && answerToSend(driver, record)) ||
        (ctx.push.enabled && Push.hasPending(ctx, driver.id))
          ? now
          : Push.dueOf(ctx, driver.id, record, record.nextPollAt ?? now)
      if (due > now) {
        if (yield* park(ctx, driver, due, now)) {
          Push.watch(ctx, driver, record)
          Quiet.parked(ctx, record, due, knownInterval(ctx, record))
          return "parked"
        }
        // Woken: what was recorded (a cancel) may make an action due now.
        const found = yield* Quiet.read(ctx, record.scope, record.key)
        if (Option.isNone(found)) return "gone"
        record = found.value
        fresh = true
        continue
      }
      // The row is read before each action: intents are written by whoever asks (another
      // instance too) and never wake us there, so a cancel is sent before the next poll; and
      // only the lease holder acts, so a row that changed hands (a fact we wrote under another
      // instance's lease, a pause longer than ours) is not polled by two instances at once.
      if (!fresh) {
        const found = yield* Quiet.read(ctx, record.scope, record.key)
        if (Option.isNone(found)) return "gone"
        fresh = true
        const changed = found.value.version !== record.version
        // The same version may still hold a lease renewed since (renewals leave it alone).
        record = found.value
        if (changed) {
          uncovered = false
          continue
        }
        // The store would not renew the lease of a row that looks the same: not ours to drive.
        if (uncovered) return yield* Effect.fail(new LeaseLost())
      }
      fresh = false
      const at = yield* ctx.store.now
      // A row freed under us was handed off on purpose (`release`): it is not ours to take back.
      if (leasedByOther(ctx, record, at) || record.leaseOwner === null)
        return yield* Effect.fail(new LeaseLost())
      if (!(record.leaseOwner === ctx.driverOwner && (record.leaseExpiresAt ?? 0) > at)) {
        // Ours no longer (it ran out, or was handed to this instance's sweep): take it first.
        const taken = yield* takeLease(ctx, record)
        if (Option.isNone(taken)) return yield* Effect.fail(new LeaseLost())
        record = taken.value
        fresh = true
        continue
      }
      if (ctx.push.enabled) {
        // A pushed state is written like a poll answer; a task a stream covers is polled only as a safety net.
        const pushed = yield* Push.instead(ctx, driver, record, at, needsInput(record, driver.handler))
        if (Option.isSome(pushed)) {
          record = pushed.value
          fresh = true
          continue
        }
      }
      // A row whose last polls were not written: the store must keep everyone else off it for
      // one interval after this poll before it is sent (see quiet.ts).
      if (
        (record.cancel === null || record.cancel.sent) &&
        !(yield* Quiet.cover(ctx, record.scope, record.key, at))
      ) {
        uncovered = true
        continue
      }
      record = yield* advance(ctx, record, driver.handler, "driver", driver)
    }
  })
