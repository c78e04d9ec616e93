/**
 * The client's spans and metrics, applied in two places: around the store and the wire the
 * engine is given (see engine/context.ts), and around `callTool` (see TaskClient.ts). No fiber is
 * started per request: a span and a few metric updates are all a poll costs, and the span only
 * when a tracer that records spans is installed.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import type * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as HandleRecord from "../HandleRecord.js"
import type * as HandleStore from "../HandleStore.js"
import * as Redaction from "../Redaction.js"
import * as Telemetry from "../Telemetry.js"
import type * as Wire from "../Wire.js"

const Attr = Telemetry.attributes

/**
 * The tracer every fiber has unless the application installs one. Its spans live only in the
 * fiber that made them and are never exported: with it, a span is a cost without a record (a
 * tenth of a poll's CPU, B8), so spans are made only under another tracer.
 */
export const nativeTracer = Effect.runSync(Effect.tracer)

/** `traced()` when the fiber's tracer records spans; `plain` (the same work, unspanned) otherwise. */
const whenTraced = <A, E, R>(
  plain: Effect.Effect<A, E, R>,
  traced: () => Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> => Effect.tracerWith((tracer) => (tracer === nativeTracer ? plain : traced()))

/** Tagged metrics, made once per tag value: a poll does not build a metric. */
const tagged = <Type, In, Out>(metric: Metric.Metric<Type, In, Out>, tag: string) => {
  const made = new Map<string, Metric.Metric<Type, In, Out>>()
  return (value: string) => {
    let found = made.get(value)
    if (found === undefined) {
      found = Metric.tagged(metric, tag, value)
      made.set(value, found)
    }
    return found
  }
}

const pollsBy = tagged(Telemetry.polls, "outcome")
const openCallsBy = tagged(Telemetry.openCalls, "status")

/** Moves the open-calls gauge of `status` by `by`, if the status counts (open or in doubt). */
const countOpen = (status: HandleRecord.Status | undefined, by: number) => {
  if (status !== undefined && (HandleRecord.isOpen(status) || status === "in_doubt")) {
    // Gauges add what they are modified by: several clients in one process share the gauge.
    openCallsBy(status).unsafeModify(by, [])
  }
}
const writeLatencyBy = tagged(Telemetry.storeWriteLatency, "operation")

const outcomeOf = <A, E>(exit: Exit.Exit<A, E>): Telemetry.OutcomeClass => {
  if (Exit.isSuccess(exit)) return "ok"
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const tag = (failure.value as { readonly _tag?: unknown })._tag
    if (typeof tag === "string") return tag as Telemetry.OutcomeClass
  }
  return "defect"
}

/**
 * The span of the call a task belongs to, by task id. A driver that resumes from an alarm runs in
 * a fiber of the client, outside the call's span: its polls and writes are parented here, so one
 * call's trace holds its whole life in this process. Bounded: the oldest entries go first.
 */
interface CallSpans {
  readonly get: (taskId: string | null) => Tracer.AnySpan | undefined
  readonly set: (taskId: string, span: Tracer.AnySpan) => void
  readonly delete: (taskId: string | null) => void
}

const maxCallSpans = 10_000

const makeCallSpans = (): CallSpans => {
  const spans = new Map<string, Tracer.AnySpan>()
  return {
    get: (taskId) => (taskId === null ? undefined : spans.get(taskId)),
    set: (taskId, span) => {
      spans.delete(taskId)
      // Only the ids: a live span keeps its attributes and its parents alive (kilobytes per
      // open task, B8), while a child needs no more than the ids to join the trace.
      spans.set(
        taskId,
        Tracer.externalSpan({ traceId: span.traceId, spanId: span.spanId, sampled: span.sampled }),
      )
      if (spans.size > maxCallSpans) {
        const oldest = spans.keys().next()
        if (oldest.done !== true) spans.delete(oldest.value)
      }
    },
    delete: (taskId) => {
      if (taskId !== null) spans.delete(taskId)
    },
  }
}

/** Runs `effect` under the call's span when it runs outside any span (a resumed driver). */
const underCall = <A, E, R>(
  calls: CallSpans,
  taskId: string | null,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> => {
  const parent = calls.get(taskId)
  if (parent === undefined) return effect
  return whenTraced(effect, () =>
    Effect.flatMap(Effect.currentSpan.pipe(Effect.option), (current) =>
      Option.isSome(current) ? effect : Effect.withParentSpan(effect, parent),
    ),
  )
}

/**
 * The status this process last saw each row in (bounded like the call spans): a write that
 * leaves a row in doubt counts as a transition only when the row was not in doubt already (a
 * lease taken on an in-doubt row writes it again).
 */
const makeLastStatus = () => {
  const statuses = new Map<string, HandleRecord.Status>()
  const see = (record: HandleRecord.HandleRecord) => {
    const id = HandleRecord.rowId(record.scope, record.key)
    const before = statuses.get(id)
    statuses.delete(id)
    statuses.set(id, record.status)
    if (before !== record.status) {
      countOpen(before, -1)
      countOpen(record.status, 1)
    }
    if (statuses.size > maxCallSpans) {
      const oldest = statuses.entries().next()
      if (oldest.done !== true) {
        statuses.delete(oldest.value[0])
        countOpen(oldest.value[1], -1)
      }
    }
  }
  return {
    see,
    /** Records `written`; true when it entered in_doubt with this write. */
    enteredInDoubt: (written: HandleRecord.HandleRecord) => {
      const before = statuses.get(HandleRecord.rowId(written.scope, written.key))
      see(written)
      return written.status === "in_doubt" && before !== "in_doubt"
    },
  }
}

/**
 * Runs `effect` and, as it ends, hands `record` its exit, the milliseconds it took on the
 * fiber's clock, and the fiber's metric labels: one step per request or write, where a chain of
 * `Metric.update` effects cost more than the metrics themselves.
 */
const measured = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  record: (exit: Exit.Exit<A, E>, elapsedMs: number, labels: ReadonlyArray<MetricLabel.MetricLabel>) => void,
): Effect.Effect<A, E, R> =>
  Effect.clockWith((clock) => {
    const start = clock.unsafeCurrentTimeMillis()
    return Effect.onExit(effect, (exit) =>
      Effect.withFiberRuntime<void>((fiber) => {
        record(exit, clock.unsafeCurrentTimeMillis() - start, fiber.getFiberRef(FiberRef.currentMetricLabels))
        return Effect.void
      }),
    )
  })

const timedWrite = <A, E, R>(
  operation: string,
  attributes: () => Record<string, unknown>,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> =>
  measured(
    whenTraced(effect, () =>
      Effect.withSpan(effect, `${Telemetry.spans.storePrefix}${operation}`, {
        kind: "client",
        captureStackTrace: false,
        attributes: { [Attr.operation]: operation, ...attributes() },
      }),
    ),
    (_, elapsedMs, labels) => writeLatencyBy(operation).unsafeUpdate(elapsedMs, labels),
  )

const rowAttributes = (scope: string, key: string) => () => ({ [Attr.scope]: scope, [Attr.key]: key })
const noAttributes = () => ({})

const instrumentStore = (store: HandleStore.HandleStore, calls: CallSpans): HandleStore.HandleStore => {
  const seen = makeLastStatus()
  return {
    ...store,
    get: (scope, key) =>
      Effect.tap(store.get(scope, key), Option.match({ onNone: () => {}, onSome: seen.see })),
    insertOrGet: (handle) =>
      timedWrite(
        "insertOrGet",
        () => ({
          ...rowAttributes(handle.scope, handle.key)(),
          [Attr.serverId]: handle.serverId,
          [Attr.tool]: handle.tool,
        }),
        store.insertOrGet(handle),
      ).pipe(Effect.tap((result) => seen.see(result.record))),
    update: (record, options) =>
      underCall(
        calls,
        record.taskId,
        timedWrite(
          "update",
          () => ({ ...rowAttributes(record.scope, record.key)(), [Attr.status]: record.status }),
          store.update(record, options),
        ),
      ).pipe(
        Effect.tap((written) => {
          if (HandleRecord.isTerminal(written.status)) calls.delete(written.taskId)
          return seen.enteredInDoubt(written) ? Metric.increment(Telemetry.inDoubt) : Effect.void
        }),
      ),
    claimDue: (options) =>
      timedWrite("claimDue", noAttributes, store.claimDue(options)).pipe(
        Effect.tap((claimed) => {
          for (const record of claimed) seen.see(record)
          return claimed.length === 0
            ? Effect.void
            : Metric.incrementBy(Telemetry.leaseTakeovers, claimed.length)
        }),
      ),
    spreadDue: (options) =>
      timedWrite("spreadDue", noAttributes, store.spreadDue(options)).pipe(
        Effect.tap((moved) =>
          moved === 0 ? Effect.void : Metric.incrementBy(Telemetry.leaseTakeovers, moved),
        ),
      ),
    release: (scope, key, owner) =>
      timedWrite("release", rowAttributes(scope, key), store.release(scope, key, owner)),
    renewLease: (options) =>
      timedWrite("renewLease", rowAttributes(options.scope, options.key), store.renewLease(options)),
    renewLeases: (options) => timedWrite("renewLeases", noAttributes, store.renewLeases(options)),
    releaseOwner: (options) => timedWrite("releaseOwner", noAttributes, store.releaseOwner(options)),
    deleteSettledBefore: (options) =>
      timedWrite("deleteSettledBefore", noAttributes, store.deleteSettledBefore(options)),
  }
}

/** The server identity of a configured server's name (rows name servers by it). */
type ServerIds = ReadonlyMap<string, { readonly id: string }>

/** A wire request's span: method, server, redacted task id, and how it ended. */
const request = <A, E, R>(
  servers: ServerIds,
  method: string,
  server: Wire.ServerEndpoint,
  attributes: Record<string, unknown>,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> =>
  whenTraced(effect, () =>
    effect.pipe(
      Effect.onExit((exit) => Effect.annotateCurrentSpan(Attr.outcome, outcomeOf(exit))),
      // No stack trace per request or store write: capturing one cost more than the span itself
      // (B8), and it would only point into the engine, never at the caller's code.
      Effect.withSpan(method, {
        kind: "client",
        captureStackTrace: false,
        attributes: {
          [Attr.method]: method,
          [Attr.serverName]: server.name,
          [Attr.serverId]: servers.get(server.name)?.id,
          ...attributes,
        },
      }),
    ),
  )

/** A `tasks/*` request's span, under the call its task belongs to. */
const onTask = <A, E, R>(
  servers: ServerIds,
  calls: CallSpans,
  method: string,
  server: Wire.ServerEndpoint,
  taskId: string,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> =>
  underCall(
    calls,
    taskId,
    request(servers, method, server, { [Attr.taskId]: Redaction.taskId(taskId) }, effect),
  )

const instrumentWire = (wire: Wire.Wire, calls: CallSpans, servers: ServerIds): Wire.Wire => ({
  // What is not a request of its own (e.g. an optional check) passes through untouched.
  ...wire,
  discover: (server) => request(servers, "server/discover", server, {}, wire.discover(server)),
  listTools: (server) => request(servers, "tools/list", server, {}, wire.listTools(server)),
  callTool: (server, call) =>
    whenTraced(wire.callTool(server, call), () =>
      Effect.flatMap(Effect.option(Effect.currentSpan), (parent) =>
        request(
          servers,
          "tools/call",
          server,
          { [Attr.tool]: call.name },
          wire.callTool(server, call).pipe(
            Effect.tap((answer) => {
              if (answer._tag !== "Task") return Effect.void
              // The call's span (not this request's) parents what later happens to the task.
              if (Option.isSome(parent)) calls.set(answer.task.taskId, parent.value)
              return Effect.annotateCurrentSpan({
                [Attr.taskId]: Redaction.taskId(answer.task.taskId),
                [Attr.status]: answer.task.status,
              })
            }),
          ),
        ),
      ),
    ),
  // Arguments past the task id (where the task lives) are passed on as they come.
  getTask: (...args) =>
    measured(
      onTask(
        servers,
        calls,
        "tasks/get",
        args[0],
        args[1],
        wire
          .getTask(...args)
          .pipe(Effect.tap((task) => Effect.annotateCurrentSpan(Attr.status, task.status))),
      ),
      (exit, elapsedMs, labels) => {
        pollsBy(outcomeOf(exit)).unsafeUpdate(1, labels)
        Telemetry.pollLatency.unsafeUpdate(elapsedMs, labels)
      },
    ),
  updateTask: (...args) => onTask(servers, calls, "tasks/update", args[0], args[1], wire.updateTask(...args)),
  cancelTask: (...args) => onTask(servers, calls, "tasks/cancel", args[0], args[1], wire.cancelTask(...args)),
})

/** The store and the wire of one client, instrumented; they share which task belongs to which call. */
export const instrument = (
  services: { readonly store: HandleStore.HandleStore; readonly wire: Wire.Wire },
  servers: ServerIds,
): { readonly store: HandleStore.HandleStore; readonly wire: Wire.Wire } => {
  const calls = makeCallSpans()
  return {
    store: instrumentStore(services.store, calls),
    wire: instrumentWire(services.wire, calls, servers),
  }
}

/** The span of a durable call, from its start to the handle; engine log lines in it name the call. */
export const callTool = <
  A extends { readonly key: string; readonly scope: string; readonly launched: boolean },
  E,
  R,
>(
  server: string,
  tool: string,
  options: { readonly key?: string | undefined; readonly scope?: string | undefined } | undefined,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> => {
  const known: Record<string, string> = { server, tool }
  if (options?.key !== undefined) known.key = options.key
  if (options?.scope !== undefined) known.scope = options.scope
  const logged = Effect.annotateLogs(effect, known)
  return whenTraced(logged, () =>
    logged.pipe(
      Effect.tap((handle) =>
        Effect.annotateCurrentSpan({
          [Attr.key]: handle.key,
          [Attr.scope]: handle.scope,
          [Attr.launched]: handle.launched,
        }),
      ),
      Effect.withSpan(Telemetry.spans.callTool, {
        kind: "internal",
        attributes: { [Attr.serverName]: server, [Attr.tool]: tool },
      }),
    ),
  )
}

/** Engine log lines of an operation on one row name it. */
export const onRow = <A, E, R>(scope: string, key: string, effect: Effect.Effect<A, E, R>) =>
  Effect.annotateLogs(effect, { key, scope })
