/**
 * The background reconciler (rows no caller waits on: after a restart, or a dead instance's)
 * and the hand-off on close. A sweep claims due rows in batches and acts on each once; what may
 * take long (dispatching a reissue, asking for input) goes to a driver fiber, so one slow
 * handler never holds the sweep up.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as HandleRecord from "../../HandleRecord.js"
import type * as HandleStore from "../../HandleStore.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Transition from "../../Transition.js"
import { recordInterval } from "./answers.js"
import * as Bindings from "./bindings.js"
import { defaults, type Engine, rowId } from "./context.js"
import { advance, cancelStrays } from "./drive.js"
import { ensureDriving, reissueByPolicy, wake } from "./drivers.js"
import { needsInput } from "./input.js"
import { commit } from "./leases.js"
import * as Quiet from "./quiet.js"

const backgroundOptions = (ctx: Engine) => {
  const background = ctx.options.background === false ? undefined : ctx.options.background
  return {
    tickMs: background?.tickMs ?? defaults.background.tickMs,
    batchSize: background?.batchSize ?? defaults.background.batchSize,
    concurrency: background?.concurrency ?? defaults.background.concurrency,
  }
}

interface Tally {
  resumed: number
  inDoubt: number
  reissued: number
}

/** The sweep's one action on a claimed row. */
const actOn = (ctx: Engine, record: HandleRecord.HandleRecord, spread: boolean, tally: Tally) =>
  Effect.gen(function* () {
    const now = yield* ctx.store.now
    if (record.status === "pending") {
      // Its dispatcher is gone (the lease ran out, or this id restarted): it may have launched.
      const recovered = yield* commit(ctx, record, Transition.Event.Recovered({ now }), "action", "sweep")
      tally.inDoubt++
      const again = yield* reissueByPolicy(ctx, recovered)
      if (Option.isSome(again) && again.value.arguments !== null) {
        tally.reissued++
        yield* ensureDriving(ctx, again.value, again.value.arguments)
      }
      return
    }
    if (!HandleRecord.isOpen(record.status)) {
      // A call that rests is due only for a stray task still to cancel; with none left (a row
      // scheduled by hand, or by an older version), nothing is due any more.
      const current = yield* cancelStrays(ctx, record, "sweep")
      if (Transition.uncancelledStrays(current).length === 0 && current.nextPollAt !== null)
        yield* commit(ctx, current, Transition.Event.Rescheduled({ now, nextPollAt: now }), "action", "sweep")
      return
    }
    const handler = ctx.options.onInputRequired
    if (needsInput(record, handler)) {
      // Input is a driver's work: it polls first, holds the lease while a person answers.
      tally.resumed++
      yield* ensureDriving(ctx, record, undefined, handler)
      return
    }
    const current = yield* cancelStrays(ctx, record, "sweep")
    const cancelPending = current.cancel !== null && !current.cancel.sent
    if (spread && !cancelPending) {
      // A row the bulk spread put at the very start of its window is still due: it is
      // rescheduled here (it was counted there). A dead process may have polled at the due
      // time without recording it.
      const interval = yield* recordInterval(ctx, current)
      const offset = yield* Random.nextIntBetween(0, Math.max(1, interval))
      const base = Math.max(now, (current.nextPollAt ?? now) + interval)
      yield* commit(
        ctx,
        current,
        Transition.Event.Rescheduled({ now, nextPollAt: base + offset }),
        "action",
        "sweep",
      )
      return
    }
    tally.resumed++
    // With push, this instance drives the live task itself: its driver listens for it (see push.ts).
    if (ctx.push.enabled) {
      yield* ensureDriving(ctx, current, undefined, handler)
      return
    }
    yield* advance(ctx, current, undefined, "sweep", { polled: false })
  })

/**
 * The sweep's row with a lease that outlasts the action: a row whose lease ran low while it
 * waited (a long sweep claims with the time it began) is renewed first; undefined when another
 * instance took it meanwhile.
 */
const leasedToAct = (ctx: Engine, record: HandleRecord.HandleRecord) =>
  Effect.gen(function* () {
    const now = yield* ctx.store.now
    if (record.leaseExpiresAt !== null && record.leaseExpiresAt - now >= ctx.leaseMs / 2) return record
    const until = now + ctx.leaseMs
    const renewed = yield* ctx.store.renewLease({
      scope: record.scope,
      key: record.key,
      owner: ctx.owner,
      until,
    })
    return renewed ? new HandleRecord.HandleRecord({ ...record, leaseExpiresAt: until }, true) : undefined
  })

/**
 * Claims due rows in batches and acts on each once. With `spread`, overdue live tasks are
 * rescheduled over one interval instead of all polled now (no thundering herd after a boot).
 */
export const sweep = (
  ctx: Engine,
  spread: boolean,
): Effect.Effect<TaskClient.ReconcileReport, HandleStore.StoreError> =>
  Effect.gen(function* () {
    const { batchSize, concurrency } = backgroundOptions(ctx)
    const tally: Tally = { resumed: 0, inDoubt: 0, reissued: 0 }
    // A name an operator moved while this client runs is claimed (or let go) from this sweep on.
    yield* Bindings.refresh(ctx)
    // Only rows due when the sweep began: a row it reschedules or polls is not due again within
    // this sweep, so a large backlog cannot keep it claiming forever.
    const start = yield* ctx.store.now
    // Only a client holding the id takes over its driver leases: they are a dead process's then.
    const takeOver = spread && ctx.options.claimInstance !== false
    if (spread) {
      // The bulk of a restart: overdue live tasks are spread over their interval in a few
      // statements, never read back one by one.
      for (;;) {
        const moved = yield* ctx.store.spreadDue({
          owner: ctx.owner,
          takeOver: takeOver ? [ctx.driverOwner] : [],
          servers: ctx.servers,
          now: start,
          leaseMs: ctx.leaseMs,
          limit: defaults.spreadBatch,
          minIntervalMs: ctx.polling.minIntervalMs,
          maxIntervalMs: ctx.polling.maxIntervalMs,
          defaultIntervalMs: ctx.polling.defaultInitialMs,
        })
        tally.resumed += moved
        if (moved < defaults.spreadBatch) break
      }
    }
    for (;;) {
      // A sweep takes due rows free or past their lease, and rows it stepped before; the boot
      // sweep also takes over the rows this id's fibers held before a restart. It never acts on
      // a row a live fiber of this instance drives.
      const claim = (as: string) =>
        ctx.store.claimDue({
          owner: as,
          now: start,
          leaseMs: ctx.leaseMs,
          limit: batchSize,
          servers: ctx.servers,
        })
      const mine = yield* claim(ctx.owner)
      const theirs = takeOver ? yield* claim(ctx.driverOwner) : []
      const full = mine.length === batchSize || theirs.length === batchSize
      let acted = 0
      yield* Effect.forEach(
        [...mine, ...theirs],
        (record) =>
          Effect.suspend(() => {
            const id = rowId(record.scope, record.key)
            if (ctx.drivers.has(id) || ctx.stepping.has(id)) return Effect.void
            return Effect.gen(function* () {
              // A batch is worked through a few rows at a time, and a long sweep claims with the
              // time it began: a row whose lease ran low while it waited is renewed before it is
              // acted on (or skipped if another instance took it), so the lease outlasts the
              // request and no other instance can poll the task meanwhile.
              const current = yield* leasedToAct(ctx, record)
              if (current === undefined) return
              ctx.stepping.add(id)
              acted++
              yield* actOn(ctx, current, spread, tally)
            }).pipe(
              Effect.ensuring(Effect.sync(() => ctx.stepping.delete(id))),
              Effect.catchTag("LeaseLost", () => Effect.void),
              // One row's trouble (a store error, a defect) is that row's, never the sweep's.
              Effect.catchAllCause((cause) =>
                Effect.logWarning("reconciler could not act on a row", { key: record.key, cause }),
              ),
              Effect.annotateLogs({ key: record.key, scope: record.scope }),
            )
          }),
        { concurrency, discard: true },
      )
      if (!full || acted === 0) break
    }
    return tally
  })

/** Rows with intents looked at per tick: more wait for the next tick. */
const intentsBatch = 1_000

/**
 * The rows this instance drives that hold an intent written elsewhere (a cancel, an input
 * answer): intents never take the lease, so the holder learns of another instance's only from
 * the store. Asked once a tick (one indexed read, no write), so such an intent reaches the server
 * within about a tick whoever holds the row, instead of at the holder's next poll or lease
 * renewal; each row's driver here is woken to act on it. A row the sweep holds is acted on as a
 * claimed row would be.
 */
const wakeIntents = (ctx: Engine) =>
  Effect.gen(function* () {
    const driven = yield* ctx.store.pendingIntents({ owner: ctx.driverOwner, limit: intentsBatch })
    yield* Effect.forEach(driven, (row) => wake(ctx, row.scope, row.key), { discard: true })
    const swept = yield* ctx.store.pendingIntents({ owner: ctx.owner, limit: intentsBatch })
    const tally: Tally = { resumed: 0, inDoubt: 0, reissued: 0 }
    yield* Effect.forEach(
      swept,
      (row) =>
        Effect.gen(function* () {
          const id = rowId(row.scope, row.key)
          if (ctx.drivers.has(id) || ctx.stepping.has(id)) return
          const found = yield* ctx.store.get(row.scope, row.key)
          // A send that failed backs off: its retry is due when the row says, and a claim takes it then.
          if (Option.isNone(found) || found.value.leaseOwner !== ctx.owner || found.value.attempts > 0) return
          const current = yield* leasedToAct(ctx, found.value)
          if (current === undefined) return
          ctx.stepping.add(id)
          yield* Effect.ensuring(
            actOn(ctx, current, false, tally),
            Effect.sync(() => ctx.stepping.delete(id)),
          )
        }).pipe(
          Effect.catchTag("LeaseLost", () => Effect.void),
          Effect.catchAllCause((cause) =>
            Effect.logWarning("reconciler could not act on a row's intent", { key: row.key, cause }),
          ),
        ),
      { concurrency: backgroundOptions(ctx).concurrency, discard: true },
    )
  }).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning("could not look for intents on the rows this instance holds", {
        error: error.message,
      }),
    ),
  )

/**
 * Runs sweeps forever, one at a time (two sweeps under one owner id would claim each other's
 * rows). A store that cannot be reached fails one sweep, not the reconciler: it tries again on
 * the next tick, and the boot sweep (which spreads overdue polls) is retried until it succeeds.
 */
export const runBackground = (ctx: Engine, lock: Effect.Semaphore) =>
  Effect.gen(function* () {
    const { tickMs } = backgroundOptions(ctx)
    // The rows the previous process under this id left leased and not yet due: free them now,
    // so they are polled at their due time rather than after the dead lease runs out. (Without
    // the id's hold they may be a live process's.)
    if (ctx.options.claimInstance !== false)
      yield* ctx.store
        .releaseOwner({
          owner: ctx.driverOwner,
          now: yield* ctx.store.now,
          minIntervalMs: ctx.polling.minIntervalMs,
          maxIntervalMs: ctx.polling.maxIntervalMs,
          defaultIntervalMs: ctx.polling.defaultInitialMs,
        })
        .pipe(
          Effect.catchAll((error) =>
            Effect.logWarning("could not free the previous process's leases", { error: error.message }),
          ),
        )
    const tick = (spread: boolean) =>
      lock
        .withPermits(1)(Effect.zipLeft(sweep(ctx, spread), wakeIntents(ctx)))
        .pipe(
          Effect.as(true),
          Effect.catchAllCause((cause) =>
            Effect.as(Effect.logWarning("reconciler sweep failed; retrying", { cause }), false),
          ),
        )
    const every = Schedule.spaced(Duration.millis(tickMs))
    yield* Effect.repeat(tick(true), { until: (done) => done, schedule: every })
    yield* Effect.repeat(tick(false), every)
  })

/**
 * Close hands off: the rows this process drove are freed for the next process. A poll may have
 * been in flight when a fiber stopped, so a live task is freed at its next poll time, one
 * interval from now at the earliest; a call interrupted mid-dispatch is freed at once (the next
 * process marks it in doubt).
 */
export const handOff = (ctx: Engine, id: string) =>
  Effect.gen(function* () {
    const [scope, key] = JSON.parse(id) as [string, string]
    // With what its driver kept in memory (see quiet.ts): the polls it did not write.
    const found = yield* Quiet.read(ctx, scope, key)
    if (Option.isNone(found) || found.value.leaseOwner !== ctx.driverOwner) return
    const record = found.value
    if (record.status !== "working" && record.status !== "input_required") {
      return yield* ctx.store.release(scope, key, ctx.driverOwner)
    }
    const now = yield* ctx.store.now
    const nextPollAt = Math.max(record.nextPollAt ?? now, now + (yield* recordInterval(ctx, record)))
    yield* commit(ctx, record, Transition.Event.Rescheduled({ now, nextPollAt }), "action", "handoff")
  }).pipe(
    Effect.interruptible,
    Effect.timeoutOption(Duration.millis(defaults.handOffTimeoutMs)),
    Effect.ignore,
  )
