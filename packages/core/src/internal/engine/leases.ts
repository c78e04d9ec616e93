/**
 * Durable writes and the leases that decide who may make them.
 *
 * Every write is a compare-and-set of `Transition.step(row, event)`. What happens when it loses
 * the race depends on what the event is:
 * - an **action** (a poll answer, a retry, a dispatch given up) is only the lease holder's to
 *   write: on a fresh row leased by another live instance it stops with `LeaseLost`;
 * - a **fact** (a task id or a direct result the server handed out) is never dropped: it is
 *   re-applied to the fresh row whoever holds it, keeping their lease;
 * - an **intent** (cancel, abandon) changes only its own fields and never touches the lease.
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as ClientError from "../../ClientError.js"
import * as HandleRecord from "../../HandleRecord.js"
import * as HandleStore from "../../HandleStore.js"
import * as Polling from "../../Polling.js"
import * as Transition from "../../Transition.js"
import * as QuietRow from "../quietRow.js"
import { defaults, type Engine, type Held, rowId } from "./context.js"
import * as Quiet from "./quiet.js"

/** Why a write did not happen: the store failed, the row is gone, or it changed hands. */
export type CommitError = HandleStore.StoreError | ClientError.UnknownKey | LeaseLost

/** The row changed hands: another live instance holds its lease now. */
export class LeaseLost extends Data.TaggedError("LeaseLost") {}

/**
 * Whose name a write leases the row under: a fiber driving it, the sweep acting on it once, or
 * a hand-off that frees it at its next poll time.
 */
export type LeaseMode = "driver" | "sweep" | "handoff"

export type Kind = "action" | "fact" | "intent"

export const isMine = (ctx: Engine, leaseOwner: string | null): boolean =>
  leaseOwner === ctx.owner || leaseOwner === ctx.driverOwner

export const leasedByOther = (ctx: Engine, record: HandleRecord.HandleRecord, now: number): boolean =>
  record.leaseOwner !== null &&
  !isMine(ctx, record.leaseOwner) &&
  record.leaseExpiresAt !== null &&
  record.leaseExpiresAt > now

/** The task's last known interval, clamped: what a poll after a takeover must wait. */
export const knownInterval = (ctx: Engine, record: Pick<HandleRecord.HandleRecord, "snapshot">): number =>
  Polling.clampOr(ctx.polling, record.snapshot?.pollIntervalMs, ctx.polling.defaultMaxMs)

/** How long a lease on the row runs: never less than the task's interval. */
export const leaseFor = (ctx: Engine, record: Pick<HandleRecord.HandleRecord, "snapshot">): number =>
  Math.max(ctx.leaseMs, knownInterval(ctx, record))

/**
 * The row leased to this instance. A lease runs a while past the row's next poll, and never
 * less than the task's interval: an instance that takes the row over after the lease ran out
 * cannot poll sooner than one interval after the holder's last poll. A hand-off frees it then.
 */
export const stamp = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  now: number,
  mode: LeaseMode,
): HandleRecord.HandleRecord =>
  HandleRecord.isTerminal(record.status)
    ? record
    : new HandleRecord.HandleRecord(
        {
          ...record,
          leaseOwner: mode === "driver" ? ctx.driverOwner : ctx.owner,
          leaseExpiresAt:
            Math.max(now, record.nextPollAt ?? now) + (mode === "handoff" ? 0 : leaseFor(ctx, record)),
        },
        true,
      )

const routine: HandleStore.UpdateOptions = { routine: true }

/**
 * A poll that found a working task still working: nothing waits on the write but the row's next
 * poll, so the store may hold it a moment to share a commit with others (see `UpdateOptions`).
 */
export const isRoutine = (
  event: Transition.Event,
  before: HandleRecord.HandleRecord,
  after: HandleRecord.HandleRecord,
): boolean => event._tag === "Polled" && before.status === "working" && after.status === "working"

/**
 * How a fact's write is asked again while the store fails: soon at first, then every half
 * minute at most, with jitter so a fleet that lost its database does not return in step.
 */
const factRetry = Schedule.exponential(Duration.millis(100), 2).pipe(
  Schedule.union(Schedule.spaced(Duration.seconds(30))),
  Schedule.jittered,
)

/** Failures of one fact's write past which each further failure is logged as an error. */
const factFailuresBeforeError = 10

/**
 * A fact is the only pointer to work the server runs: a store that fails to take it (busy past
 * its timeout, a retry budget spent, a failover) is asked again for as long as the client lives,
 * never given up on while the id is held only in memory. The holder keeps the row's lease
 * meanwhile; should it lapse, whoever takes the row marks it in doubt, and the fact, once
 * written, still lands on it. Closing the client stops the retries; what a task id held only in
 * memory becomes then is unwritten.ts's rule.
 */
const persistently = <A, E extends { readonly _tag: string }>(
  record: HandleRecord.HandleRecord,
  write: Effect.Effect<A, E | HandleStore.StoreError>,
): Effect.Effect<A, E | HandleStore.StoreError> => {
  let failures = 0
  return write.pipe(
    Effect.tapError((error) => {
      if (error._tag !== "StoreError") return Effect.void
      failures++
      const log = failures > factFailuresBeforeError ? Effect.logError : Effect.logWarning
      return log("the store did not take a fact the server handed out; asking it again", {
        key: record.key,
        failures,
        error: (error as HandleStore.StoreError).message,
      })
    }),
    Effect.retry({ schedule: factRetry, while: (error) => error._tag === "StoreError" }),
  )
}

/** The row was deleted while in use (`gc`, or an operator): not found, like any other key. */
const rowGone = (record: HandleRecord.HandleRecord) =>
  new ClientError.UnknownKey({ scope: record.scope, key: record.key })

/**
 * How often a fact's write asks a failing store: for as long as the client lives, or once (a
 * client closing has no time to wait for the store).
 */
export type Asking = "persistently" | "once"

/**
 * Applies `event` to `record` and writes the result, compare-and-set. A lost race re-reads and
 * re-applies (the transition is pure); see the module comment for what each kind does then.
 */
export const commit = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  event: Transition.Event,
  kind: Kind,
  mode: LeaseMode = "driver",
  asking: Asking = "persistently",
): Effect.Effect<HandleRecord.HandleRecord, CommitError> =>
  Effect.gen(function* () {
    const persist = kind === "fact" && asking === "persistently"
    let current = record
    for (let attempt = 0; attempt < defaults.commitAttempts; attempt++) {
      const now = yield* ctx.store.now
      const theirs = leasedByOther(ctx, current, now)
      if (kind === "action" && theirs) return yield* Effect.fail(new LeaseLost())
      const stepped = Transition.step(current, event)
      if (stepped === current) return current
      // A status change goes into the row's history too (issue 15, item 2).
      const next = HandleRecord.withTransition(current, stepped, {
        at: now,
        cause: event._tag,
        instance: ctx.owner,
      })
      const toWrite = kind === "intent" || theirs ? next : stamp(ctx, next, now, mode)
      const write = ctx.store.update(toWrite, isRoutine(event, current, next) ? routine : undefined)
      const written = yield* Effect.either(persist ? persistently(current, write) : write)
      if (written._tag === "Right") {
        // Written from the row as its driver knows it (see quiet.ts): what it kept in memory is
        // in the store now. An intent may come from a read of the store alone, so it keeps it.
        if (kind !== "intent") Quiet.forget(ctx, record.scope, record.key)
        ctx.signals.notify(rowId(record.scope, record.key))
        return written.right
      }
      if (written.left._tag === "StoreError") return yield* Effect.fail(written.left)
      if (written.left._tag === "TaskIdTaken" && event._tag === "TaskCreated") {
        const now = yield* ctx.store.now
        const taken = Transition.Event.TaskIdTaken({ taskId: event.task.taskId, now })
        return yield* commit(ctx, current, taken, "fact", mode, asking)
      }
      const read = Quiet.read(ctx, current.scope, current.key)
      const fresh = yield* persist ? persistently(current, read) : read
      if (Option.isNone(fresh)) return yield* Effect.fail(rowGone(current))
      current = fresh.value
    }
    return yield* Effect.fail(
      new HandleStore.StoreError({ operation: "update", message: "too many concurrent writers on one row" }),
    )
  })

/** `commit` of an event stamped with the store's current time. */
export const commitNow = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  event: (now: number) => Transition.Event,
  kind: Kind,
  mode: LeaseMode = "driver",
): Effect.Effect<HandleRecord.HandleRecord, CommitError> =>
  Effect.flatMap(ctx.store.now, (now) => commit(ctx, record, event(now), kind, mode))

/** Takes the lease of a row nobody else is driving; None when another live instance is. */
export const takeLease = (ctx: Engine, record: HandleRecord.HandleRecord) =>
  Effect.gen(function* () {
    const now = yield* ctx.store.now
    if (leasedByOther(ctx, record, now)) return Option.none<HandleRecord.HandleRecord>()
    // Whoever held the row last may have polled without recording it (`QuietRow.takenPollAt`).
    const due = record.nextPollAt
    const interval = knownInterval(ctx, record)
    const nextPollAt =
      due === null || record.taskId === null || (due >= now && !HandleRecord.isTaskLive(record.status))
        ? due
        : QuietRow.takenPollAt(due, now, interval)
    const taken = nextPollAt === due ? record : new HandleRecord.HandleRecord({ ...record, nextPollAt }, true)
    const written = yield* Effect.either(ctx.store.update(stamp(ctx, taken, now, "driver")))
    if (written._tag === "Right") {
      Quiet.forget(ctx, record.scope, record.key)
      return Option.some(written.right)
    }
    if (written.left._tag === "StoreError") return yield* Effect.fail(written.left)
    // A lost race (or, never from a takeover, a task id held elsewhere): not ours to drive.
    return Option.none<HandleRecord.HandleRecord>()
  })

/**
 * Runs `effect` while the client's heartbeat renews `owner`'s lease on the row: a request, a
 * dispatch or an input question that takes longer than the lease does not lose it. It costs a
 * set entry, not a fiber (an open task polls often); a quick request is never renewed.
 */
export const holding =
  (
    ctx: Engine,
    record: Pick<HandleRecord.HandleRecord, "scope" | "key" | "snapshot">,
    mode: LeaseMode = "driver",
  ) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(Clock.currentTimeMillis, (since) => {
      const held: Held = {
        scope: record.scope,
        key: record.key,
        owner: mode === "driver" ? ctx.driverOwner : ctx.owner,
        leaseMs: leaseFor(ctx, record),
        renewedAt: since,
        stopped: false,
      }
      ctx.inFlight.add(held)
      return Effect.ensuring(
        effect,
        Effect.sync(() => ctx.inFlight.delete(held)),
      )
    })

const renew = (ctx: Engine, held: Held, at: number) =>
  Effect.gen(function* () {
    held.renewedAt = at
    const now = yield* ctx.store.now
    const renewed = yield* ctx.store.renewLease({
      scope: held.scope,
      key: held.key,
      owner: held.owner,
      until: now + held.leaseMs,
    })
    if (!renewed) held.stopped = true
  }).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning("could not renew a lease", { key: held.key, error: error.message }),
    ),
  )

/**
 * Renews the lease of every request in flight, at most one heartbeat after it started or was
 * last renewed (the clock ticks every half heartbeat): three renewals per lease at least, so one
 * lost write or a slow store does not lose it.
 */
export const heartbeat = (ctx: Engine): Effect.Effect<never> => {
  const halfMs = Math.max(1, Math.floor(ctx.heartbeatMs / 2))
  const beat = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.forEach(
      [...ctx.inFlight].filter((held) => !held.stopped && now - held.renewedAt >= halfMs),
      (held) => renew(ctx, held, now),
      { concurrency: 16, discard: true },
    ),
  )
  return Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(halfMs)), beat))
}
