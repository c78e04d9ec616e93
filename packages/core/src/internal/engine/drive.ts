/**
 * Driving a task one step at a time: finish a cancel, cancel stray tasks, answer input, poll.
 * Only the holder of the row's lease acts; every request it sends is made while holding it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as HandleRecord from "../../HandleRecord.js"
import * as Outcome from "../../Outcome.js"
import * as Polling from "../../Polling.js"
import * as Redaction from "../../Redaction.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Transition from "../../Transition.js"
import * as Wire from "../../Wire.js"
import {
  askInput,
  checkResult,
  localError,
  pollDelay,
  problemOf,
  recordInterval,
  ttlDeadline,
} from "./answers.js"
import { type Driver, type Engine, endpointOf } from "./context.js"
import {
  type CommitError,
  commit,
  commitNow,
  holding,
  LeaseLost,
  type LeaseMode,
  leasedByOther,
  takeLease,
} from "./leases.js"
import * as Push from "./push.js"

type Step = Effect.Effect<HandleRecord.HandleRecord, CommitError>

/** A request that failed without deciding the task's fate: try again later, never sooner than its interval. */
const retryLater = (
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

const isUnknownTask = (error: Wire.WireError) =>
  error._tag === "RpcErrorAnswer" && error.error.code === Wire.invalidParams

/**
 * Sends `tasks/cancel` for every stray task of the row (a task the server created for this key
 * besides the row's own). Failures are retried on the next step; the stray stays recorded.
 */
export const cancelStrays = (ctx: Engine, record: HandleRecord.HandleRecord): Step =>
  Effect.gen(function* () {
    const strays = Transition.uncancelledStrays(record)
    const endpoint = endpointOf(ctx, record)
    if (strays.length === 0 || endpoint === undefined) return record
    let current = record
    for (const stray of strays) {
      const sent = yield* Effect.either(
        ctx.wire.cancelTask(endpoint, stray.taskId, record.snapshot ?? undefined),
      )
      if (Either.isLeft(sent) && !isUnknownTask(sent.left)) {
        yield* Effect.logWarning("could not cancel a stray task; will try again", {
          key: record.key,
          taskId: Redaction.taskId(stray.taskId),
          problem: problemOf(sent.left),
        })
        continue
      }
      const now = yield* ctx.store.now
      current = yield* commit(
        ctx,
        current,
        Transition.Event.StrayCancelled({ taskId: stray.taskId, now }),
        "fact",
      )
    }
    return current
  })

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
 * Input: ask what nobody has answered yet (stored before it is sent), then send every stored
 * answer not yet acknowledged, but only for keys the server still asks for as of a poll this
 * driver made itself (after a restart it polls first, so an answer that did reach the server
 * is never sent twice). A key the server no longer asks for is settled without sending.
 */
const answerInput = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  endpoint: Wire.ServerEndpoint,
  taskId: string,
  handler: TaskClient.InputHandler | undefined,
  mode: LeaseMode,
  seen: Seen,
): Step =>
  Effect.gen(function* () {
    const outstanding = record.inputRequests ?? {}
    const unasked = Object.fromEntries(
      Object.entries(outstanding).filter(([inputKey]) => record.answers[inputKey] === undefined),
    )
    let current = record
    const fresh = yield* askInput(ctx, handler, record, unasked)
    if (Object.keys(fresh).length > 0) {
      const answers = (now: number) => Transition.Event.InputAnswered({ answers: fresh, now })
      current = yield* commitNow(ctx, current, answers, "action", mode)
    }
    const unacknowledged = Object.entries(current.answers).filter(([, answer]) => !answer.acknowledged)
    const stale = unacknowledged.filter(([inputKey]) => outstanding[inputKey] === undefined).map(([k]) => k)
    if (stale.length > 0) {
      const settled = (now: number) => Transition.Event.InputAcknowledged({ keys: stale, now })
      current = yield* commitNow(ctx, current, settled, "action", mode)
    }
    const toSend = unacknowledged.filter(([inputKey]) => outstanding[inputKey] !== undefined)
    if (toSend.length === 0) return current
    const responses = Object.fromEntries(toSend.map(([inputKey, answer]) => [inputKey, answer.response]))
    // Until it is acknowledged, the server may or may not have these answers: only a poll after
    // this send can say whether to send them again.
    seen.polled = false
    const sent = yield* Effect.either(
      ctx.wire.updateTask(endpoint, taskId, responses, current.snapshot ?? undefined),
    )
    // -32602 on an update is the server refusing these answers, not the task gone: they are not
    // sent again (a stuck task is reported as such), and polling goes on.
    if (Either.isLeft(sent) && !isUnknownTask(sent.left))
      return yield* retryLater(ctx, current, sent.left, mode)
    if (Either.isLeft(sent)) {
      yield* Effect.logWarning("the server refused input answers", {
        key: record.key,
        problem: problemOf(sent.left),
      })
    }
    const now = yield* ctx.store.now
    return yield* commit(
      ctx,
      current,
      Transition.Event.InputAcknowledged({ keys: Object.keys(responses), now }),
      "action",
      mode,
    )
  }).pipe(holding(ctx, record, mode))

/**
 * Where the row's task lives, and the questions the row holds: a 2025-11-25 server asks each one
 * once, so after a restart only the row knows them.
 */
const originOf = (record: HandleRecord.HandleRecord): Wire.TaskOrigin | undefined =>
  record.snapshot === null
    ? undefined
    : {
        generation: record.snapshot.generation,
        session: record.snapshot.session,
        inputRequests: record.inputRequests,
        expiresAt: ttlDeadline(record),
      }

const poll = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  endpoint: Wire.ServerEndpoint,
  taskId: string,
  mode: LeaseMode,
  seen: Seen,
): Step =>
  Effect.gen(function* () {
    const polled = yield* Effect.either(
      ctx.wire.getTask(endpoint, taskId, originOf(record)).pipe(holding(ctx, record, mode)),
    )
    if (Either.isRight(polled)) seen.polled = true
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
    const next = yield* commit(
      ctx,
      record,
      Transition.Event.Polled({ task, now, nextPollAt: now + delay }),
      "action",
      mode,
    )
    if (next.stuckSince !== null && now - next.stuckSince >= ctx.polling.stuckAfterMs) {
      yield* Effect.logWarning("task waits on input that was already answered and acknowledged", {
        key: next.key,
        taskId: Redaction.taskId(taskId),
      })
    }
    return next
  })

/** Whether answering input is this step's work: unasked questions with a handler, or unsent answers. */
export const needsInput = (record: HandleRecord.HandleRecord, handler: TaskClient.InputHandler | undefined) =>
  record.status === "input_required" &&
  (Object.values(record.answers).some((answer) => !answer.acknowledged) ||
    (handler !== undefined &&
      Object.keys(record.inputRequests ?? {}).some((inputKey) => record.answers[inputKey] === undefined)))

/** Whether the caller has had a poll answer itself since it took the row (see answerInput). */
export interface Seen {
  polled: boolean
}

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
      // The server is not configured in this process: leave the row for one that has it.
      const now = yield* ctx.store.now
      return yield* commit(
        ctx,
        record,
        Transition.Event.PollFailed({
          problem: `server ${record.serverId} is not configured here`,
          now,
          retryAt: now + ctx.polling.maxIntervalMs,
        }),
        "action",
        mode,
      )
    }
    if (record.cancel !== null && !record.cancel.sent)
      return yield* sendCancel(ctx, record, endpoint, taskId, mode)
    if (seen.polled && needsInput(record, handler)) {
      const answered = yield* answerInput(ctx, record, endpoint, taskId, handler, mode, seen)
      if (answered.status !== "input_required" || answered.nextPollAt !== record.nextPollAt) return answered
      record = answered
    }
    return yield* poll(ctx, record, endpoint, taskId, mode, seen)
  })

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
    let record: HandleRecord.HandleRecord
    if (initial === undefined) {
      const found = yield* ctx.store.get(driver.scope, driver.key)
      if (Option.isNone(found)) return "gone"
      record = found.value
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
        cancelNow || (ctx.push.enabled && Push.hasPending(ctx, driver.id))
          ? now
          : Push.dueOf(ctx, driver.id, record, record.nextPollAt ?? now)
      if (due > now) {
        if (yield* park(ctx, driver, due, now)) {
          Push.watch(ctx, driver, record)
          return "parked"
        }
        // Woken: what was recorded (a cancel) may make an action due now.
        const found = yield* ctx.store.get(record.scope, record.key)
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
        const found = yield* ctx.store.get(record.scope, record.key)
        if (Option.isNone(found)) return "gone"
        fresh = true
        if (found.value.version !== record.version) {
          record = found.value
          continue
        }
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
      record = yield* advance(ctx, record, driver.handler, "driver", driver)
    }
  })
