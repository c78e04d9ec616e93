/**
 * The durable record of one tool call: the only place the task id lives once the server has
 * handed it out. One row per idempotency key within a scope.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { JsonObject, JsonValue } from "./Json.js"
import { CallToolResult } from "./ToolResult.js"

/**
 * The lifecycle of a call. `pending` is the write-ahead intent (no answer yet); `in_doubt` means
 * the request may have reached the server but no usable answer came back.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Status = Schema.Literal(
  "pending",
  "working",
  "input_required",
  "completed",
  "failed",
  "cancelled",
  "expired",
  "in_doubt",
)

/**
 * @since 0.1.0
 * @category models
 */
export type Status = typeof Status.Type

/**
 * The statuses no transition leaves: the outcome is final.
 *
 * @since 0.1.0
 * @category constants
 */
export const terminalStatuses: ReadonlyArray<Status> = ["completed", "failed", "cancelled", "expired"]

/**
 * The statuses a driver still acts on: the intent awaiting dispatch, and a task running on the
 * server. The one list of them: stores derive their due-row queries and indexes from it.
 *
 * @since 0.1.0
 * @category constants
 */
export const openStatuses: ReadonlyArray<Status> = ["pending", "working", "input_required"]

/**
 * @since 0.1.0
 * @category predicates
 */
export const isTerminal = (status: Status): boolean => terminalStatuses.includes(status)

/**
 * The statuses a call rests in: terminal, or in doubt (waiting for the app to reissue or
 * abandon it). What `settle` waits for and what the outcome feed delivers.
 *
 * @since 0.3.0
 * @category constants
 */
export const restingStatuses: ReadonlyArray<Status> = [...terminalStatuses, "in_doubt"]

/**
 * @since 0.3.0
 * @category predicates
 */
export const isResting = (status: Status): boolean => restingStatuses.includes(status)

/**
 * Whether a driver still acts on a row in this status (see `openStatuses`).
 *
 * @since 0.2.0
 * @category predicates
 */
export const isOpen = (status: Status): boolean => openStatuses.includes(status)

/**
 * Whether the server runs a task for this status: the open statuses past the intent, which are
 * polled.
 *
 * @since 0.2.0
 * @category predicates
 */
export const isTaskLive = (status: Status): status is "working" | "input_required" =>
  status === "working" || status === "input_required"

/**
 * The identity of a row inside one process (a map key): its scope and key together. Rows are
 * unique per (scope, key) in every store.
 *
 * @since 0.2.0
 * @category constructors
 */
export const rowId = (scope: string, key: string): string => JSON.stringify([scope, key])

/**
 * What the server last told us about the task, kept so that a restart resumes with the server's
 * own interval and TTL instead of a default.
 *
 * @since 0.1.0
 * @category models
 */
export class TaskSnapshot extends Schema.Class<TaskSnapshot>("TaskSnapshot")({
  statusMessage: Schema.optional(Schema.String),
  /** As the server sent it, before clamping. */
  pollIntervalMs: Schema.optional(Schema.Finite),
  ttlMs: Schema.NullOr(Schema.Finite),
  /** Server clock, epoch milliseconds. */
  createdAt: Schema.Finite,
  lastUpdatedAt: Schema.Finite,
  /**
   * Local clock, epoch milliseconds, when this task id first reached us. The TTL backstop counts
   * from here rather than from the server's `createdAt`, so a skewed server clock can only make
   * us wait longer, never give up early.
   */
  receivedAt: Schema.Finite,
  /**
   * The protocol generation the task was created under ("2025-11-25"); absent means
   * 2026-07-28 (rows written before there were two).
   */
  generation: Schema.optional(Schema.String),
  /**
   * 2025-11-25 only: the session the task was last seen under, tried first after a restart.
   * A credential of sorts: never log it.
   */
  session: Schema.optional(Schema.String),
}) {}

/**
 * A JSON-RPC error as the server sent it (for `failed`), or as we describe a local outcome.
 *
 * @since 0.1.0
 * @category models
 */
export class RpcError extends Schema.Class<RpcError>("RpcError")({
  code: Schema.Finite,
  message: Schema.String,
  data: Schema.optional(JsonValue),
}) {}

/**
 * The error a `failed` call reports when the server gave it none (a `failed` task without an
 * `error`): JSON-RPC "internal error". The one fallback, for the transition and the outcome alike.
 *
 * @since 0.2.0
 * @category constants
 */
export const failedWithoutError: RpcError = RpcError.make({
  code: -32603,
  message: "failed without an error",
})

/**
 * An error the client decided, not the server (a result it refused to keep, a call it gave up
 * dispatching): `data["mcp-handles/local"]` holds `reason`, machine-readable.
 *
 * @since 0.2.0
 * @category constructors
 */
export const localError = (message: string, reason: string): RpcError =>
  RpcError.make({ code: -32000, message, data: { "mcp-handles/local": reason } })

/**
 * One answer to an input request of the task. The answer is stored before `tasks/update` is
 * sent and acknowledged after, so a restart re-sends an unacknowledged answer instead of asking
 * the user again, and never answers a key twice.
 *
 * @since 0.1.0
 * @category models
 */
export class InputAnswer extends Schema.Class<InputAnswer>("InputAnswer")({
  response: JsonValue,
  acknowledged: Schema.Boolean,
}) {}

/**
 * The cancel intent, recorded before `tasks/cancel` is sent; `sent` is set once the server
 * acknowledged it, so a crash in between is finished by the reconciler.
 *
 * @since 0.1.0
 * @category models
 */
export class CancelIntent extends Schema.Class<CancelIntent>("CancelIntent")({
  requestedAt: Schema.Finite,
  sent: Schema.Boolean,
}) {}

/**
 * A task the server created for this key besides the one on the row: the late answer of a call
 * that was reissued or abandoned meanwhile. Recorded the moment it arrives (never dropped), then
 * cancelled with `tasks/cancel`; `cancelSent` is set once the server acknowledged (or no longer
 * knew the task).
 *
 * @since 0.2.0
 * @category models
 */
export class StrayTask extends Schema.Class<StrayTask>("StrayTask")({
  /** A bearer credential: never log it in full. */
  taskId: Schema.String,
  receivedAt: Schema.Finite,
  cancelSent: Schema.Boolean,
  /** `tasks/cancel` attempts that failed so far: the backoff of the next one. */
  cancelFailures: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { default: () => 0 }),
}) {}

/**
 * How far the server says the call's work is (`notifications/progress`), as last kept: only a
 * material change is written (see `progressChanged`).
 *
 * @since 0.4.0
 * @category models
 */
export class Progress extends Schema.Class<Progress>("Progress")({
  progress: Schema.Finite,
  /** Unset when the server does not know the total. */
  total: Schema.optional(Schema.Finite),
  message: Schema.optional(Schema.String),
  /** When it was heard (the store's clock, epoch milliseconds). */
  at: Schema.Finite,
}) {}

/**
 * Whether `next` is worth keeping after `kept`: the first one, a new message or total, another
 * tenth of the total (or the end), or without a total a tenth more than kept. Everything in
 * between is a write per notification for nothing anyone reads.
 *
 * @since 0.4.0
 * @category predicates
 */
export const progressChanged = (kept: Progress | null, next: Progress): boolean => {
  if (kept === null) return true
  if (next.message !== kept.message || next.total !== kept.total) return true
  if (next.total !== undefined && next.total > 0) {
    const tenth = (p: number) => Math.floor((10 * p) / (next.total as number))
    return (
      tenth(next.progress) !== tenth(kept.progress) ||
      (next.progress >= next.total && kept.progress < next.total)
    )
  }
  return next.progress >= kept.progress * 1.1 + (kept.progress === 0 ? 1e-9 : 0)
}

/**
 * One change of a row's status, as the row keeps it (see `HandleRecord.history`).
 *
 * @since 0.3.0
 * @category models
 */
export class HistoryEntry extends Schema.Class<HistoryEntry>("HistoryEntry")({
  /** When (the store's clock, epoch milliseconds). */
  at: Schema.Finite,
  /** Null for the call's first entry (the intent written). */
  from: Schema.NullOr(Status),
  to: Status,
  /** What made it change: the transition's event (`Polled`, `CallInDoubt`, `Reissued`, ...). */
  cause: Schema.String,
  /** The instance that wrote it. */
  instance: Schema.NullOr(Schema.String),
}) {}

/**
 * The most history entries a row keeps: past it, the oldest are dropped (the first one, the
 * intent, is kept).
 *
 * @since 0.3.0
 * @category constants
 */
export const historyLimit = 20

const handleRecordFields = {
  /** Tenant or principal; every query is confined to one scope. */
  scope: Schema.String,
  /** Idempotency key, unique within the scope. */
  key: Schema.String,
  /** Stable identity of the server (see ServerIdentity). */
  serverId: Schema.String,
  tool: Schema.String,
  /** The arguments, or null when only their hash is kept. */
  arguments: Schema.NullOr(JsonObject),
  argumentsHash: Schema.String,
  /** Null until the server hands one out. A bearer credential: never log it in full. */
  taskId: Schema.NullOr(Schema.String),
  status: Status,
  snapshot: Schema.NullOr(TaskSnapshot),
  /** The tool result of a completed call (direct, or from the task). */
  result: Schema.NullOr(CallToolResult),
  /** The JSON-RPC error of a failed call. */
  error: Schema.NullOr(RpcError),
  /** Input requests the server has outstanding, as last seen. */
  inputRequests: Schema.NullOr(Schema.Record({ key: Schema.String, value: JsonValue })),
  /** Every input key ever answered, with the answer. */
  answers: Schema.Record({ key: Schema.String, value: InputAnswer }),
  /** When (local clock) the task was first seen waiting on only answered keys; null otherwise. */
  stuckSince: Schema.NullOr(Schema.Finite),
  cancel: Schema.NullOr(CancelIntent),
  /** Other tasks the server created for this key; each is cancelled. Empty almost always. */
  strayTasks: Schema.optionalWith(Schema.Array(StrayTask), { default: () => [] }),
  /**
   * When the driver should next act on the row (poll, retry, finish a cancel); null when idle.
   * While a live instance polls the task and finds nothing new, nothing is written: the row then
   * holds when its lease lets another instance take it over (up to a lease and an interval later
   * than the next poll, which the driving instance keeps in memory), and `polls` lags likewise,
   * until the row's next write.
   */
  nextPollAt: Schema.NullOr(Schema.Finite),
  /** Consecutive failed attempts since the last good answer; drives backoff. */
  attempts: Schema.Finite,
  /** Polls answered without a server interval; drives the default interval schedule. */
  pollsWithoutInterval: Schema.Finite,
  /** Times a `tools/call` was dispatched for this key (1 normally; more only by explicit reissue). */
  launches: Schema.Finite,
  /** Polls the server answered for this row's task (0 on rows written before it was counted). */
  polls: Schema.optionalWith(Schema.Finite, { default: () => 0 }),
  /** The last problem seen (transport, auth, protocol), for operators. Never a task id. */
  lastProblem: Schema.NullOr(Schema.String),
  leaseOwner: Schema.NullOr(Schema.String),
  leaseExpiresAt: Schema.NullOr(Schema.Finite),
  /** Compare-and-set token; the store bumps it on every write, claims included. */
  version: Schema.Finite,
  createdAt: Schema.Finite,
  updatedAt: Schema.Finite,
  /** When the row became terminal; drives garbage collection. */
  settledAt: Schema.NullOr(Schema.Finite),
  /** How far the work is, as the server last said it materially (null: it said nothing). */
  progress: Schema.optionalWith(Schema.NullOr(Progress), { default: () => null }),
  /**
   * The row's status changes, oldest first, at most `historyLimit` (the first, the intent, is
   * always kept). Append-only; empty on rows written before it was kept.
   */
  history: Schema.optionalWith(Schema.Array(HistoryEntry), { default: () => [] }),
}

type Mutable = { -readonly [K in keyof HandleRecord]: HandleRecord[K] }

/**
 * One call's row.
 *
 * @since 0.1.0
 * @category models
 */
export class HandleRecord extends Schema.Class<HandleRecord>("HandleRecord")(handleRecordFields) {
  constructor(props: Schema.Struct.Constructor<typeof handleRecordFields>, options?: Schema.MakeOptions) {
    super(props, options)
    // V8 sizes an instance by the `this.x =` assignments it finds in the constructors of its
    // class chain. Schema.Class copies the fields in with `Object.assign`, which V8 cannot see,
    // so a record of this many fields fell into dictionary mode: each copy (several per poll)
    // cost about 8 µs instead of 2, and each field read was a hash lookup. Naming every field
    // here gives every record in-object slots for all of them; the values are those `super`
    // set. `HandleRecord.test.ts` checks that records keep fast properties.
    ;(this as Mutable).scope = this.scope
    ;(this as Mutable).key = this.key
    ;(this as Mutable).serverId = this.serverId
    ;(this as Mutable).tool = this.tool
    ;(this as Mutable).arguments = this.arguments
    ;(this as Mutable).argumentsHash = this.argumentsHash
    ;(this as Mutable).taskId = this.taskId
    ;(this as Mutable).status = this.status
    ;(this as Mutable).snapshot = this.snapshot
    ;(this as Mutable).result = this.result
    ;(this as Mutable).error = this.error
    ;(this as Mutable).inputRequests = this.inputRequests
    ;(this as Mutable).answers = this.answers
    ;(this as Mutable).stuckSince = this.stuckSince
    ;(this as Mutable).cancel = this.cancel
    ;(this as Mutable).strayTasks = this.strayTasks
    ;(this as Mutable).nextPollAt = this.nextPollAt
    ;(this as Mutable).attempts = this.attempts
    ;(this as Mutable).pollsWithoutInterval = this.pollsWithoutInterval
    ;(this as Mutable).launches = this.launches
    ;(this as Mutable).polls = this.polls
    ;(this as Mutable).lastProblem = this.lastProblem
    ;(this as Mutable).leaseOwner = this.leaseOwner
    ;(this as Mutable).leaseExpiresAt = this.leaseExpiresAt
    ;(this as Mutable).version = this.version
    ;(this as Mutable).createdAt = this.createdAt
    ;(this as Mutable).updatedAt = this.updatedAt
    ;(this as Mutable).settledAt = this.settledAt
    ;(this as Mutable).progress = this.progress
    ;(this as Mutable).history = this.history
  }
}

/**
 * `next` with its status change from `previous` appended to its history; `next` itself when the
 * status did not change. Built without re-validating (both records are already checked).
 *
 * @since 0.3.0
 * @category constructors
 */
export const withTransition = (
  previous: HandleRecord,
  next: HandleRecord,
  entry: { readonly at: number; readonly cause: string; readonly instance: string | null },
): HandleRecord => {
  if (next.status === previous.status) return next
  return withHistoryEntry(next, new HistoryEntry({ ...entry, from: previous.status, to: next.status }, true))
}

/**
 * `record` with `entry` appended to its history, kept to `historyLimit` entries (the first, the
 * intent, stays). An entry whose `from` and `to` are alike is a note (who acted on the call), not
 * a status change: `events()` does not report it as one.
 *
 * @since 0.6.0
 * @category constructors
 */
export const withHistoryEntry = (record: HandleRecord, entry: HistoryEntry): HandleRecord => {
  const history = [...record.history, entry]
  const [first, ...rest] = history
  const bounded =
    history.length <= historyLimit || first === undefined
      ? history
      : [first, ...rest.slice(-(historyLimit - 1))]
  return new HandleRecord({ ...record, history: bounded }, true)
}

/**
 * @since 0.1.0
 * @category models
 */
export type HandleRecordEncoded = typeof HandleRecord.Encoded
