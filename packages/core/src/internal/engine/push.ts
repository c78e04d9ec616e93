/**
 * Push: where a server takes `subscriptions/listen`, streams (up to `tasksPerStream` tasks
 * each, see listener.ts) carry `notifications/tasks` for every open task a driver of this process
 * holds, and polling drops to a slow safety net while a task's stream is healthy.
 *
 * A pushed state is a poll answer that came by itself: it is written the way a poll answer is
 * (the same transition, as an action under the row's lease, so a row in other hands is fenced
 * off), by the row's own driver, before anything acts on it. The stream only hands the state to
 * the driver and wakes it; no notification turns into a request.
 *
 * What the rows need from the stream is kept here, per process: which task each driven row
 * listens for, which of them the current stream's acknowledgement covers, and for covered rows
 * when the task was last seen (the safety net polls once per `safetyNetMs` after that). When a
 * stream drops, its rows are woken and polled at their own interval again while the listener
 * resubscribes with backoff. Only rows a driver holds (so whose lease this instance holds) are
 * listened for: in a fleet, the lease holder listens.
 *
 * A covered row is leased for one lease period at a time, never up to the safety net: `keep`
 * renews the leases of every covered row in one store call per heartbeat while this process and
 * its stream live, so a holder that dies is taken over within about one lease. The renewal
 * leaves out a row with a cancel to send (recorded by any instance): its driver is woken and
 * sends it, and if the holder is dead the row's lease runs out and another instance does. (The
 * reconciler looks for such rows every tick too, `pendingIntents`: a heartbeat is far longer
 * than the promise that a cancel reaches the server within a tick.)
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as HandleRecord from "../../HandleRecord.js"
import * as Polling from "../../Polling.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Transition from "../../Transition.js"
import type * as Wire from "../../Wire.js"
import { checkResult, pollDelay } from "./answers.js"
import type { Driver, Engine } from "./context.js"
import { type CommitError, commit, knownInterval, LeaseLost, leaseFor } from "./leases.js"
import {
  isCovered,
  join,
  type Listener,
  leave,
  run as listen,
  makeListener,
  type Start,
  stateOf,
  type Wake,
} from "./listener.js"
import { renewAll } from "./quiet.js"

export type { Wake } from "./listener.js"

/** Push's defaults (see `TaskClient.PushOptions`). */
export const defaults = {
  /** While a stream covers a task: at most one poll per task per minute... */
  safetyNetMs: 60_000,
  /**
   * ...and at most this many safety-net polls a second over every task this instance's streams
   * cover (see `safetyNetDue`): past 24,000 covered tasks each one's safety net stretches
   * (100,000: every 250 s), so that following more tasks costs the client's CPU and the servers
   * nothing more per second (a safety-net poll of an unchanged task costs about 1.5 ms of CPU
   * on B8's machine: some 0.6 of a core at this pace).
   */
  safetyNetPerSecond: 400,
  /** New tasks gathered before the stream is opened again with them (one re-listen per batch). */
  batchMs: 20,
  /**
   * Tasks one stream carries at most: a stream opened again for a new task says every task's
   * state again, so new tasks cost O(this) each, not O(all open tasks). 100,000 tasks: 100 streams.
   */
  tasksPerStream: 1_000,
  /** Resubscribing after a drop: exponential from here, with jitter... */
  backoffMs: 250,
  /** ...up to this. */
  maxBackoffMs: 30_000,
  /** A stream that says nothing (not even a keep-alive) for this long is taken as half-open. */
  idleMs: 60_000,
} as const

interface Watch {
  readonly scope: string
  readonly key: string
  readonly serverId: string
  readonly taskId: string
}
export interface Push {
  readonly enabled: boolean
  readonly safetyNetMs: number
  readonly safetyNetPerSecond: number
  readonly batchMs: number
  readonly tasksPerStream: number
  readonly backoffMs: number
  readonly maxBackoffMs: number
  readonly idleMs: number
  /** Per server id. */
  readonly listeners: Map<string, Listener>
  /** Row id → what it listens for. */
  readonly watched: Map<string, Watch>
  /** Row id → the latest pushed state, until its driver writes it. */
  readonly pending: Map<string, Wire.TaskState>
  /** Row id → the state last written from a push (status and server time): said again, it is not. */
  readonly written: Map<string, string>
  /** Row id → when (store clock) a covered task was last seen, by a poll or a push. */
  readonly lastSeen: Map<string, number>
  /** Row id → its safety-net slot: a point of `pace` when paced, else when it is due (see `safetyNetDue`). */
  readonly slots: Map<string, number>
  /** The slots given out and not yet spent (see `Pace`). */
  readonly pace: Pace
  /**
   * Rows whose next poll the safety net put off, with the lease each is renewed for (see `keep`):
   * polled at their own interval again when uncovered.
   */
  readonly heldBack: Map<string, number>
  /** Subscriptions whose stream is to be started. */
  readonly starts: Queue.Queue<Start>
}
export const make = (options: TaskClient.Options): Effect.Effect<Push> =>
  Effect.map(Queue.unbounded<Start>(), (starts) => {
    const configured = options.push
    const settings = typeof configured === "object" ? configured : {}
    return {
      // On unless turned off: a server without `subscriptions/listen` is polled (see listener.ts).
      enabled: configured !== false,
      safetyNetMs: settings.safetyNetMs ?? defaults.safetyNetMs,
      safetyNetPerSecond: settings.safetyNetPerSecond ?? defaults.safetyNetPerSecond,
      batchMs: settings.batchMs ?? defaults.batchMs,
      // At least one task a stream; not a number: the default.
      tasksPerStream:
        Math.max(1, settings.tasksPerStream ?? defaults.tasksPerStream) || defaults.tasksPerStream,
      backoffMs: settings.backoffMs ?? defaults.backoffMs,
      maxBackoffMs: settings.maxBackoffMs ?? defaults.maxBackoffMs,
      idleMs: settings.idleMs ?? defaults.idleMs,
      listeners: new Map(),
      watched: new Map(),
      pending: new Map(),
      written: new Map(),
      lastSeen: new Map(),
      slots: new Map(),
      pace: makePace(),
      heldBack: new Map(),
      starts,
    }
  })

/** A parked driver's row listens for its task (once per task; cheap when it already does). */
export const watch = (ctx: Engine, driver: Driver, record: HandleRecord.HandleRecord): void => {
  const push = ctx.push
  if (!push.enabled || record.taskId === null) return
  if (record.status !== "working" && record.status !== "input_required") return
  // 2025-11-25 tasks live in a session; their servers have no subscriptions/listen.
  if (record.snapshot?.generation !== undefined && record.snapshot.generation !== "2026-07-28") return
  const known = push.watched.get(driver.id)
  if (known !== undefined && known.taskId === record.taskId) return
  // The row has another task now (a reissue): the old one is not listened for any more.
  if (known !== undefined) unwatch(ctx, driver.id)
  const endpoint = ctx.serversById.get(record.serverId)
  if (endpoint === undefined) return
  let listener = push.listeners.get(record.serverId)
  if (listener === undefined) {
    listener = makeListener(endpoint)
    push.listeners.set(record.serverId, listener)
  }
  if (listener.unsupported) return
  push.watched.set(driver.id, {
    scope: record.scope,
    key: record.key,
    serverId: record.serverId,
    taskId: record.taskId,
  })
  listener.wanted.set(record.taskId, driver.id)
  if (!listener.subscriptionOf.has(record.taskId)) join(push, listener, record.taskId)
}

/** The row's driver ended: nothing is listened for it any more. */
export const unwatch = (ctx: Engine, id: string): void => {
  const push = ctx.push
  const known = push.watched.get(id)
  if (known === undefined) return
  push.watched.delete(id)
  push.pending.delete(id)
  push.written.delete(id)
  push.lastSeen.delete(id)
  spend(push, id)
  push.heldBack.delete(id)
  const listener = push.listeners.get(known.serverId)
  if (listener !== undefined && listener.wanted.get(known.taskId) === id) {
    listener.wanted.delete(known.taskId)
    leave(listener, known.taskId)
  }
}

/**
 * The safety net's slots in use, as points on a grid of one slot per `1000 / safetyNetPerSecond`
 * ms: two slots never share a point, so at most `safetyNetPerSecond` safety-net polls fall in a
 * second. A slot is given back when its poll is sent or its task is no longer covered (it ended,
 * left, or its stream dropped), so the pace is that of the tasks covered now: after a burst has
 * ended, a new task's slot is one safety net after it was seen, not behind the burst's.
 * Points are counted per block too, so a run of full blocks (a burst) is stepped over a block at
 * a time rather than a point at a time.
 */
interface Pace {
  /** Grid points taken. */
  readonly taken: Set<number>
  /** Block (point / `paceBlock`) → its points taken. */
  readonly blocks: Map<number, number>
}

/** Grid points per block of `Pace`. */
const paceBlock = 256

const makePace = (): Pace => ({ taken: new Set(), blocks: new Map() })

/** Takes the first free grid point at or after `from`. */
const takePoint = (pace: Pace, from: number): number => {
  let point = from
  for (;;) {
    const block = Math.floor(point / paceBlock)
    if ((pace.blocks.get(block) ?? 0) >= paceBlock) {
      point = (block + 1) * paceBlock
      continue
    }
    if (!pace.taken.has(point)) {
      pace.taken.add(point)
      pace.blocks.set(block, (pace.blocks.get(block) ?? 0) + 1)
      return point
    }
    point++
  }
}

const freePoint = (pace: Pace, point: number): void => {
  if (!pace.taken.delete(point)) return
  const block = Math.floor(point / paceBlock)
  const left = (pace.blocks.get(block) ?? 1) - 1
  if (left > 0) pace.blocks.set(block, left)
  else pace.blocks.delete(block)
}

/** Whether the safety net keeps a pace: a positive, finite rate (`Infinity` is none). */
const paced = (push: Push): boolean => push.safetyNetPerSecond > 0 && Number.isFinite(push.safetyNetPerSecond)

const spacing = (push: Push): number => 1000 / push.safetyNetPerSecond

/**
 * When a covered task's safety-net poll is due: `safetyNetMs` after it was last seen, in a slot of
 * its own at most `safetyNetPerSecond` per second over every covered task of this instance (see
 * `Pace`). The slot is kept until that poll, so asking again moves nothing. Slots make a pace,
 * not an average: past `safetyNetMs / 1000 × safetyNetPerSecond` covered tasks each one's safety
 * net stretches, and tasks launched in a burst come back spread out rather than in the same burst
 * every safety net (at 10,000 tasks launched at 500 a second, the burst's polls queued behind
 * each other for seconds, and the in-flight lease renewals outnumbered the polls).
 */
const safetyNetDue = (push: Push, id: string, seen: number): number => {
  const kept = push.slots.get(id)
  if (kept !== undefined) return paced(push) ? kept * spacing(push) : kept
  const earliest = seen + push.safetyNetMs
  if (!paced(push)) {
    push.slots.set(id, earliest)
    return earliest
  }
  const point = takePoint(push.pace, Math.ceil(earliest / spacing(push)))
  push.slots.set(id, point)
  return point * spacing(push)
}

/** The row's safety-net poll is being sent (or it is no longer covered): its slot is spent. */
const spend = (push: Push, id: string): void => {
  const kept = push.slots.get(id)
  if (kept === undefined) return
  push.slots.delete(id)
  if (paced(push)) freePoint(push.pace, kept)
}

const covers = (push: Push, id: string): boolean => {
  const known = push.watched.get(id)
  if (known === undefined) return false
  const listener = push.listeners.get(known.serverId)
  return listener !== undefined && isCovered(listener, known.taskId)
}

/**
 * Whether push has nothing to do with the next poll of the row's task, so that its driver may
 * poll it without its record (drive.ts, `glance`): push is off, or the task is watched (or its
 * server has no streams) and no stream covers it, so `instead`, `dueOf` and `watch` would each
 * leave the poll as it is.
 */
export const leavesAlone = (
  ctx: Engine,
  id: string,
  task: { readonly serverId: string; readonly taskId: string },
): boolean => {
  const push = ctx.push
  if (!push.enabled) return true
  if (push.pending.has(id) || push.heldBack.has(id)) return false
  const known = push.watched.get(id)
  if (known !== undefined) return known.taskId === task.taskId && !covers(push, id)
  return push.listeners.get(task.serverId)?.unsupported === true
}

/** Whether a pushed state waits for this row's driver: it acts now, whatever the row's due time. */
export const hasPending = (ctx: Engine, id: string): boolean => ctx.push.pending.has(id)

/**
 * When the row is due. A row the safety net holds back is due at the safety net, kept here: the
 * next poll its row says is its lease's (see `keep`). Once its stream is gone it is polled at its
 * own interval after it was last seen. A row with a cancel to send is due when its row says.
 */
export const dueOf = (ctx: Engine, id: string, record: HandleRecord.HandleRecord, due: number): number => {
  const push = ctx.push
  if (!push.heldBack.has(id)) return due
  // A cancel to send is due at the row's own time (its retry's backoff after a failed send): the
  // safety net puts off polls, never a cancel, or a task that runs shorter than the safety net
  // ends without the cancel ever reaching the server.
  if (record.cancel !== null && !record.cancel.sent) return due
  const seen = push.lastSeen.get(id)
  if (seen === undefined) return due
  if (covers(push, id)) return safetyNetDue(push, id, seen)
  return Math.min(
    due,
    seen + Polling.clampOr(ctx.polling, record.snapshot?.pollIntervalMs, ctx.polling.defaultInitialMs),
  )
}
/** Writes a pushed state as a poll answer: same transition, same lease rules. */
const apply = (
  ctx: Engine,
  id: string,
  record: HandleRecord.HandleRecord,
  task: Wire.TaskState,
  at: number,
) =>
  Effect.gen(function* () {
    const push = ctx.push
    if (task.taskId !== record.taskId) return record
    // Older than what the row holds (a poll answered after the server sent it): nothing new.
    if (record.snapshot !== null && task.lastUpdatedAt < record.snapshot.lastUpdatedAt) return record
    const covered = covers(push, id)
    // A question is answered after a poll of the driver's own (see drive.ts): while the task
    // asks for input it is polled at its interval, covered or not.
    const held = covered && task.status === "working"
    if (covered) push.lastSeen.set(id, at)
    if (held) push.heldBack.set(id, leaseFor(ctx, record))
    else push.heldBack.delete(id)
    const snapshot = record.snapshot
    // A stream opened again says every task's state again: what the row already holds is not
    // written twice.
    if (
      covered &&
      task.status === record.status &&
      snapshot !== null &&
      snapshot.lastUpdatedAt === task.lastUpdatedAt
    ) {
      return record
    }
    push.written.set(id, stateOf(task))
    const checked = yield* checkResult(ctx, task)
    // A held-back row's next poll is kept here; the row says when its lease is renewed again.
    const nextPollAt = held ? at : at + (yield* pollDelay(ctx, checked, record))
    return yield* commit(
      ctx,
      record,
      Transition.Event.Polled({ task: checked, now: at, nextPollAt }),
      "action",
    )
  })

/**
 * What the driver does instead of polling, if anything: write a pushed state, or (the task being
 * covered, with no cancel to send and no input to answer) put the poll off to the safety net.
 * None: poll. Called with the row fresh and leased to the driver, at store time `at`.
 */
export const instead = (
  ctx: Engine,
  driver: Driver,
  record: HandleRecord.HandleRecord,
  at: number,
  inputToAnswer: boolean,
): Effect.Effect<Option.Option<HandleRecord.HandleRecord>, CommitError> =>
  Effect.suspend(() => {
    const push = ctx.push
    if (!push.enabled) return Effect.succeed(Option.none())
    const id = driver.id
    const task = push.pending.get(id)
    if (task !== undefined) {
      push.pending.delete(id)
      return Effect.map(apply(ctx, id, record, task, at), Option.some)
    }
    const wasHeld = push.heldBack.has(id)
    if (!covers(push, id)) {
      push.heldBack.delete(id)
      spend(push, id)
      return wasHeld ? Effect.as(lasting(ctx, record, at), Option.none()) : Effect.succeed(Option.none())
    }
    const seen = push.lastSeen.get(id) ?? at
    push.lastSeen.set(id, seen)
    const cancelToSend = record.cancel !== null && !record.cancel.sent
    // A question is polled for at its interval (see `apply`).
    const working = record.status === "working" && !inputToAnswer
    if (!working) push.heldBack.delete(id)
    const due = at >= safetyNetDue(push, id, seen)
    if (cancelToSend || !working || (due && at >= seen + push.safetyNetMs)) {
      // This poll is the safety net's (or an action needs one first): the task is seen now.
      push.lastSeen.set(id, at)
      spend(push, id)
      return wasHeld ? Effect.as(lasting(ctx, record, at), Option.none()) : Effect.succeed(Option.none())
    }
    // Its slot came, but a push showed the task since it was given: the safety net starts again
    // from that sighting, in a new slot (a push never moves a slot, or a stream opened again,
    // which says every task at once, would bring them all back in one burst).
    if (due) spend(push, id)
    // Nothing is written: the driver parks until the safety net (see `dueOf`) and `keep` renews
    // the row's lease meanwhile.
    push.heldBack.set(id, leaseFor(ctx, record))
    return Effect.succeed(Option.some(record))
  })

/**
 * Before a held-back row is acted on: the lease `keep` renewed may have less than one interval
 * left, and an instance that takes the row over when it runs out must not poll sooner than one
 * interval after this one. Renewed here then (rarely: only when renewals fell behind).
 */
const lasting = (ctx: Engine, record: HandleRecord.HandleRecord, at: number) =>
  (record.leaseExpiresAt ?? 0) - at >= knownInterval(ctx, record)
    ? Effect.void
    : Effect.flatMap(
        ctx.store.renewLease({
          scope: record.scope,
          key: record.key,
          owner: ctx.driverOwner,
          until: at + leaseFor(ctx, record),
        }),
        (renewed) => (renewed ? Effect.void : Effect.fail(new LeaseLost())),
      )

/**
 * One heartbeat's renewal of the rows the streams cover and the safety net holds back: one
 * `renewLeases` call per lease length (and per `renewBatch` rows), each row's lease and next
 * poll moved to one lease from now. A row the store did not renew (a cancel to send, another
 * instance holds it, it settled or is gone) has its driver woken to look at it.
 */
const renewCovered = (ctx: Engine, wake: Wake) =>
  Effect.gen(function* () {
    const push = ctx.push
    const groups = new Map<number, Array<{ readonly scope: string; readonly key: string }>>()
    for (const [id, leaseMs] of push.heldBack) {
      const known = push.watched.get(id)
      if (known === undefined || !covers(push, id)) continue
      const group = groups.get(leaseMs) ?? []
      if (group.length === 0) groups.set(leaseMs, group)
      group.push({ scope: known.scope, key: known.key })
    }
    for (const [leaseMs, rows] of groups) {
      yield* renewAll(ctx, rows, (yield* ctx.store.now) + leaseMs, wake)
    }
  }).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning("could not renew the leases of the rows push covers", { error: error.message }),
    ),
  )

/** Renews covered rows' leases every heartbeat, until the client closes. */
const keep = (ctx: Engine, wake: Wake): Effect.Effect<never> =>
  Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(ctx.heartbeatMs)), renewCovered(ctx, wake)))

/** Push's background work: the listeners, and the renewal of the leases their streams cover. */
export const run = (ctx: Engine, wake: Wake): Effect.Effect<never> =>
  Effect.zipRight(Effect.forkIn(keep(ctx, wake), ctx.clientScope), listen(ctx, wake))
