/**
 * Quiet polls: a poll that finds the task as the row already says (still working, the same
 * interval, TTL, message and server time) writes nothing. The rules that keep such a row safe
 * (what the store holds of it, when a poll is covered, when others may take it) are in
 * `../quietRow.ts`; this module keeps the driver's side of them. Its driver keeps the row's next poll
 * and poll count in memory (here), and the store holds only what a restart needs, which did not
 * change. Anything else a poll finds is written before it is acted on, as always.
 *
 * What keeps the fleet's rules without the write is the row's lease, renewed in bulk: before a
 * quiet row is polled at `t`, the store must say that nobody else may poll it before `t` plus
 * its interval, whatever happens to this process:
 * - its lease runs to `t + interval` at least (an instance that takes it over when the lease
 *   runs out polls it then at the earliest);
 * - its next poll is `t` or later (a restart under the same id spreads an overdue row one
 *   interval past its next poll, and frees a row not yet due to be polled at its next poll,
 *   which `renewLeases` keeps at the lease's end).
 * `keep` renews every quiet row whose next polls need it, one `renewLeases` call per interval
 * and batch, once per heartbeat; `cover` renews one row before its poll when that fell behind.
 *
 * So while a live instance drives a row quietly, the row's `nextPollAt` in the store is when
 * its lease lets another instance take it (up to a lease plus an interval later than the real
 * next poll), and its `polls` lag: both are exact again at its next write (a change, its end,
 * a hand-off on close). A process that takes such a row back (`takeLease`: a caller waiting on
 * it after a restart) polls it one interval from then; a sweep takes it at that `nextPollAt`.
 *
 * The entry also keeps what the row's next poll needs (its version, task id, snapshot): a
 * resumed driver asks the store only for the row's version and lease (`peek`) and, while the
 * version is the one kept, polls from the entry without reading the record (drive.ts, `glance`).
 * A driver that parks with a row that only waits for its next poll keeps it the same way
 * (`parked`), whatever wrote it last, so a row is read whole only when something changed it.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HandleRecord from "../../HandleRecord.js"
import type * as HandleStore from "../../HandleStore.js"
import * as Transition from "../../Transition.js"
import type * as Wire from "../../Wire.js"
import * as QuietRow from "../quietRow.js"
import { pollDelay, recordInterval, ttlDeadline } from "./answers.js"
import { type Engine, rowId } from "./context.js"

/** What a driver holds in memory for a row whose last polls were not written. */
export interface Quiet {
  readonly scope: string
  readonly key: string
  /** When the next poll is due (store clock). */
  due: number
  /** The row's poll count, the polls that were not written included. */
  polls: number
  /** The task's interval, clamped (what a poll after a takeover must wait). */
  intervalMs: number
  /** The row's lease and next poll in the store, as last read or renewed here. */
  leaseUntil: number
  storedNextPollAt: number
  /** A renewal of the row in flight (`cover`): another driver's poll waits for it. */
  renewal: Deferred.Deferred<void> | undefined
  /**
   * The row's version when it was last polled quietly, and what the next poll needs of it:
   * while the store's `peek` finds that version, the row is polled from these without reading
   * its record (drive.ts, `glance`). Every write but a lease renewal bumps the version.
   */
  version: number
  taskId: string
  serverId: string
  snapshot: HandleRecord.TaskSnapshot
  answers: HandleRecord.HandleRecord["answers"]
  pollsWithoutInterval: number
  /** A stray task of the row is still to be cancelled: the driver reads the row to cancel it first. */
  strays: boolean
}

/** Rows per `renewLeases` call (one statement each). */
const renewBatch = 5_000

/**
 * Whether a poll answer (`after`, from `before`) changes nothing the row keeps but the poll's own
 * count and next time: then it need not be written. `sameInterval` says whether the row's own
 * interval is unchanged (it moves with the count of answers without one until it reaches the cap).
 */
export const isQuietPoll = (
  before: HandleRecord.HandleRecord,
  after: HandleRecord.HandleRecord,
  sameInterval: boolean,
): boolean => {
  const was = before.snapshot
  const is = after.snapshot
  return (
    after !== before &&
    waitsForPoll(before) &&
    after.status === "working" &&
    after.taskId === before.taskId &&
    sameInterval &&
    was !== null &&
    is !== null &&
    sameState(was, is)
  )
}

/** A working task's row with nothing to do but its next poll: no failure, question or stall on it. */
const waitsForPoll = (record: HandleRecord.HandleRecord): boolean =>
  record.status === "working" &&
  record.attempts === 0 &&
  record.lastProblem === null &&
  record.inputRequests === null &&
  record.stuckSince === null

/**
 * Whether a driver's poll answer may stay unwritten: `isQuietPoll` of its transition. The row's
 * interval moves with the answers without one until the default schedule reaches its cap:
 * computed only then.
 */
export const isQuietStep = (
  ctx: Engine,
  before: HandleRecord.HandleRecord,
  after: HandleRecord.HandleRecord,
): Effect.Effect<boolean> =>
  before.pollsWithoutInterval === after.pollsWithoutInterval
    ? Effect.succeed(isQuietPoll(before, after, true))
    : Effect.zipWith(recordInterval(ctx, before), recordInterval(ctx, after), (was, is) =>
        isQuietPoll(before, after, was === is),
      )

/** Whether a task's state (a snapshot, or an answer) says what `was` says, its receipt aside. */
const sameState = (
  was: HandleRecord.TaskSnapshot,
  is: Pick<
    Wire.TaskState,
    "lastUpdatedAt" | "pollIntervalMs" | "ttlMs" | "statusMessage" | "createdAt" | "generation" | "session"
  >,
): boolean =>
  is.lastUpdatedAt === was.lastUpdatedAt &&
  is.pollIntervalMs === was.pollIntervalMs &&
  is.ttlMs === was.ttlMs &&
  is.statusMessage === was.statusMessage &&
  is.createdAt === was.createdAt &&
  is.generation === was.generation &&
  is.session === was.session

/**
 * The next poll of a quiet row kept unchanged in the store (`known`) after `task` answered it at
 * `now`, when the answer changes nothing the row keeps: what `isQuietPoll` says of the poll's own
 * transition of the record, from what `known` kept of it. Undefined when the answer is to be
 * written (settled from the record).
 */
export const quietAnswer = (
  ctx: Engine,
  known: Quiet,
  task: Wire.TaskState,
  now: number,
): Effect.Effect<number | undefined> => {
  const deadline = ttlDeadline(known)
  if (
    task.taskId !== known.taskId ||
    task.status !== "working" ||
    !sameState(known.snapshot, task) ||
    (deadline !== undefined && now >= deadline)
  ) {
    return Effect.succeed(undefined)
  }
  const pollsWithoutInterval = task.pollIntervalMs === undefined ? known.pollsWithoutInterval + 1 : 0
  const sameInterval =
    pollsWithoutInterval === known.pollsWithoutInterval
      ? Effect.succeed(true)
      : Effect.zipWith(
          recordInterval(ctx, known),
          recordInterval(ctx, { snapshot: known.snapshot, pollsWithoutInterval }),
          (was, is) => was === is,
        )
  return Effect.flatMap(sameInterval, (same) =>
    same ? Effect.map(pollDelay(ctx, task, known), (delay) => now + delay) : Effect.succeed(undefined),
  )
}

/**
 * Keeps a quiet poll's answer in memory: `after` is the row as the poll would have written it.
 * `stored` is the row as the store holds it when this is the row's first quiet poll.
 */
export const remember = (
  ctx: Engine,
  stored: HandleRecord.HandleRecord,
  after: HandleRecord.HandleRecord,
  intervalMs: number,
): void => {
  const id = rowId(after.scope, after.key)
  // A quiet poll's row holds a task and its snapshot (see `isQuietPoll`).
  if (stored.taskId === null || stored.snapshot === null) return
  const strays = Transition.uncancelledStrays(stored).length > 0
  const known = ctx.quiet.get(id)
  if (known !== undefined) {
    known.due = after.nextPollAt ?? known.due
    known.polls = after.polls
    known.intervalMs = intervalMs
    known.version = stored.version
    known.taskId = stored.taskId
    known.serverId = stored.serverId
    known.snapshot = stored.snapshot
    known.answers = stored.answers
    known.pollsWithoutInterval = stored.pollsWithoutInterval
    known.strays = strays
    return
  }
  ctx.quiet.set(id, {
    scope: after.scope,
    key: after.key,
    due: after.nextPollAt ?? 0,
    polls: after.polls,
    intervalMs,
    leaseUntil: stored.leaseExpiresAt ?? 0,
    storedNextPollAt: stored.nextPollAt ?? 0,
    renewal: undefined,
    version: stored.version,
    taskId: stored.taskId,
    serverId: stored.serverId,
    snapshot: stored.snapshot,
    answers: stored.answers,
    pollsWithoutInterval: stored.pollsWithoutInterval,
    strays,
  })
}

/**
 * A driver parks with `record`, its row as it knows it, until the row's next poll (`due`): a row
 * that only waits for that poll is kept as a quiet poll would keep it, whatever wrote it last,
 * so that the poll reads no record either (drive.ts, `glance`). A row its quiet polls keep
 * already is kept up to date; one parked until another time (push's safety net) is not kept.
 */
export const parked = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  due: number,
  intervalMs: number,
): void => {
  if (
    due !== record.nextPollAt ||
    !waitsForPoll(record) ||
    record.leaseOwner !== ctx.driverOwner ||
    (record.cancel !== null && !record.cancel.sent) ||
    ctx.quiet.has(rowId(record.scope, record.key))
  ) {
    return
  }
  remember(ctx, record, record, intervalMs)
}

/** Forgets the row's quiet state: it was written (or its driver is gone). */
export const forget = (ctx: Engine, scope: string, key: string): void => {
  if (ctx.quiet.size > 0) ctx.quiet.delete(rowId(scope, key))
}

/**
 * The row as its driver knows it: the store's, with the next poll and poll count of its quiet
 * polls, while this instance's driver still holds it working. A row that changed hands or
 * status has no quiet state any more.
 */
export const overlay = (ctx: Engine, record: HandleRecord.HandleRecord): HandleRecord.HandleRecord => {
  if (ctx.quiet.size === 0) return record
  const id = rowId(record.scope, record.key)
  const known = ctx.quiet.get(id)
  if (known === undefined) return record
  if (record.leaseOwner !== ctx.driverOwner || record.status !== "working") {
    ctx.quiet.delete(id)
    return record
  }
  known.leaseUntil = record.leaseExpiresAt ?? 0
  known.storedNextPollAt = record.nextPollAt ?? 0
  return new HandleRecord.HandleRecord(
    { ...record, nextPollAt: known.due, polls: Math.max(record.polls, known.polls) },
    true,
  )
}

/** `store.get` of a row, with its quiet state laid over it (see `overlay`). */
export const read = (
  ctx: Engine,
  scope: string,
  key: string,
): Effect.Effect<Option.Option<HandleRecord.HandleRecord>, HandleStore.StoreError> =>
  Effect.map(
    ctx.store.get(scope, key),
    Option.map((record) => overlay(ctx, record)),
  )

const { covers } = QuietRow

const renewedUntil = (ctx: Engine, known: Quiet, now: number): number =>
  QuietRow.renewedUntil(now, ctx.leaseMs, known.intervalMs)

const renewed = (known: Quiet, until: number): void => {
  Object.assign(known, QuietRow.keptAfterRenewal(known, until))
}

/**
 * The quiet rows to renew with `known` at `at`: it, and every other whose next poll comes before
 * the next heartbeat's renewal and would not be covered, unless a renewal of it is in flight.
 * Rows fall behind together: a burst of launches reaches its second poll before a heartbeat has
 * renewed it (the row's next poll in the store is its first), and each would otherwise pay a
 * write of its own.
 */
const fallingBehind = (ctx: Engine, known: Quiet, at: number): ReadonlyArray<Quiet> => {
  const reach = at + ctx.heartbeatMs
  const rows = [known]
  for (const other of ctx.quiet.values()) {
    if (other === known || other.renewal !== undefined || other.due > reach) continue
    if (!covers(other, Math.max(other.due, at))) rows.push(other)
  }
  return rows
}

/** Renews `rows` (grouped by the lease they get at `at`); returns those the store renewed. */
const renewNow = (ctx: Engine, rows: ReadonlyArray<Quiet>, at: number) =>
  Effect.gen(function* () {
    const kept = new Set<Quiet>()
    for (const [until, group] of byRenewal(ctx, rows, at)) {
      for (let start = 0; start < group.length; start += renewBatch) {
        const batch = group.slice(start, start + renewBatch)
        const done = yield* ctx.store.renewLeases({ owner: ctx.driverOwner, rows: batch, until })
        const ids = new Set(done.map((row) => rowId(row.scope, row.key)))
        for (const row of batch) {
          if (!ids.has(rowId(row.scope, row.key))) continue
          renewed(row, until)
          kept.add(row)
        }
      }
    }
    return kept
  })

/**
 * Before a quiet row is polled at `at` (store clock, the row just read): renews its lease when
 * the store would not keep everyone else off it for one interval after the poll, with those of
 * the rows that fall behind with it (one statement per interval). False when the store did not
 * renew it (a cancel to send, or the row changed hands): look at the row again. A row whose
 * renewal another poll has in flight waits for it, and renews itself alone if that one did not
 * cover it (the store refused it, or failed).
 */
export const cover = (
  ctx: Engine,
  scope: string,
  key: string,
  at: number,
): Effect.Effect<boolean, HandleStore.StoreError> =>
  Effect.suspend(() => {
    const known = ctx.quiet.size === 0 ? undefined : ctx.quiet.get(rowId(scope, key))
    if (known === undefined || covers(known, at)) return Effect.succeed(true)
    const alone = Effect.map(renewNow(ctx, [known], at), (kept) => kept.has(known))
    const pending = known.renewal
    if (pending !== undefined) {
      return Effect.zipRight(
        Deferred.await(pending),
        Effect.suspend(() => (covers(known, at) ? Effect.succeed(true) : alone)),
      )
    }
    const rows = fallingBehind(ctx, known, at)
    if (rows.length === 1) return alone
    return Effect.flatMap(Deferred.make<void>(), (renewal) => {
      for (const row of rows) row.renewal = renewal
      const settled = Effect.zipRight(
        Effect.sync(() => {
          for (const row of rows) if (row.renewal === renewal) row.renewal = undefined
        }),
        Deferred.succeed(renewal, undefined),
      )
      return Effect.map(Effect.ensuring(renewNow(ctx, rows, at), settled), (kept) => kept.has(known))
    })
  })

/** Quiet rows by the lease a renewal at `now` grants them: one statement each. */
const byRenewal = (ctx: Engine, rows: Iterable<Quiet>, now: number): Map<number, Array<Quiet>> => {
  const groups = new Map<number, Array<Quiet>>()
  for (const known of rows) {
    const until = renewedUntil(ctx, known, now)
    const group = groups.get(until)
    if (group === undefined) groups.set(until, [known])
    else group.push(known)
  }
  return groups
}

/** Wakes the row's driver in this process: something about the row changed. */
export type Wake = (scope: string, key: string) => Effect.Effect<unknown>

/**
 * Renews, in `renewBatch`es, the leases of `rows` to `until` for this instance's drivers; wakes the
 * driver of each row the store did not renew (a cancel to send, another instance holds it, it
 * settled or is gone) to look at it. Returns the rows renewed.
 */
export const renewAll = (
  ctx: Engine,
  rows: ReadonlyArray<{ readonly scope: string; readonly key: string }>,
  until: number,
  wake: Wake,
): Effect.Effect<ReadonlySet<string>, HandleStore.StoreError> =>
  Effect.gen(function* () {
    const kept = new Set<string>()
    for (let start = 0; start < rows.length; start += renewBatch) {
      const batch = rows.slice(start, start + renewBatch)
      const done = yield* ctx.store.renewLeases({ owner: ctx.driverOwner, rows: batch, until })
      for (const row of done) kept.add(rowId(row.scope, row.key))
      if (done.length === batch.length) continue
      yield* Effect.forEach(
        batch.filter((row) => !kept.has(rowId(row.scope, row.key))),
        (row) => wake(row.scope, row.key),
        { discard: true },
      )
    }
    return kept
  })

/**
 * One heartbeat's renewal: every quiet row due to be polled before the heartbeat after next whose
 * lease would not cover those polls, renewed to one lease and one interval from now. Rows share a
 * statement per interval (and per batch).
 */
const renewDue = (ctx: Engine, wake: Wake) =>
  Effect.gen(function* () {
    if (ctx.quiet.size === 0) return
    const now = yield* ctx.store.now
    const reach = now + 2 * ctx.heartbeatMs
    const due: Array<Quiet> = []
    for (const known of ctx.quiet.values()) if (known.due <= reach && !covers(known, reach)) due.push(known)
    for (const [until, rows] of byRenewal(ctx, due, now)) {
      const kept = yield* renewAll(ctx, rows, until, wake)
      for (const known of rows) if (kept.has(rowId(known.scope, known.key))) renewed(known, until)
    }
  }).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning("could not renew the leases of the rows polled without a write", {
        error: error.message,
      }),
    ),
  )

/** Renews quiet rows' leases every heartbeat, until the client closes. */
export const keep = (ctx: Engine, wake: Wake): Effect.Effect<never> =>
  Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(ctx.heartbeatMs)), renewDue(ctx, wake)))
