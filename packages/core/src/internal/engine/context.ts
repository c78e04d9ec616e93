/**
 * What every part of the engine works with: the services, this instance's names, the limits,
 * and the few pieces of process-local state (which rows a fiber of ours drives, who waits on
 * which row). Passed explicitly; no module keeps state of its own.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as ClientError from "../../ClientError.js"
import type * as HandleRecord from "../../HandleRecord.js"
import type * as HandleStore from "../../HandleStore.js"
import * as Json from "../../Json.js"
import type * as Polling from "../../Polling.js"
import * as ServerIdentity from "../../ServerIdentity.js"
import type * as TaskClient from "../../TaskClient.js"
import type * as Transition from "../../Transition.js"
import type * as Wire from "../../Wire.js"
import * as Telemetry from "../telemetry.js"
import * as Alarms from "./alarms.js"
import type * as Push from "./push.js"
import type * as Quiet from "./quiet.js"

/** Every default of the client, in one place. */
export const defaults = {
  instanceId: "local",
  scope: "default",
  leaseMs: 30_000,
  /** Re-reads and re-applies of one event before a write gives up (a row fought over). */
  commitAttempts: 16,
  /** Input rounds a server may ask for before it has created a task. */
  inputRounds: 16,
  /** How long one input handler may take before its question is left unanswered. */
  inputTimeoutMs: 10 * 60_000,
  /** How long closing may spend handing one row off. */
  handOffTimeoutMs: 5_000,
  /** Rows per bulk spread statement at boot (see B3). */
  spreadBatch: 5_000,
  background: { tickMs: 500, batchSize: 100, concurrency: 16 },
} as const

/** Signals "this row was written here": settle and cancel wait on it instead of polling the store. */
export interface RowSignals {
  readonly notify: (id: string) => void
  /** Waits for the next write of `id` in this process, or `timeoutMs`; leaves nothing behind. */
  readonly wait: (id: string, timeoutMs: number) => Effect.Effect<void>
}

const makeSignals = (): RowSignals => {
  const waiting = new Map<string, Set<Deferred.Deferred<void>>>()
  return {
    notify: (id) => {
      const set = waiting.get(id)
      if (set === undefined) return
      waiting.delete(id)
      for (const deferred of set) Deferred.unsafeDone(deferred, Effect.void)
    },
    wait: (id, timeoutMs) =>
      Effect.gen(function* () {
        const deferred = yield* Deferred.make<void>()
        const set = waiting.get(id) ?? new Set()
        set.add(deferred)
        waiting.set(id, set)
        yield* Deferred.await(deferred).pipe(
          Effect.timeoutOption(Duration.millis(Math.max(1, timeoutMs))),
          Effect.ensuring(
            Effect.sync(() => {
              set.delete(deferred)
              if (set.size === 0 && waiting.get(id) === set) waiting.delete(id)
            }),
          ),
        )
      }),
  }
}

/**
 * This process driving one row until it rests (see drivers.ts). While the row waits for its next
 * poll no fiber runs for it: the driver is parked on the client's alarms.
 */
export interface Driver {
  /** The row's id in this process's registries (`rowId`). */
  readonly id: string
  readonly scope: string
  readonly key: string
  readonly handler: TaskClient.InputHandler | undefined
  /** Whether it has had a poll answer itself since it took the row (see drive.ts, answerInput). */
  polled: boolean
  /** No fiber acts on the row now: an alarm (or a wake) resumes it. */
  parked: boolean
  /** A cancel was recorded while its fiber ran: it looks at the row again instead of parking. */
  woken: boolean
  /** Opened once the dispatch (if any) has been answered, given up, or never started. */
  readonly dispatched: Latch
  /**
   * The row as the dispatch left it, kept only when a `callTool` waits on `dispatched` (which
   * takes it, so a parked driver holds no copy): one store read less per call.
   */
  dispatchedRecord: HandleRecord.HandleRecord | undefined
  /** Opened when it ends, however it ends. */
  readonly ended: Latch
}

/**
 * A one-way gate that costs two fields until somebody waits on it (a parked driver holds two,
 * and most are never waited on).
 */
export interface Latch {
  open: boolean
  waiting: Deferred.Deferred<void> | undefined
}

export const makeLatch = (): Latch => ({ open: false, waiting: undefined })

export const openLatch = (latch: Latch): void => {
  latch.open = true
  if (latch.waiting !== undefined) Deferred.unsafeDone(latch.waiting, Effect.void)
  latch.waiting = undefined
}

export const awaitLatch = (latch: Latch): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (latch.open) return Effect.void
    latch.waiting ??= Deferred.unsafeMake(FiberId.none)
    return Deferred.await(latch.waiting)
  })

/**
 * What went wrong when an input handler here was asked one question (see answers.ts): said once
 * per question, not at every poll that asks it again.
 */
export interface HandlerTrouble {
  /** Why its last answer did not fit the request; undefined when the handler failed instead. */
  readonly problems: ReadonlyArray<string> | undefined
}

/** A task id the server handed out, held only in memory until its row's write lands. */
export interface Unwritten {
  /** The row as its writer last knew it. */
  readonly record: HandleRecord.HandleRecord
  readonly event: Extract<Transition.Event, { _tag: "TaskCreated" }>
}

/** A request in flight under a lease, renewed by the client's heartbeat (see leases.ts). */
export interface Held {
  readonly scope: string
  readonly key: string
  readonly owner: string
  /** The lease a renewal grants (ms past the store's now). */
  readonly leaseMs: number
  /** When it started or was last renewed, on the client's clock. */
  renewedAt: number
  /** A renewal found the row in other hands: the next write of the holder learns it lost. */
  stopped: boolean
}

export interface Engine {
  readonly store: HandleStore.HandleStore
  readonly wire: Wire.Wire
  readonly polling: Polling.Options
  /** Fibers outlive the call that started them, not the client. */
  readonly clientScope: Scope.Scope
  readonly options: TaskClient.Options
  /** The sweep's lease name; the instance's id. */
  readonly owner: string
  /**
   * The lease name of rows a fiber of this instance drives, so that the instance's own sweep
   * never claims one of them (no compare-and-set churn). Both names are this instance's: a
   * restart under the same id takes both over.
   */
  readonly driverOwner: string
  readonly defaultScope: string
  readonly leaseMs: number
  /** How often a holder renews a lease while a request or an input question is in flight. */
  readonly heartbeatMs: number
  readonly inputTimeoutMs: number
  readonly argumentLimits: Json.JsonLimits
  readonly resultLimits: Json.JsonLimits
  readonly serversByName: ReadonlyMap<string, { readonly endpoint: Wire.ServerEndpoint; readonly id: string }>
  readonly serversById: ReadonlyMap<string, Wire.ServerEndpoint>
  /**
   * The rows this instance can drive, and so claims: those written against its servers'
   * identities, and those of any identity under a name the store binds to this instance's URL
   * (an operator moved the name here). Names are filled in once the store's bindings are read,
   * when the client starts and again every sweep (see bindings.ts).
   */
  readonly servers: { readonly ids: ReadonlyArray<string>; names: ReadonlyArray<string> }
  readonly drivers: Map<string, Driver>
  /** Rows a fiber of this process has driven and may still hold: handed off on close. */
  readonly held: Set<string>
  /** Rows the reconciler acts on right now: nobody else starts driving them meanwhile. */
  readonly stepping: Set<string>
  readonly signals: RowSignals
  /** When each parked driver is due. */
  readonly alarms: Alarms.Alarms
  /** Requests in flight under a lease, renewed every heartbeat while they last. */
  readonly inFlight: Set<Held>
  /** Row id → what its driver holds in memory of polls it did not write (see quiet.ts). */
  readonly quiet: Map<string, Quiet.Quiet>
  /**
   * Task id → a task the server handed out whose write the store has not taken yet: what closing
   * must not drop (see unwritten.ts).
   */
  readonly unwritten: Map<string, Unwritten>
  /** Per server name: the tools that declare `idempotentHint`, once listed. */
  readonly idempotentTools: Map<string, ReadonlySet<string>>
  /** `subscriptions/listen`: what the rows driven here listen for (see push.ts). */
  readonly push: Push.Push
  /**
   * Row id → input key → how asking the handler here went wrong, for open questions only
   * (forgotten once answered, or when the row's driver ends): a warning once per question, and a
   * settle that stops on an answer that does not fit (see answers.ts, operations.ts).
   */
  readonly handlerTrouble: Map<string, Map<string, HandlerTrouble>>
}

export { rowId } from "../../HandleRecord.js"

/**
 * A row's server: by its identity, else by its name where the store binds that name to this
 * instance's URL. A name this instance has at another URL than the store's is another endpoint:
 * polling a task at a server that never created it would only hear "unknown task" and end it.
 */
export const endpointOf = (
  ctx: Engine,
  record: Pick<HandleRecord.HandleRecord, "serverId">,
): Wire.ServerEndpoint | undefined => {
  const byId = ctx.serversById.get(record.serverId)
  if (byId !== undefined) return byId
  const name = ServerIdentity.nameOf(record.serverId)
  return ctx.servers.names.includes(name) ? ctx.serversByName.get(name)?.endpoint : undefined
}

export const make = (
  options: TaskClient.Options,
  services: Pick<Engine, "store" | "wire" | "polling" | "clientScope" | "push">,
): Effect.Effect<Engine, ServerIdentity.InvalidServerUrl> =>
  Effect.gen(function* () {
    const serversByName = new Map<string, { endpoint: Wire.ServerEndpoint; id: string }>()
    const serversById = new Map<string, Wire.ServerEndpoint>()
    for (const endpoint of options.servers) {
      const id = yield* ServerIdentity.of(endpoint)
      serversByName.set(endpoint.name, { endpoint, id })
      serversById.set(id, endpoint)
    }
    const owner = options.instanceId ?? defaults.instanceId
    const leaseMs = options.leaseMs ?? defaults.leaseMs
    return {
      ...services,
      // Every store write and wire request of the engine is traced and measured here, in one place.
      ...Telemetry.instrument(services, serversByName),
      options,
      owner,
      driverOwner: `${owner}#driver`,
      defaultScope: options.defaultScope ?? defaults.scope,
      leaseMs,
      // Three renewals per lease: one lost write or a slow store does not lose it.
      heartbeatMs: Math.max(1, Math.floor(leaseMs / 3)),
      inputTimeoutMs:
        options.inputTimeout === undefined
          ? defaults.inputTimeoutMs
          : Duration.toMillis(Duration.decode(options.inputTimeout)),
      argumentLimits: options.argumentLimits ?? Json.defaults.argumentLimits,
      resultLimits: options.resultLimits ?? Json.defaults.resultLimits,
      serversByName,
      serversById,
      servers: { ids: [...serversById.keys()], names: [] },
      drivers: new Map(),
      held: new Set(),
      stepping: new Set(),
      signals: makeSignals(),
      alarms: Alarms.make(),
      inFlight: new Set(),
      quiet: new Map(),
      unwritten: new Map(),
      idempotentTools: new Map(),
      handlerTrouble: new Map(),
    }
  })

/** A row this client has no configuration for: nothing can drive it here. */
export const unknownServer = (record: HandleRecord.HandleRecord) =>
  new ClientError.UnknownServer({ server: record.serverId })
