/**
 * A HandleStore that lives in process memory: for tests and for processes whose calls may die
 * with them. Every operation is one synchronous step, so atomicity comes from the event loop.
 *
 * @since 0.1.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

const rowId = (scope: string, key: string) => JSON.stringify([scope, key])

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<HandleStore.HandleStore> = Effect.sync(() => {
  const rows = new Map<string, HandleRecord.HandleRecord>()

  const write = (record: HandleRecord.HandleRecord, fields: Partial<HandleRecord.HandleRecord>) => {
    const next = new HandleRecord.HandleRecord({ ...record, ...fields, version: record.version + 1 })
    rows.set(rowId(next.scope, next.key), next)
    return next
  }

  return HandleStore.HandleStore.of({
    now: Clock.currentTimeMillis,
    // Only this process can reach a memory store: there is no other process to keep out.
    lockInstance: () => Effect.void,
    begin: (handle) =>
      Effect.suspend((): Effect.Effect<HandleStore.BeginResult, HandleStore.StoreError> => {
        const existing = rows.get(rowId(handle.scope, handle.key))
        if (existing) return Effect.succeed({ record: existing, created: false })
        return Effect.map(HandleStore.initialRecord(handle), (record) => {
          rows.set(rowId(record.scope, record.key), record)
          return { record, created: true }
        })
      }),
    get: (scope, key) => Effect.sync(() => Option.fromNullable(rows.get(rowId(scope, key)))),
    update: (record) =>
      Effect.suspend(
        (): Effect.Effect<
          HandleRecord.HandleRecord,
          HandleStore.VersionConflict | HandleStore.TaskIdTaken
        > => {
          const stored = rows.get(rowId(record.scope, record.key))
          if (stored === undefined || stored.version !== record.version) {
            return Effect.fail(
              new HandleStore.VersionConflict({
                scope: record.scope,
                key: record.key,
                expectedVersion: record.version,
              }),
            )
          }
          if (record.taskId !== null && record.taskId !== stored.taskId) {
            for (const other of rows.values()) {
              if (other.taskId === record.taskId && other.serverId === record.serverId && other !== stored) {
                return Effect.fail(
                  new HandleStore.TaskIdTaken({
                    scope: record.scope,
                    key: record.key,
                    serverId: record.serverId,
                  }),
                )
              }
            }
          }
          return Effect.succeed(write(record, {}))
        },
      ),
    claimDue: ({ owner, now, leaseMs, limit }) =>
      Effect.sync(() =>
        Array.from(rows.values())
          .filter((record) => HandleStore.isClaimable(record, owner, now))
          .sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0))
          .slice(0, limit)
          .map((record) => write(record, { leaseOwner: owner, leaseExpiresAt: now + leaseMs })),
      ),
    spreadDue: (options) =>
      Effect.sync(() => {
        const due = Array.from(rows.values())
          .filter((record) => HandleStore.isSpreadable(record, options))
          .sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0))
          .slice(0, Math.max(0, Math.floor(options.limit)))
        for (const record of due) {
          const window = HandleStore.spreadWindow(record, options)
          // A process that died may have polled at the due time without recording it.
          const base = Math.max(options.now, (record.nextPollAt ?? options.now) + window)
          const nextPollAt = base + Math.floor(Math.random() * window)
          write(record, {
            nextPollAt,
            leaseOwner: options.owner,
            leaseExpiresAt: nextPollAt + options.leaseMs,
          })
        }
        return due.length
      }),
    release: (scope, key, owner) =>
      Effect.sync(() => {
        const record = rows.get(rowId(scope, key))
        if (record?.leaseOwner === owner) write(record, { leaseOwner: null, leaseExpiresAt: null })
      }),
    renewLease: ({ scope, key, owner, until }) =>
      Effect.sync(() => {
        const record = rows.get(rowId(scope, key))
        if (record === undefined || record.leaseOwner !== owner) return false
        rows.set(rowId(scope, key), new HandleRecord.HandleRecord({ ...record, leaseExpiresAt: until }, true))
        return true
      }),
    releaseOwner: ({ owner, now }) =>
      Effect.sync(() => {
        let released = 0
        for (const record of rows.values()) {
          if (record.leaseOwner !== owner || (record.nextPollAt !== null && record.nextPollAt <= now))
            continue
          write(record, { leaseOwner: null, leaseExpiresAt: null })
          released++
        }
        return released
      }),
    list: (filter) =>
      Effect.suspend(() => {
        const after = filter.cursor === undefined ? Option.none() : HandleStore.decodeCursor(filter.cursor)
        if (filter.cursor !== undefined && Option.isNone(after)) {
          return Effect.fail(new HandleStore.StoreError({ operation: "list", message: "invalid cursor" }))
        }
        const limit = Math.max(1, Math.min(filter.limit, HandleStore.maxListLimit))
        const matching = Array.from(rows.values())
          .filter(
            (r) =>
              r.scope === filter.scope &&
              (filter.statuses === undefined || filter.statuses.includes(r.status)) &&
              (filter.serverId === undefined || r.serverId === filter.serverId) &&
              (Option.isNone(after) || HandleStore.compareListOrder(r, after.value) > 0),
          )
          .sort(HandleStore.compareListOrder)
        const records = matching.slice(0, limit)
        const last = records[records.length - 1]
        return Effect.succeed({
          records,
          nextCursor: matching.length > limit && last ? HandleStore.encodeCursor(last) : null,
        })
      }),
    deleteSettledBefore: ({ scope, settledBefore }) =>
      Effect.sync(() => {
        let deleted = 0
        for (const [id, r] of rows) {
          if (scope !== undefined && r.scope !== scope) continue
          if (HandleRecord.isTerminal(r.status) && r.settledAt !== null && r.settledAt < settledBefore) {
            rows.delete(id)
            deleted++
          }
        }
        return deleted
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
