/**
 * The listener of one endpoint (see push.ts): one `subscriptions/listen` stream at a time for
 * the tasks the rows driven here listen for, opened again (in batches) when new tasks come,
 * resubscribed with backoff after a drop. It only hands states to the rows' drivers and wakes
 * them; the drivers write.
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

/** How much longer new tasks are gathered per task the stream already carries (1 s per 10,000). */
const relistenMsPerTask = 0.1

/** JSON-RPC "method not found": the server has no `subscriptions/listen`. */
const methodNotFound = -32601

export interface Listener {
  readonly endpoint: Wire.ServerEndpoint
  /** Task id → row id: the tasks of this endpoint that rows driven here listen for. */
  readonly wanted: Map<string, string>
  /** What the stream open now (or being opened) asked for. */
  requested: ReadonlySet<string>
  /** What its acknowledgement agreed to: these rows poll only as a safety net. */
  readonly covered: Set<string>
  /** Completed when a task not yet requested is wanted. */
  demand: Deferred.Deferred<void>
  /** No push here (no tasks extension, no `subscriptions/listen`, a 2025-11-25 server). */
  unsupported: boolean
}

export const fresh = () => Deferred.unsafeMake<void>(FiberId.none)

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
const uncover = (push: Push, listener: Listener, wake: Wake) =>
  Effect.suspend(() => {
    const was = [...listener.covered]
    listener.covered.clear()
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
  (push: Push, listener: Listener, wake: Wake, healthy: Effect.Effect<void>) =>
  (event: Wire.ListenEvent): Effect.Effect<void> =>
    Effect.suspend(() => {
      switch (event._tag) {
        case "Acknowledged": {
          const agreed = new Set(event.taskIds.filter((taskId) => listener.requested.has(taskId)))
          const dropped = [...listener.covered].filter((taskId) => !agreed.has(taskId))
          listener.covered.clear()
          for (const taskId of agreed) if (listener.wanted.has(taskId)) listener.covered.add(taskId)
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
          listener.covered.delete(event.taskId)
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

/** One endpoint's listener: one stream at a time, opened again for new tasks, resubscribed after drops. */
const listen = (ctx: Engine, listener: Listener, wake: Wake) =>
  Effect.gen(function* () {
    const push = ctx.push
    const open = ctx.wire.listen
    const backoff = Schedule.exponential(Duration.millis(push.backoffMs)).pipe(
      Schedule.union(Schedule.spaced(Duration.millis(push.maxBackoffMs))),
      Schedule.jittered,
    )
    // Whether the server offers the Tasks extension; a server that cannot be reached now is
    // asked again (its tasks are polled meanwhile), one that answers otherwise is not.
    const info = yield* Effect.either(
      ctx.wire.discover(listener.endpoint).pipe(Effect.retry({ schedule: backoff, while: isPassing })),
    )
    if (open === undefined || Either.isLeft(info) || !info.right.supportsTasks) {
      listener.unsupported = true
      return
    }
    let retry = yield* Schedule.driver(backoff)
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
      if (![...listener.wanted.keys()].some((taskId) => !listener.requested.has(taskId))) {
        yield* Deferred.await(listener.demand)
      }
      // A few more tasks may come along: one stream for all of them. Each stream asks for every
      // task again (and hears each one's state again), so a large one is opened again less often:
      // meanwhile its new tasks are polled.
      yield* Effect.sleep(Duration.millis(push.batchMs + listener.wanted.size * relistenMsPerTask))
      listener.demand = fresh()
      listener.requested = new Set(listener.wanted.keys())
      acknowledged = false
      const ended = yield* open(listener.endpoint, [...listener.requested]).pipe(
        // Bytes or keep-alives reset the wait: a stream that says nothing at all is half-open.
        Stream.timeoutFail(() => new Silent(), Duration.millis(push.idleMs)),
        Stream.runForEach(onEvent(push, listener, wake, healthy)),
        Effect.either,
        // New tasks to listen for: this stream gives way to one that covers them too. What it
        // covered stays covered (the new stream says every task's state again when it opens).
        Effect.raceFirst(Effect.as(Deferred.await(listener.demand), "relisten" as const)),
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
        listener.requested = new Set()
        continue
      }
      yield* countEnd(Either.isLeft(ended) ? (ended.left._tag === "Silent" ? "silent" : "dropped") : "ended")
      listener.requested = new Set()
      yield* uncover(push, listener, wake)
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
        Effect.flatMap(Schedule.driver(backoff), (again) => Effect.sync(() => (retry = again))),
      )
    }
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("task subscription listener stopped", { cause })),
    Effect.annotateLogs({ server: listener.endpoint.name }),
  )

/** Starts each endpoint's listener the first time a row of it listens, until the client closes. */
export const run = (ctx: Engine, wake: Wake): Effect.Effect<never> =>
  Effect.forever(
    Effect.flatMap(Queue.take(ctx.push.starts), (serverId) => {
      const listener = ctx.push.listeners.get(serverId)
      return listener === undefined
        ? Effect.void
        : Effect.forkIn(listen(ctx, listener, wake), ctx.clientScope)
    }),
  )
