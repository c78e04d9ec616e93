/**
 * A HandleStore that lives in process memory: for tests and for processes whose calls may die
 * with them. Every operation is one synchronous step, so atomicity comes from the event loop.
 * Written on the driver port (`HandleStoreDriver`), as any new store can be.
 *
 * @since 0.1.0
 */
import * as Claiming from "@mcp-handles/core/Claiming"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HandleStoreDriver from "@mcp-handles/core/HandleStoreDriver"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

type Row = HandleRecord.HandleRecord

const byDueTime = (a: Row, b: Row) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0)

const freed = { leaseOwner: null, leaseExpiresAt: null }

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<HandleStore.HandleStore> = Effect.sync(() => {
  const rows = new Map<string, Row>()
  // Servers (issues 15 item 7 and 16): by name.
  const servers = new Map<string, HandleStore.ServerRecord>()
  // Outcome delivery: per row (rowId), per consumer, what was handed out and whether it was acked.
  const deliveries = new Map<string, Map<string, HandleStoreDriver.DeliveryState>>()
  // The consumers GC waits for: per scope, by name.
  const consumers = new Map<string, Map<string, HandleStore.ConsumerRecord>>()
  // The rows holding each server's task id (one, unless a row was inserted holding a taken id):
  // a write that records a task id asks here, not every row, so launching stays O(1) at any size.
  const holders = new Map<string, Set<string>>()
  const holderKey = (record: Row) =>
    record.taskId === null ? undefined : JSON.stringify([record.serverId, record.taskId])
  const hold = (record: Row, id: string, holds: boolean) => {
    const key = holderKey(record)
    if (key === undefined) return
    const ids = holders.get(key) ?? new Set<string>()
    if (holds) holders.set(key, ids.add(id))
    else if (ids.delete(id) && ids.size === 0) holders.delete(key)
  }
  const find = (scope: string, key: string) => rows.get(HandleRecord.rowId(scope, key))
  const put = (record: Row) => {
    const id = HandleRecord.rowId(record.scope, record.key)
    const before = rows.get(id)
    if (before !== undefined) hold(before, id, false)
    rows.set(id, record)
    hold(record, id, true)
    return record
  }
  const remove = (record: Row) => {
    const id = HandleRecord.rowId(record.scope, record.key)
    rows.delete(id)
    hold(record, id, false)
    deliveries.delete(id)
  }
  const write = (record: Row, fields: Partial<Row>) => put(HandleStoreDriver.bump(record, fields))
  const all = (take: (record: Row) => boolean) => Array.from(rows.values()).filter(take)
  const due = (take: (record: Row) => boolean, limit: number) => all(take).sort(byDueTime).slice(0, limit)

  // Only this process can reach a memory store: its own clients are the ones to keep apart, one
  // per instance id (makeStore's default lockInstance). The host's clock is the only one (no now).
  return HandleStoreDriver.makeStore({
    // Servers (issues 15 item 7 and 16).
    recordServer: (seen) =>
      Effect.sync(() => {
        const server = HandleStoreDriver.seenServer(servers.get(seen.name), seen)
        servers.set(seen.name, server)
        return server
      }),
    listServers: Effect.sync(() =>
      Array.from(servers.values()).sort((a, b) => HandleStoreDriver.compareCodePoints(a.name, b.name)),
    ),
    removeServer: (name) => Effect.sync(() => servers.delete(name)),
    rebind: ({ from, to, scope }) =>
      Effect.sync((): HandleStoreDriver.RebindOutcome => {
        const moving = all((r) => r.serverId === from && (scope === undefined || r.scope === scope))
        const held = new Set(all((r) => r.serverId === to && r.taskId !== null).map((r) => r.taskId))
        const clash = moving.find((r) => r.taskId !== null && held.has(r.taskId))
        if (clash !== undefined) return { taken: { scope: clash.scope, key: clash.key } }
        for (const record of moving) write(record, { serverId: to })
        return { moved: moving.length }
      }),
    insertOrGet: (record) =>
      Effect.sync(() => {
        const stored = find(record.scope, record.key)
        return stored === undefined
          ? { record: put(record), created: true }
          : { record: stored, created: false }
      }),
    get: (scope, key) => Effect.sync(() => Option.fromNullable(find(scope, key))),
    update: (next) =>
      Effect.sync((): HandleStoreDriver.WriteOutcome => {
        const stored = find(next.scope, next.key)
        if (stored === undefined || stored.version !== next.version - 1) return "version-conflict"
        const key = holderKey(next)
        if (key !== undefined && next.taskId !== stored.taskId && holders.has(key)) return "task-id-taken"
        put(next)
        return "written"
      }),
    claimDue: (options) =>
      Effect.sync(() =>
        due((record) => Claiming.isClaimable(record, options), options.limit).map((record) =>
          write(record, { leaseOwner: options.owner, leaseExpiresAt: options.now + options.leaseMs }),
        ),
      ),
    spreadDue: (options) =>
      Effect.sync(() => {
        const moved = due((record) => Claiming.isSpreadable(record, options), options.limit)
        for (const record of moved) {
          const at = Claiming.spreadPollAt(record, options)
          write(record, { nextPollAt: at, leaseOwner: options.owner, leaseExpiresAt: at + options.leaseMs })
        }
        return moved.length
      }),
    release: (scope, key, owner) =>
      Effect.sync(() => {
        const record = find(scope, key)
        if (record?.leaseOwner === owner) write(record, freed)
      }),
    renewLease: ({ scope, key, owner, until }) =>
      Effect.sync(() => {
        const record = find(scope, key)
        if (record?.leaseOwner !== owner) return false
        put(new HandleRecord.HandleRecord({ ...record, leaseExpiresAt: until }, true))
        return true
      }),
    renewLeases: ({ owner, rows: wanted, until }) =>
      Effect.sync(() =>
        wanted.filter(({ scope, key }) => {
          const record = find(scope, key)
          if (record === undefined || !Claiming.isRenewable(record, owner)) return false
          put(new HandleRecord.HandleRecord({ ...record, ...Claiming.renewedSchedule(record, until) }, true))
          return true
        }),
      ),
    pendingIntents: ({ owner, limit }) =>
      Effect.sync(() => {
        const found: Array<{ readonly scope: string; readonly key: string }> = []
        for (const record of rows.values()) {
          if (found.length >= limit) break
          if (Claiming.hasPendingIntent(record, owner)) found.push({ scope: record.scope, key: record.key })
        }
        return found
      }),
    releaseOwner: (options) =>
      Effect.sync(
        () =>
          all((record) => Claiming.isReleasable(record, options)).map((record) =>
            write(record, { ...freed, nextPollAt: Claiming.releasedPollAt(record, options) }),
          ).length,
      ),
    count: ({ scope, serverId, keyContains }) =>
      Effect.sync(() => {
        const counts: Partial<Record<HandleRecord.Status, number>> = {}
        for (const r of all(
          HandleStoreDriver.matches({
            scope,
            serverId,
            keyContains,
            statuses: undefined,
            after: undefined,
            limit: 0,
          }),
        )) {
          counts[r.status] = (counts[r.status] ?? 0) + 1
        }
        return counts
      }),
    list: (query) =>
      Effect.sync(() =>
        all(HandleStoreDriver.matches(query)).sort(HandleStoreDriver.compareListOrder).slice(0, query.limit),
      ),
    deleteSettledBefore: (options) =>
      Effect.sync((): HandleStore.GcReport => {
        const unacknowledged = new Map<string, HandleStore.UnacknowledgedOutcomes>()
        let deleted = 0
        let kept = 0
        for (const record of all((record) => HandleStoreDriver.isCollectable(record, options))) {
          const states = deliveries.get(HandleRecord.rowId(record.scope, record.key))
          const holding = Array.from(consumers.get(record.scope)?.keys() ?? []).filter(
            (consumer) => !HandleStoreDriver.isAcknowledged(record, states?.get(consumer)),
          )
          if (holding.length > 0 && !HandleStoreDriver.isPastConsumers(record, options)) {
            kept++
            continue
          }
          remove(record)
          deleted++
          for (const consumer of holding) {
            const id = JSON.stringify([record.scope, consumer])
            const outcomes = (unacknowledged.get(id)?.outcomes ?? 0) + 1
            unacknowledged.set(id, { consumer, scope: record.scope, outcomes })
          }
        }
        return { deleted, kept, unacknowledged: Array.from(unacknowledged.values()) }
      }),

    // Outcome delivery (issue 15).
    claimOutcomes: (options) =>
      Effect.sync(() => {
        const known = consumers.get(options.scope) ?? new Map<string, HandleStore.ConsumerRecord>()
        const seen = HandleStoreDriver.seenConsumer(known.get(options.consumer), options)
        consumers.set(options.scope, known.set(options.consumer, seen))
        const stateOf = (record: Row) =>
          deliveries.get(HandleRecord.rowId(record.scope, record.key))?.get(options.consumer)
        const due = all(
          (record) =>
            record.scope === options.scope &&
            HandleStoreDriver.isOutcomeDue(record, stateOf(record), options.now),
        )
          .sort(HandleStoreDriver.compareListOrder)
          .slice(0, options.limit)
        return due.map((record) => {
          const id = HandleRecord.rowId(record.scope, record.key)
          const byConsumer = deliveries.get(id) ?? new Map<string, HandleStoreDriver.DeliveryState>()
          const state = HandleStoreDriver.claimedState(record, byConsumer.get(options.consumer), options)
          deliveries.set(id, byConsumer.set(options.consumer, state))
          return { consumer: options.consumer, record, deliveries: state.deliveries }
        })
      }),
    ackOutcome: (options) =>
      Effect.sync(() => {
        const byConsumer = deliveries.get(HandleRecord.rowId(options.scope, options.key))
        const state = byConsumer?.get(options.consumer)
        if (byConsumer === undefined || state === undefined) return false
        if (!HandleStoreDriver.acknowledges(options, state)) return false
        byConsumer.set(options.consumer, { ...state, acked: true })
        return true
      }),
    releaseOutcomes: ({ consumer, member }) =>
      Effect.sync(() => {
        let released = 0
        for (const byConsumer of deliveries.values()) {
          const state = byConsumer.get(consumer)
          if (state !== undefined && !state.acked && state.member === member) {
            byConsumer.set(consumer, { ...state, member: null, leaseUntil: null })
            released++
          }
        }
        return released
      }),
    listConsumers: (scope) =>
      Effect.sync(() =>
        Array.from(consumers.entries())
          .filter(([of]) => scope === undefined || of === scope)
          .flatMap(([, known]) => Array.from(known.values()))
          .sort(HandleStoreDriver.compareConsumers),
      ),
    forgetConsumer: ({ consumer, scope }) =>
      Effect.sync(() => {
        let forgotten = 0
        for (const [of, known] of consumers) {
          if ((scope === undefined || of === scope) && known.delete(consumer)) forgotten++
        }
        for (const [id, byConsumer] of deliveries) {
          if (scope === undefined || rows.get(id)?.scope === scope) byConsumer.delete(consumer)
        }
        return forgotten
      }),
  })
})

/**
 * A fresh, empty store each time the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<HandleStore.HandleStore> = Layer.effect(HandleStore.HandleStore, make)
