/**
 * The listener of one endpoint (see push.ts): its tasks spread over `subscriptions/listen`
 * streams of at most `tasksPerStream` tasks each (a subscription per stream). A new task joins a
 * subscription with room, which is opened again (in batches) to carry it; a full one is never
 * opened again for new tasks. The spec has no way to add a task to an open stream, and a stream
 * opened again says the state of every task it carries: one stream for every task would make
 * launching N tasks cost O(N²) states heard. Each stream is resubscribed with backoff after a
 * drop. The listener only hands states to the rows' drivers and wakes them; the drivers write.
 */
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberId from "effect/FiberId"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Telemetry from "../../Telemetry.js"
import type * as Wire from "../../Wire.js"
import type { Engine } from "./context.js"
import type { Push } from "./push.js"

/**
 * How much longer new tasks are gathered per task the stream already carries (1 s for a full
 * stream of 1,000): a stream opened again says every task's state again, so while tasks come
 * along at any rate, a stream says at most about 1,000 states a second again.
 */
const relistenMsPerTask = 1

/** JSON-RPC "method not found": the server has no `subscriptions/listen`. */
const methodNotFound = -32601

/** One stream and the tasks it carries. */
export interface Subscription {
  /** The tasks of rows driven here that this stream is for. */
  readonly members: Set<string>
  /** What the stream open now (or being opened) asked for. */
  requested: ReadonlySet<string>
  /** What its acknowledgement agreed to: these rows poll only as a safety net. */
  readonly covered: Set<string>
  /** Completed when a member not yet requested joins, or when the last member leaves. */
  demand: Deferred.Deferred<void>
}

export interface Listener {
  readonly endpoint: Wire.ServerEndpoint
  /** Task id → row id: the tasks of this endpoint that rows driven here listen for. */
  readonly wanted: Map<string, string>
  /** Task id → the subscription that carries it. */
  readonly subscriptionOf: Map<string, Subscription>
  /** The subscriptions with members. */
  readonly subscriptions: Set<Subscription>
  /** The one new tasks joined last: tried first, since tasks come along in runs. */
  filling: Subscription | undefined
  /** Whether the endpoint takes `subscriptions/listen`, once `server/discover` said. */
  readonly pushes: Deferred.Deferred<boolean>
  /** Whether the endpoint was asked yet. */
  asked: boolean
  /** No push here (no tasks extension, no `subscriptions/listen`, a 2025-11-25 server). */
  unsupported: boolean
}

export const fresh = () => Deferred.unsafeMake<void>(FiberId.none)

/** A subscription whose stream is to be started (see `run`). */
export interface Start {
  readonly listener: Listener
  readonly subscription: Subscription
}

export const makeListener = (endpoint: Wire.ServerEndpoint): Listener => ({
  endpoint,
  wanted: new Map(),
  subscriptionOf: new Map(),
  subscriptions: new Set(),
  filling: undefined,
  pushes: Deferred.unsafeMake<boolean>(FiberId.none),
  asked: false,
  unsupported: false,
})

const hasRoom = (push: Push, listener: Listener, subscription: Subscription | undefined) =>
  subscription !== undefined &&
  listener.subscriptions.has(subscription) &&
  subscription.members.size < push.tasksPerStream

/**
 * The task joins a subscription with room (the one tasks joined last first), or a new one: its
 * stream is opened (again) to carry it.
 */
export const join = (push: Push, listener: Listener, taskId: string): void => {
  let chosen = listener.filling
  if (!hasRoom(push, listener, chosen)) {
    chosen = undefined
    for (const one of listener.subscriptions) {
      if (hasRoom(push, listener, one)) {
        chosen = one
        break
      }
    }
  }
  if (chosen === undefined) {
    chosen = { members: new Set(), requested: new Set(), covered: new Set(), demand: fresh() }
    listener.subscriptions.add(chosen)
    Queue.unsafeOffer(push.starts, { listener, subscription: chosen })
  }
  listener.filling = chosen
  chosen.members.add(taskId)
  listener.subscriptionOf.set(taskId, chosen)
  if (!chosen.requested.has(taskId)) Deferred.unsafeDone(chosen.demand, Effect.void)
}

/** The task is not listened for any more; a subscription left with no task closes its stream. */
export const leave = (listener: Listener, taskId: string): void => {
  const subscription = listener.subscriptionOf.get(taskId)
  if (subscription === undefined) return
  listener.subscriptionOf.delete(taskId)
  subscription.members.delete(taskId)
  subscription.covered.delete(taskId)
  if (subscription.members.size === 0) {
    listener.subscriptions.delete(subscription)
    if (listener.filling === subscription) listener.filling = undefined
    Deferred.unsafeDone(subscription.demand, Effect.void)
  }
}

/** Whether a stream's acknowledgement covers the task. */
export const isCovered = (listener: Listener, taskId: string): boolean =>
  listener.subscriptionOf.get(taskId)?.covered.has(taskId) === true

/** The stream said nothing, not even a keep-alive, for `idleMs`: half-open, so opened again. */
class Silent extends Data.TaggedError("Silent") {}

type OpenReason = "first" | "relisten" | "reconnect"

const countEnd = (reason: "dropped" | "ended" | "silent") =>
  Metric.increment(Metric.tagged(Telemetry.pushStreamEnds, Telemetry.attributes.pushReason, reason))

export const stateOf = (task: Wire.TaskState) => `${task.status} ${task.lastUpdatedAt}`

/** Wakes a row's driver (resumed at once if parked): see `Drivers.wake`. */
export type Wake = (scope: string, key: string) => Effect.Effect<boolean>

const wakeAll = (push: Push, listener: Listener, taskIds: Iterable<string>, wake: Wake) =>
  Effect.forEach(
    [...taskIds],
    (taskId) => {
      const id = listener.wanted.get(taskId)
      const known = id === undefined ? undefined : push.watched.get(id)
      return known === undefined ? Effect.void : wake(known.scope, known.key)
    },
    { discard: true },
  )

/** The stream is gone: its rows poll at their own interval again. */
const uncover = (push: Push, listener: Listener, subscription: Subscription, wake: Wake) =>
  Effect.suspend(() => {
    const was = [...subscription.covered]
    subscription.covered.clear()
    return wakeAll(push, listener, was, wake)
  })

const onTask = (push: Push, listener: Listener, wake: Wake, task: Wire.TaskState): Effect.Effect<void> =>
  Effect.suspend(() => {
    const id = listener.wanted.get(task.taskId)
    const known = id === undefined ? undefined : push.watched.get(id)
    if (id === undefined || known === undefined) return Effect.void
    // A stream opened again says every task's state again: one already written wakes nobody.
    if (push.written.get(id) === stateOf(task)) return Effect.void
    push.pending.set(id, task)
    return Effect.asVoid(wake(known.scope, known.key))
  })

const onEvent =
  (push: Push, listener: Listener, subscription: Subscription, wake: Wake, healthy: Effect.Effect<void>) =>
  (event: Wire.ListenEvent): Effect.Effect<void> =>
    Effect.suspend(() => {
      switch (event._tag) {
        case "Acknowledged": {
          const agreed = new Set(event.taskIds.filter((taskId) => subscription.requested.has(taskId)))
          const dropped = [...subscription.covered].filter((taskId) => !agreed.has(taskId))
          subscription.covered.clear()
          for (const taskId of agreed) if (subscription.members.has(taskId)) subscription.covered.add(taskId)
          return Effect.zipRight(healthy, wakeAll(push, listener, dropped, wake))
        }
        case "Alive":
          return Effect.void
        case "Task":
          return Effect.zipRight(Metric.increment(Telemetry.pushes), onTask(push, listener, wake, event.task))
        case "Malformed": {
          // What the server said cannot be used: the task is polled instead.
          if (event.taskId === undefined)
            return Effect.logWarning("a malformed notification", { reason: event.reason })
          listener.subscriptionOf.get(event.taskId)?.covered.delete(event.taskId)
          return Effect.zipRight(
            Effect.logWarning("a malformed task notification; the task is polled", { reason: event.reason }),
            wakeAll(push, listener, [event.taskId], wake),
          )
        }
      }
    })

/** A failure that says nothing about the server's methods: no answer, not sent, busy. */
const isPassing = (error: Wire.WireError): boolean =>
  error._tag === "NoAnswer" || error._tag === "NotSent" || error._tag === "ServerBusy"

const backoffOf = (push: Push) =>
  Schedule.exponential(Duration.millis(push.backoffMs)).pipe(
    Schedule.union(Schedule.spaced(Duration.millis(push.maxBackoffMs))),
    Schedule.jittered,
  )

/** One subscription's stream: opened again for new members, resubscribed after drops, closed once it has none. */
const subscribe = (ctx: Engine, listener: Listener, subscription: Subscription, wake: Wake) =>
  Effect.gen(function* () {
    const push = ctx.push
    const open = ctx.wire.listen
    if (open === undefined) return
    const live = () => listener.subscriptions.has(subscription) && !listener.unsupported
    let retry = yield* Schedule.driver(backoffOf(push))
    let reason: OpenReason = "first"
    // Whether the stream open now was acknowledged: one that falls silent before it never was.
    let acknowledged = false
    const healthy = Effect.suspend(() => {
      acknowledged = true
      return Effect.zipRight(
        retry.reset,
        Metric.increment(Metric.tagged(Telemetry.pushStreams, Telemetry.attributes.pushReason, reason)),
      )
    })
    for (;;) {
      if (!live()) return
      if (![...subscription.members].some((taskId) => !subscription.requested.has(taskId))) {
        yield* Deferred.await(subscription.demand)
        if (!live()) return
      }
      // A few more tasks may come along: one stream for all of them. Each stream asks for every
      // task again (and hears each one's state again), so a large one is opened again less often:
      // meanwhile its new tasks are polled.
      yield* Effect.sleep(Duration.millis(push.batchMs + subscription.members.size * relistenMsPerTask))
      if (!live()) return
      subscription.demand = fresh()
      subscription.requested = new Set(subscription.members)
      acknowledged = false
      const ended = yield* open(listener.endpoint, [...subscription.requested]).pipe(
        // Bytes or keep-alives reset the wait: a stream that says nothing at all is half-open.
        Stream.timeoutFail(() => new Silent(), Duration.millis(push.idleMs)),
        Stream.runForEach(onEvent(push, listener, subscription, wake, healthy)),
        Effect.either,
        // New tasks to listen for (or none left): this stream gives way to one that covers them
        // too. What it covered stays covered (the new stream says every task's state again).
        Effect.raceFirst(Effect.as(Deferred.await(subscription.demand), "relisten" as const)),
      )
      if (ended === "relisten") {
        reason = "relisten"
        continue
      }
      reason = "reconnect"
      if (Either.isLeft(ended) && ended.left._tag === "Silent" && acknowledged) {
        // Opened again at once, like a relisten: what it covered stays covered meanwhile (its
        // leases too), and the new stream says every task's state again. A server that cannot
        // be reached fails that open (or never acknowledges it), and its tasks are polled then.
        yield* countEnd("silent")
        yield* Effect.logDebug("task subscription silent; opening it again")
        subscription.requested = new Set()
        continue
      }
      yield* countEnd(Either.isLeft(ended) ? (ended.left._tag === "Silent" ? "silent" : "dropped") : "ended")
      subscription.requested = new Set()
      yield* uncover(push, listener, subscription, wake)
      if (Either.isLeft(ended)) {
        const error = ended.left
        if (error._tag === "RpcErrorAnswer" && error.error.code === methodNotFound) {
          listener.unsupported = true
          return
        }
        yield* Effect.logDebug("task subscription dropped; polling until it is back", { error: error._tag })
      }
      // Dropped, or ended by the server: resubscribe after a while, polling meanwhile.
      yield* Effect.catchAll(retry.next(undefined), () =>
        Effect.flatMap(Schedule.driver(backoffOf(push)), (again) => Effect.sync(() => (retry = again))),
      )
    }
  })

/** Whether the endpoint pushes: `server/discover` asked once, again while it cannot be reached. */
const discover = (ctx: Engine, listener: Listener) =>
  Effect.gen(function* () {
    // A server that cannot be reached now is asked again (its tasks are polled meanwhile), one
    // that answers otherwise is not.
    const info = yield* Effect.either(
      ctx.wire
        .discover(listener.endpoint)
        .pipe(Effect.retry({ schedule: backoffOf(ctx.push), while: isPassing })),
    )
    const pushes = ctx.wire.listen !== undefined && Either.isRight(info) && info.right.supportsTasks
    if (!pushes) listener.unsupported = true
    yield* Deferred.succeed(listener.pushes, pushes)
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.zipRight(
        Effect.logWarning("could not learn whether the server pushes; its tasks are polled", { cause }),
        Effect.sync(() => {
          listener.unsupported = true
          Deferred.unsafeDone(listener.pushes, Effect.succeed(false))
        }),
      ),
    ),
  )

/**
 * Starts each subscription's stream, once its endpoint is known to push (the endpoint asked the
 * first time one of its rows listens), until the client closes.
 */
export const run = (ctx: Engine, wake: Wake): Effect.Effect<never> =>
  Effect.forever(
    Effect.flatMap(Queue.take(ctx.push.starts), ({ listener, subscription }) =>
      Effect.suspend(() => {
        const asking = listener.asked ? Effect.void : Effect.forkIn(discover(ctx, listener), ctx.clientScope)
        listener.asked = true
        const stream = Effect.flatMap(Deferred.await(listener.pushes), (pushes) =>
          pushes ? subscribe(ctx, listener, subscription, wake) : Effect.void,
        ).pipe(
          Effect.catchAllCause((cause) => Effect.logWarning("task subscription stopped", { cause })),
          Effect.annotateLogs({ server: listener.endpoint.name }),
        )
        return Effect.zipRight(asking, Effect.forkIn(stream, ctx.clientScope))
      }),
    ),
  )
