/**
 * The session holding an instance lock is watched (issue 28, finding 6). When it ends while the
 * process lives on (a failover, an idle-session killer), the store stops writing as that
 * instance: if another process took the id meanwhile, every write fails from then on and the rows
 * stay as they were; if nobody did, the store takes the id again on a new session and writes
 * resume.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import { HandleStore } from "@mcp-handles/core/HandleStore"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as TestServices from "effect/TestServices"
import { advisoryKey } from "../src/internal/instance-lock.js"

const handle = (key: string) => ({
  scope: "default",
  key,
  serverId: "server",
  tool: "job",
  arguments: {},
  argumentsHash: "h",
  owner: "worker-1",
  leaseMs: 30_000,
  now: Date.now(),
})

/** The backend holding the advisory lock of `key`, if any. */
const lockHolder = (sql: PgClient.PgClient, key: string) =>
  Effect.map(
    sql<{ readonly pid: number }>`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
      AND ((classid::bigint << 32) | objid::bigint) = ${key}::bigint`.withoutTransform,
    (rows) => rows[0]?.pid,
  )

/** How many sessions wait for the advisory lock of `key`. */
const waiters = (sql: PgClient.PgClient, key: string) =>
  Effect.map(
    sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'
      AND NOT granted AND ((classid::bigint << 32) | objid::bigint) = ${key}::bigint`.withoutTransform,
    (rows) => rows[0]?.n ?? 0,
  )

/** A write that changes nothing: it passes or fails only by the store's instance lock. */
const probe = (store: HandleStore) =>
  store.releaseOwner({
    owner: "nobody",
    now: Date.now(),
    minIntervalMs: 250,
    maxIntervalMs: 60_000,
    defaultIntervalMs: 1_000,
  })

/** Retries `check` every 100 ms until it holds, for up to 10 s (a generous bound, not a timing). */
const eventually = <E>(check: Effect.Effect<boolean, E>) =>
  Effect.repeat(check, { schedule: Schedule.spaced("100 millis"), until: (done) => done }).pipe(
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the condition never held") }),
  )

/** The store holding `instanceId` until `mine` closes, and the backend of the lock's session. */
const holding = (instanceId: string) =>
  Effect.gen(function* () {
    const store = yield* HandleStore
    const sql = yield* PgClient.PgClient
    const { schema } = yield* TestDatabase.TestSchema
    const key = advisoryKey(schema, instanceId)
    const mine = yield* Scope.make()
    yield* Scope.extend(store.lockInstance(instanceId), mine)
    const backend = yield* lockHolder(sql, key)
    expect(backend).toBeDefined()
    return { store, sql, key, backend, mine }
  })

describe("instance lock watch", () => {
  it.layer(TestDatabase.layerStore({ instanceLockCheck: "200 millis" }))((it) => {
    it.effect(
      "a session killed and the id taken by another process: every write fails, nothing changes",
      () =>
        Effect.gen(function* () {
          const { store, sql, key, backend, mine } = yield* holding("worker-1")
          const { record } = yield* store.insertOrGet(handle("k"))
          const before = yield* store.list({ scope: "default", limit: 10 })

          // Another process waits for the id; the lock's session ends under this process, and the
          // database hands the lock to the waiter at once.
          const other = yield* Scope.make()
          const connection = yield* Scope.extend(sql.reserve, other)
          const waiting = yield* Effect.fork(
            connection.executeValues("SELECT pg_advisory_lock($1::bigint)", [key]),
          )
          yield* eventually(Effect.map(waiters(sql, key), (n) => n > 0))
          yield* sql`SELECT pg_terminate_backend(${backend ?? 0})`
          yield* Fiber.join(waiting)

          // Within a check period the store knows, and refuses every write from then on.
          yield* eventually(Effect.map(Effect.either(probe(store)), Either.isLeft))
          const update = yield* Effect.either(store.update(record))
          expect(Either.isLeft(update) && update.left._tag).toBe("StoreError")
          if (Either.isLeft(update)) expect(update.left.message).toContain("instance lock")
          const insert = yield* Effect.either(store.insertOrGet(handle("k2")))
          expect(Either.isLeft(insert) && insert.left.message).toContain("instance lock")
          // Several checks later (it tried to take the id back, and found it held): still refused.
          yield* Effect.sleep("1 second")
          expect(Either.isLeft(yield* Effect.either(probe(store)))).toBe(true)
          // Reads still work, and show the rows exactly as they were.
          expect(yield* store.list({ scope: "default", limit: 10 })).toEqual(before)
          expect(Option.map(yield* store.get("default", "k"), (r) => r.version)).toEqual(
            Option.some(record.version),
          )
          yield* Scope.close(other, Exit.void)
          yield* Scope.close(mine, Exit.void)
        }).pipe(TestServices.provideLive),
      30_000,
    )

    it.effect(
      "a session killed with nobody waiting for the id: the store takes it again, writes resume",
      () =>
        Effect.gen(function* () {
          const { store, sql, key, backend, mine } = yield* holding("worker-2")
          yield* sql`SELECT pg_terminate_backend(${backend ?? 0})`
          // Held again, on another session of this process.
          yield* eventually(Effect.map(lockHolder(sql, key), (pid) => pid !== undefined && pid !== backend))
          yield* eventually(Effect.map(Effect.either(probe(store)), Either.isRight))
          const { created } = yield* store.insertOrGet({ ...handle("resumed"), owner: "worker-2" })
          expect(created).toBe(true)
          // And another process is kept out again.
          const other = yield* Scope.make()
          const connection = yield* Scope.extend(sql.reserve, other)
          const [[taken] = []] = yield* connection.executeValues("SELECT pg_try_advisory_lock($1::bigint)", [
            key,
          ])
          expect(taken).toBe(false)
          yield* Scope.close(other, Exit.void)
          yield* Scope.close(mine, Exit.void)
        }).pipe(TestServices.provideLive),
      30_000,
    )
  })
})
