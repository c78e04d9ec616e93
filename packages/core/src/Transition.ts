/**
 * The one pure transition of a handle record: `step(record, event)`. Both drivers (the fiber of
 * a caller awaiting its outcome, and the background reconciler) decide what happened on the
 * wire, turn it into an event, and let this function say what the record becomes. Nothing here
 * does I/O, reads a clock or draws a random number: times arrive inside the events.
 *
 * Three rules hold for every record and event (and are property-tested):
 * - a terminal record keeps its status and outcome (only a stray task the server handed out for
 *   it is recorded, and later marked cancelled: facts are never dropped);
 * - a task id, once recorded, never changes, and none is invented;
 * - every result is in one of the listed states.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import {
  CancelIntent,
  failedWithoutError,
  HandleRecord,
  InputAnswer,
  isResting,
  isTaskLive,
  isTerminal,
  localError,
  type Progress,
  type RpcError,
  StrayTask,
  TaskSnapshot,
} from "./HandleRecord.js"
import type { JsonValue } from "./Json.js"
import * as Redaction from "./Redaction.js"
import type { CallToolResult } from "./ToolResult.js"
import type { TaskState } from "./Wire.js"

/**
 * What happened to a call: an answer on the wire, a failure, a decision of the application, or
 * the passing of time. Every time is in the event.
 *
 * @since 0.1.0
 * @category models
 */
export type Event = Data.TaggedEnum<{
  /** `tools/call` answered with a direct result. */
  CallCompleted: { readonly result: CallToolResult; readonly now: number }
  /**
   * `tools/call` answered with a task handle; `nextPollAt` per the polling policy. A fact: it
   * applies in every state. A row that already holds another task id (a late answer after a
   * reissue), or that rests already (abandoned, finished), records the task as a stray to cancel.
   */
  TaskCreated: { readonly task: TaskState; readonly now: number; readonly nextPollAt: number }
  /**
   * The store refused the task id of a `TaskCreated`: another row holds it (a server handed one
   * task id out for two calls). This call ends failed, visibly, instead of being merged.
   */
  TaskIdTaken: { readonly taskId: string; readonly now: number }
  /** `tasks/cancel` for a stray task was acknowledged (or the server no longer knew it). */
  StrayCancelled: { readonly taskId: string; readonly now: number }
  /**
   * `tasks/cancel` for a stray task failed; a row that rests is due again at `retryAt` for it
   * (a live row tries again before its next poll).
   */
  StrayCancelFailed: { readonly taskId: string; readonly now: number; readonly retryAt: number }
  /** `tools/call` answered with a JSON-RPC error: no task was created. */
  CallRejected: { readonly error: RpcError; readonly now: number }
  /**
   * `tools/call` was sent but no usable answer came back. An answer we could not read that named
   * a task id leaves it on the row as a stray to cancel: whatever it names is not orphaned.
   */
  CallInDoubt: { readonly reason: string; readonly now: number; readonly namedTaskId?: string | undefined }
  /** `tools/call` provably did not reach the server (or was refused for load); retry at `retryAt`. */
  CallDeferred: { readonly reason: string; readonly now: number; readonly retryAt: number }
  /** We gave up dispatching a call that provably never launched. */
  CallAbandonedUnsent: { readonly error: RpcError; readonly now: number }
  /** `tasks/get` answered. */
  Polled: { readonly task: TaskState; readonly now: number; readonly nextPollAt: number }
  /** A poll (or update, or cancel) failed without deciding anything; retry at `retryAt`. */
  PollFailed: { readonly problem: string; readonly now: number; readonly retryAt: number }
  /** The server no longer knows the task id (-32602). */
  TaskGone: { readonly now: number }
  /** The TTL backstop: past the task's lifetime with no terminal answer. */
  TtlElapsed: { readonly now: number }
  /**
   * Questions a server put on a stream (2025-11-25 asks each once), stored as they are heard,
   * before anything else is done with them.
   */
  InputHeard: { readonly requests: Readonly<Record<string, JsonValue>>; readonly now: number }
  /** The server said how far the work is (a material change; see `HandleRecord.progressChanged`). */
  Progressed: { readonly progress: Progress; readonly now: number }
  /** Answers obtained from the input handler, stored before `tasks/update` is sent. */
  InputAnswered: { readonly answers: Readonly<Record<string, JsonValue>>; readonly now: number }
  /** `tasks/update` acknowledged these keys. */
  InputAcknowledged: { readonly keys: ReadonlyArray<string>; readonly now: number }
  /** `cancel(key)`: the intent, stored before `tasks/cancel` is sent. */
  CancelRequested: { readonly now: number }
  /** `tasks/cancel` acknowledged. Observation goes on until terminal or TTL. */
  CancelSent: { readonly now: number; readonly nextPollAt: number }
  /** After a restart: a pending row whose dispatcher is gone may or may not have launched. */
  Recovered: { readonly now: number }
  /** The application chose to dispatch an in-doubt call again. */
  Reissued: { readonly now: number }
  /** The application chose to give up an in-doubt call. */
  Abandoned: { readonly now: number }
  /** Move the next poll without a state change: spreading polls after a restart. */
  Rescheduled: { readonly now: number; readonly nextPollAt: number }
}>

/**
 * @since 0.1.0
 * @category constructors
 */
export const Event = Data.taggedEnum<Event>()

// Records are built without re-validation: every field comes from a record or from an event whose
// payload was decoded at the boundary, and validating here would cost more than a durable commit
// on every step. The property tests check that every reachable record still decodes.
/** The record made terminal: nothing is due, nobody holds it, and it records when it ended. */
const finish = (record: HandleRecord, fields: Partial<HandleRecord>, now: number): HandleRecord =>
  new HandleRecord(
    {
      ...record,
      ...fields,
      inputRequests: null,
      nextPollAt: null,
      stuckSince: null,
      leaseOwner: null,
      leaseExpiresAt: null,
      updatedAt: now,
      settledAt: now,
    },
    true,
  )

const change = (record: HandleRecord, fields: Partial<HandleRecord>, now: number): HandleRecord =>
  new HandleRecord({ ...record, ...fields, updatedAt: now }, true)

const snapshotOf = (task: TaskState, receivedAt: number): TaskSnapshot =>
  new TaskSnapshot(
    {
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
      ...(task.pollIntervalMs === undefined ? {} : { pollIntervalMs: task.pollIntervalMs }),
      ttlMs: task.ttlMs,
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      receivedAt,
      ...(task.generation === undefined ? {} : { generation: task.generation }),
      ...(task.session === undefined ? {} : { session: task.session }),
    },
    true,
  )

/** Input keys the server still waits on that we have answered and that were acknowledged. */
const onlyAnsweredKeysOutstanding = (record: HandleRecord, requests: Readonly<Record<string, JsonValue>>) => {
  const keys = Object.keys(requests)
  return keys.length > 0 && keys.every((key) => record.answers[key]?.acknowledged === true)
}

/** Applies what the server says about the task: the shared path of TaskCreated and Polled. */
const observe = (
  record: HandleRecord,
  task: TaskState,
  now: number,
  nextPollAt: number,
  polled = 0,
): HandleRecord => {
  const snapshot = snapshotOf(task, record.snapshot?.receivedAt ?? now)
  const base = {
    polls: record.polls + polled,
    taskId: task.taskId,
    snapshot,
    attempts: 0,
    lastProblem: null,
    pollsWithoutInterval: task.pollIntervalMs === undefined ? record.pollsWithoutInterval + 1 : 0,
  }
  switch (task.status) {
    case "completed":
      return finish(record, { ...base, status: "completed", result: task.result ?? { content: [] } }, now)
    case "failed":
      return finish(
        record,
        {
          ...base,
          status: "failed",
          error: task.error ?? failedWithoutError,
        },
        now,
      )
    case "cancelled":
      return finish(record, { ...base, status: "cancelled" }, now)
    case "input_required": {
      const inputRequests = task.inputRequests ?? {}
      const stuck = onlyAnsweredKeysOutstanding(record, inputRequests)
      return change(
        record,
        {
          ...base,
          status: "input_required",
          inputRequests,
          stuckSince: stuck ? (record.stuckSince ?? now) : null,
          // Shown by list/show: the server waits on keys we answered and it acknowledged.
          lastProblem: stuck
            ? `waiting on input already answered: ${Object.keys(inputRequests).join(", ")}`
            : null,
          nextPollAt,
        },
        now,
      )
    }
    case "working":
      return change(
        record,
        { ...base, status: "working", inputRequests: null, stuckSince: null, nextPollAt },
        now,
      )
  }
}

/** The row follows a task the server runs: the events about a live task apply. */
const hasLiveTask = (record: HandleRecord): boolean => record.taskId !== null && isTaskLive(record.status)

/**
 * Whether a task id handed out for this key is not the row's own task: the row holds another
 * one, or it rests without one (answered directly, abandoned, gave up). Known strays are not new.
 */
const isStray = (record: HandleRecord, taskId: string): boolean =>
  record.taskId !== taskId &&
  (record.taskId !== null || isTerminal(record.status)) &&
  !record.strayTasks.some((stray) => stray.taskId === taskId)

/**
 * A settled row is due while it has a stray left to cancel, so that a sweep of any instance finds
 * it (after a crash too) and `gc` keeps it. (One in doubt is kept anyway; its driver cancels its
 * strays, and so does whoever settles it.)
 */
const withChores = (record: HandleRecord, dueAt: number): HandleRecord =>
  !isTerminal(record.status) || uncancelledStrays(record).length === 0 || record.nextPollAt === dueAt
    ? record
    : new HandleRecord({ ...record, nextPollAt: dueAt }, true)

/** A settled row whose last stray was cancelled: nothing is due, nobody holds it. */
const choresDone = (record: HandleRecord): HandleRecord =>
  isTerminal(record.status) &&
  uncancelledStrays(record).length === 0 &&
  (record.nextPollAt !== null || record.leaseOwner !== null)
    ? new HandleRecord({ ...record, nextPollAt: null, leaseOwner: null, leaseExpiresAt: null }, true)
    : record

const addStray = (record: HandleRecord, taskId: string, now: number): HandleRecord =>
  withChores(
    new HandleRecord(
      {
        ...record,
        strayTasks: [...record.strayTasks, StrayTask.make({ taskId, receivedAt: now, cancelSent: false })],
        updatedAt: now,
      },
      true,
    ),
    Math.min(record.nextPollAt ?? now, now),
  )

const changeStray = (
  record: HandleRecord,
  taskId: string,
  now: number,
  dueAt: number,
  change: (stray: StrayTask) => StrayTask,
): HandleRecord =>
  record.strayTasks.some((stray) => stray.taskId === taskId && !stray.cancelSent)
    ? choresDone(
        withChores(
          new HandleRecord(
            {
              ...record,
              strayTasks: record.strayTasks.map((stray) => (stray.taskId === taskId ? change(stray) : stray)),
              updatedAt: now,
            },
            true,
          ),
          dueAt,
        ),
      )
    : record

/**
 * Stray tasks still to cancel.
 *
 * @since 0.2.0
 * @category getters
 */
export const uncancelledStrays = (record: HandleRecord): ReadonlyArray<StrayTask> =>
  record.strayTasks.filter((stray) => !stray.cancelSent)

/**
 * What `record` becomes after `event`. Returns `record` itself when the event does not apply
 * (a terminal record, an answer for another task id, an event that makes no sense in the
 * current state), so a driver can tell "nothing to write" by identity.
 *
 * @since 0.1.0
 * @category transitions
 */
export const step = (record: HandleRecord, event: Event): HandleRecord => {
  // The events about stray tasks apply in every state; they never touch the outcome.
  if (event._tag === "StrayCancelled") {
    return changeStray(record, event.taskId, event.now, event.now, (stray) =>
      StrayTask.make({ ...stray, cancelSent: true }),
    )
  }
  if (event._tag === "StrayCancelFailed") {
    return changeStray(record, event.taskId, event.now, event.retryAt, (stray) =>
      StrayTask.make({ ...stray, cancelFailures: stray.cancelFailures + 1 }),
    )
  }
  if (event._tag === "TaskCreated" && isStray(record, event.task.taskId)) {
    return addStray(record, event.task.taskId, event.now)
  }
  if (isTerminal(record.status)) {
    // A settled row is scheduled only for its strays: none left, nothing is due.
    return event._tag === "Rescheduled" ? choresDone(withChores(record, event.nextPollAt)) : record
  }
  const next = stepOpen(record, event)
  // A call that comes to rest with a stray still to cancel stays due for it.
  return next === record ? record : withChores(next, next.nextPollAt ?? event.now)
}

const stepOpen = (
  record: HandleRecord,
  event: Exclude<Event, { _tag: "StrayCancelled" | "StrayCancelFailed" }>,
): HandleRecord => {
  switch (event._tag) {
    case "CallCompleted":
      return record.status === "pending" || record.status === "in_doubt"
        ? finish(
            record,
            { status: "completed", result: event.result, attempts: 0, lastProblem: null },
            event.now,
          )
        : record
    case "TaskCreated":
      // From in_doubt too: a late answer to a call we had given up on still carries the handle.
      if (record.status !== "pending" && record.status !== "in_doubt") return record
      return observe(record, event.task, event.now, event.nextPollAt)
    case "TaskIdTaken":
      return record.status === "pending" || record.status === "in_doubt"
        ? finish(
            record,
            {
              status: "failed",
              error: localError(
                `the server handed this call task ${Redaction.taskId(event.taskId)}, which another call holds`,
                "duplicate_task_id",
              ),
              lastProblem: "duplicate_task_id",
            },
            event.now,
          )
        : record
    case "CallRejected":
      return record.status === "pending"
        ? finish(record, { status: "failed", error: event.error, lastProblem: null }, event.now)
        : record
    case "CallInDoubt": {
      if (record.status !== "pending") return record
      const inDoubt = change(
        record,
        { status: "in_doubt", nextPollAt: null, lastProblem: event.reason },
        event.now,
      )
      return event.namedTaskId === undefined || inDoubt.strayTasks.some((s) => s.taskId === event.namedTaskId)
        ? inDoubt
        : addStray(inDoubt, event.namedTaskId, event.now)
    }
    case "CallDeferred":
      return record.status === "pending"
        ? change(
            record,
            { attempts: record.attempts + 1, nextPollAt: event.retryAt, lastProblem: event.reason },
            event.now,
          )
        : record
    case "CallAbandonedUnsent":
      return record.status === "pending"
        ? finish(record, { status: "failed", error: event.error }, event.now)
        : record
    case "Polled":
      if (record.taskId === null || record.taskId !== event.task.taskId) return record
      if (!isTaskLive(record.status)) return record
      return observe(record, event.task, event.now, event.nextPollAt, 1)
    case "PollFailed":
      return hasLiveTask(record)
        ? change(
            record,
            { attempts: record.attempts + 1, nextPollAt: event.retryAt, lastProblem: event.problem },
            event.now,
          )
        : record
    case "TaskGone":
    case "TtlElapsed":
      return hasLiveTask(record)
        ? finish(
            record,
            {
              status: "expired",
              lastProblem:
                event._tag === "TaskGone" ? "the server no longer knows the task" : "past the task's TTL",
            },
            event.now,
          )
        : record
    case "InputHeard": {
      const fresh = Object.keys(event.requests).filter((key) => record.inputRequests?.[key] === undefined)
      if (!hasLiveTask(record) || fresh.length === 0) return record
      const inputRequests = { ...record.inputRequests, ...event.requests }
      return change(record, { status: "input_required", inputRequests, stuckSince: null }, event.now)
    }
    case "Progressed":
      return isResting(record.status) ? record : change(record, { progress: event.progress }, event.now)
    case "InputAnswered": {
      if (record.status !== "input_required") return record
      const fresh = Object.entries(event.answers).filter(([key]) => record.answers[key] === undefined)
      if (fresh.length === 0) return record
      const answers = { ...record.answers }
      for (const [key, response] of fresh) answers[key] = InputAnswer.make({ response, acknowledged: false })
      return change(record, { answers }, event.now)
    }
    case "InputAcknowledged": {
      const keys = event.keys.filter((key) => record.answers[key]?.acknowledged === false)
      if (keys.length === 0) return record
      const answers = { ...record.answers }
      for (const key of keys) {
        const answer = answers[key]
        if (answer) answers[key] = InputAnswer.make({ response: answer.response, acknowledged: true })
      }
      return change(record, { answers }, event.now)
    }
    case "CancelRequested":
      return record.cancel === null && record.status !== "in_doubt"
        ? change(record, { cancel: CancelIntent.make({ requestedAt: event.now, sent: false }) }, event.now)
        : record
    case "CancelSent":
      return record.cancel !== null && !record.cancel.sent && record.taskId !== null
        ? change(
            record,
            { cancel: CancelIntent.make({ ...record.cancel, sent: true }), nextPollAt: event.nextPollAt },
            event.now,
          )
        : record
    case "Recovered":
      return record.status === "pending"
        ? change(
            record,
            {
              status: "in_doubt",
              nextPollAt: null,
              lastProblem: "the process stopped while the call was in flight",
            },
            event.now,
          )
        : record
    case "Reissued":
      return record.status === "in_doubt"
        ? change(
            record,
            {
              status: "pending",
              launches: record.launches + 1,
              attempts: 0,
              lastProblem: null,
              // Due at once, like a new intent: guarded by the dispatcher's lease, and found by
              // the reconciler (and marked in doubt) if the dispatcher stops before an answer.
              nextPollAt: event.now,
            },
            event.now,
          )
        : record
    case "Rescheduled":
      return hasLiveTask(record) ? change(record, { nextPollAt: event.nextPollAt }, event.now) : record
    case "Abandoned":
      return record.status === "in_doubt"
        ? finish(
            record,
            { status: "cancelled", lastProblem: "abandoned by the application while in doubt" },
            event.now,
          )
        : record
  }
}
