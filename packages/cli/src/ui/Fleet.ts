/**
 * What the fleet and servers pages of `mcp-handles ui` read from the store port: the instances
 * are the processes holding an instance id (`listInstances`, with their heartbeats) and the
 * owners of the leases on open rows (a process gone leaves its lapsed leases), the outcome backlog is what a consumer has not claimed
 * yet, and a rebind is the store's `rebind` over every identity of the old name, as
 * `mcp-handles servers --rebind` does.
 *
 * @since 0.5.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as ServerIdentity from "@mcp-handles/core/ServerIdentity"
import * as Effect from "effect/Effect"
import { type CliError, fromKnown, usage } from "../CliError.js"
import * as Common from "../Common.js"
import * as Rebind from "../Rebind.js"
import * as Row from "../Row.js"
import * as Audit from "./Audit.js"

/**
 * One instance as its leases show it.
 *
 * @since 0.5.0
 * @category models
 */
export interface Instance {
  readonly id: string
  /** Rows whose lease it holds now. */
  readonly held: number
  /** Rows it leased last whose lease ran out (it detached, died or hangs). */
  readonly lapsed: number
  /** The latest lease it renewed: its heartbeat reaches this far. */
  readonly leaseUntil: number
  /** Its latest write to a row it holds or held (0: none). */
  readonly lastWrite: number
  /** Its hold on the instance id, as the store lists it (null: it holds none now). */
  readonly holder: HandleStore.InstanceRecord | null
}

/**
 * A consumer of a scope's outcomes, and the outcomes settled since it last claimed (at least
 * that many wait for it: those claimed and not yet acknowledged are not counted).
 *
 * @since 0.5.0
 * @category models
 */
export interface Backlog {
  readonly consumer: HandleStore.ConsumerRecord
  readonly waiting: number
  /** The count stopped at the bound: at least `waiting`. */
  readonly more: boolean
}

/**
 * @since 0.5.0
 * @category models
 */
export interface FleetView {
  readonly instances: ReadonlyArray<Instance>
  readonly backlogs: ReadonlyArray<Backlog>
  readonly now: number
}

/**
 * How many rows a backlog count reads per consumer before it says `N+`.
 *
 * @since 0.5.0
 * @category constants
 */
export const backlogScan = { pages: 10, pageSize: 1000 } as const

const backlogOf = (
  session: Common.Session,
  consumer: HandleStore.ConsumerRecord,
): Effect.Effect<Backlog, CliError> =>
  Effect.gen(function* () {
    let waiting = 0
    let cursor: string | undefined
    for (let pages = 0; pages < backlogScan.pages; pages++) {
      const listed: HandleStore.ListPage = yield* session.store
        .list({
          scope: consumer.scope,
          statuses: HandleRecord.restingStatuses,
          limit: backlogScan.pageSize,
          ...(cursor === undefined ? {} : { cursor }),
        })
        .pipe(Effect.mapError(fromKnown))
      waiting += listed.records.filter(
        (r) => r.settledAt !== null && r.settledAt > consumer.lastSeenAt,
      ).length
      if (listed.nextCursor === null) return { consumer, waiting, more: false }
      cursor = listed.nextCursor
    }
    return { consumer, waiting, more: true }
  })

/**
 * The instance id a lease owner names: a client's background driver leases as `ID#driver`, a
 * caller as `ID`; both are the one process holding `ID`.
 *
 * @since 0.5.0
 */
export const instanceOf = (leaseOwner: string): string => leaseOwner.replace(/#driver$/, "")

/**
 * Reads the fleet: the instance ids held, every open row's lease (in every scope, as
 * `list --stuck` reads them) grouped by owner, and each known consumer's backlog.
 *
 * @since 0.5.0
 */
export const loadFleet = (session: Common.Session): Effect.Effect<FleetView, CliError> =>
  Effect.gen(function* () {
    const now = yield* session.store.now
    const scheduled = yield* Common.listAllScopes(session, { scheduled: true })
    const byOwner = new Map<string, { held: number; lapsed: number; leaseUntil: number; lastWrite: number }>()
    for (const r of scheduled) {
      if (r.leaseOwner === null) continue
      const id = instanceOf(r.leaseOwner)
      const entry = byOwner.get(id) ?? { held: 0, lapsed: 0, leaseUntil: 0, lastWrite: 0 }
      if (Row.owner(r, now) === null) entry.lapsed++
      else entry.held++
      entry.leaseUntil = Math.max(entry.leaseUntil, r.leaseExpiresAt ?? 0)
      entry.lastWrite = Math.max(entry.lastWrite, r.updatedAt)
      byOwner.set(id, entry)
    }
    // The processes holding an instance id: also those that hold no call.
    const holders = yield* session.store.listInstances.pipe(Effect.mapError(fromKnown))
    for (const holder of holders) {
      if (!byOwner.has(holder.instanceId))
        byOwner.set(holder.instanceId, { held: 0, lapsed: 0, leaseUntil: 0, lastWrite: 0 })
    }
    const holderOf = new Map(holders.map((h) => [h.instanceId, h]))
    const live = (i: Instance) => i.held > 0 || i.holder !== null
    const instances = [...byOwner.entries()]
      .map(([id, entry]): Instance => ({ id, ...entry, holder: holderOf.get(id) ?? null }))
      // The live ones first, then by name.
      .sort((a, b) => Number(live(b)) - Number(live(a)) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    const consumers = yield* session.store.listConsumers().pipe(Effect.mapError(fromKnown))
    const backlogs = yield* Effect.forEach(consumers, (c) => backlogOf(session, c))
    return { instances, backlogs, now }
  })

/**
 * A server as the servers page shows it: with how many calls point at its identity.
 *
 * @since 0.5.0
 * @category models
 */
export interface ServerRow {
  readonly server: HandleStore.ServerRecord
  readonly calls: number
}

/**
 * @since 0.5.0
 * @category models
 */
export interface ServersView {
  readonly servers: ReadonlyArray<ServerRow>
  readonly now: number
}

/**
 * Reads the servers and counts each one's calls in every scope (the store's exact count).
 *
 * @since 0.5.0
 */
export const loadServers = (session: Common.Session): Effect.Effect<ServersView, CliError> =>
  Effect.gen(function* () {
    const now = yield* session.store.now
    const servers = yield* session.store.listServers.pipe(Effect.mapError(fromKnown))
    const rows = yield* Effect.forEach(servers, (server) =>
      session.store.count({ serverId: server.id }).pipe(
        Effect.map((counts) => ({ server, calls: Object.values(counts).reduce((a, b) => a + b, 0) })),
        Effect.mapError(fromKnown),
      ),
    )
    return { servers: rows, now }
  })

/**
 * Moves every call of server name `from`, in every scope, to the server the store knows as
 * `to`: the operation of `mcp-handles servers --rebind OLD=NEW` (every identity the old name
 * was written under, one per URL it had, through the store's `rebind`). Each call still to be
 * polled or decided (not settled) gets a history entry naming `actor`; settled history is left
 * as it was. Returns how many moved.
 *
 * @since 0.5.0
 */
export const rebind = (
  session: Common.Session,
  from: string,
  to: string,
  actor: string,
): Effect.Effect<number, CliError> =>
  Effect.gen(function* () {
    const servers = yield* session.store.listServers.pipe(Effect.mapError(fromKnown))
    const target = servers.find((s) => s.name === to)
    if (target === undefined) return yield* Effect.fail(usage(`rebind: the store knows no server ${to}`))
    if (from === to) return yield* Effect.fail(usage(`rebind: ${from} is already ${to}`))
    const unsettled = yield* Common.listAllScopes(session, {
      statuses: [...HandleRecord.openStatuses, "in_doubt"],
    })
    const moving = unsettled.filter((r) => ServerIdentity.nameOf(r.serverId) === from)
    const moved = yield* Rebind.calls(session, from, target, "rebind")
    yield* Effect.forEach(
      moving,
      (r) => Audit.record(session.store, r, `rebound from ${from} to ${to} (ui)`, actor),
      { discard: true },
    )
    return moved
  })
