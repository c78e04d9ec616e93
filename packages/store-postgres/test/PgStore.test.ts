/**
 * What the shared contract cannot see: retries after an answer was lost, schema versioning and
 * options, driver configuration, values `jsonb` could not hold.
 */

import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import { HandleStore, type NewHandle } from "@mcp-handles/core/HandleStore"
import { PgStore } from "@mcp-handles/store-postgres"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Str from "effect/String"
import * as TestServices from "effect/TestServices"
import { startFaultyProxy } from "./support/FaultyProxy.js"

const T0 = 1_700_000_000_000

const handle = (overrides: Partial<NewHandle> = {}): NewHandle => ({
  scope: "tenant",
  key: "k",
  serverId: "srv",
  tool: "t",
  arguments: null,
  argumentsHash: "h",
  owner: "me",
  leaseMs: 1_000,
  now: T0,
  ...overrides,
})

const storeOn = (client: PgClient.PgClient, options: PgStore.Options) =>
  PgStore.make(options).pipe(Effect.provideService(PgClient.PgClient, client))

const clientAt = (url: string, extra: Partial<PgClient.PgClientConfig> = {}) =>
  PgClient.make({ url: Redacted.make(url), maxConnections: 4, ...extra }).pipe(
    Effect.provide(Reactivity.layer),
  )

describe("PgStore", () => {
  it.layer(TestDatabase.layerClient())((it) => {
    it.scoped("a reply lost after commit: the retry recognises its own write", () =>
      // Live clock: the retry's backoff really sleeps.
      TestServices.provideLive(
        Effect.gen(function* () {
          const { url, schema } = yield* TestDatabase.TestSchema
          const target = new URL(url)
          const proxy = yield* Effect.acquireRelease(
            Effect.promise(() =>
              startFaultyProxy({ host: target.hostname, port: Number(target.port || 5432) }),
            ),
            (p) => Effect.promise(() => p.close()),
          )
          target.hostname = "127.0.0.1"
          target.port = `${proxy.port}`
          const client = yield* clientAt(target.toString())
          const store = yield* storeOn(client, { schema, retry: { baseDelay: "1 millis" } })

          proxy.arm("INSERT 0 1")
          const begun = yield* store.insertOrGet(handle({ key: "lost-insert" }))
          expect(proxy.dropped()).toBe(1)
          expect(begun.created).toBe(true)
          expect((yield* store.insertOrGet(handle({ key: "lost-insert", owner: "other" }))).created).toBe(
            false,
          )

          proxy.arm("UPDATE 1")
          const written = yield* store.update(
            new HandleRecord({ ...begun.record, status: "working", taskId: "t-1" }),
          )
          expect(proxy.dropped()).toBe(2)
          expect(written.version).toBe(begun.record.version + 1)
          expect(Option.getOrThrow(yield* store.get("tenant", "lost-insert"))).toEqual(written)

          // A claim whose answer is lost leaves the rows leased to the claimer, which retakes them.
          yield* store.update(
            new HandleRecord({ ...written, nextPollAt: T0, leaseOwner: null, leaseExpiresAt: null }),
          )
          proxy.arm("UPDATE 1")
          const claimed = yield* store.claimDue({ owner: "me", now: T0 + 1, leaseMs: 5_000, limit: 10 })
          expect(proxy.dropped()).toBe(3)
          expect(claimed.map((r) => [r.key, r.leaseOwner])).toEqual([["lost-insert", "me"]])
          expect(Option.getOrThrow(yield* store.get("tenant", "lost-insert"))).toEqual(claimed[0])
        }),
      ),
    )

    it.effect("a genuine conflict stays a conflict even on a retried update", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const { schema } = yield* TestDatabase.TestSchema
        const store = yield* storeOn(sql, { schema })
        const { record } = yield* store.insertOrGet(handle({ key: "c" }))
        yield* store.update(new HandleRecord({ ...record, attempts: 1 }))
        const stale = yield* Effect.either(store.update(new HandleRecord({ ...record, attempts: 2 })))
        expect(Either.isLeft(stale) && stale.left._tag).toBe("VersionConflict")
      }),
    )

    it.effect("values jsonb would refuse round-trip: NUL characters, lone surrogates, key order", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const { schema } = yield* TestDatabase.TestSchema
        const store = yield* storeOn(sql, { schema })
        const { record } = yield* store.insertOrGet(
          handle({ key: "odd", arguments: { "a\u0000b": "x\u0000y" } }),
        )
        const result = {
          content: [],
          z: "\ud800 lone",
          a: "nul \u0000 inside",
          __proto__x: 1,
          nested: { b: 1, a: 2 },
        }
        const written = yield* store.update(
          new HandleRecord({
            ...record,
            status: "completed",
            result,
            lastProblem: "bad \u0000 server",
            taskId: "t\u0000",
          }),
        )
        const read = Option.getOrThrow(yield* store.get("tenant", "odd"))
        expect(read).toEqual(written)
        expect(Object.keys(read.result ?? {})).toEqual(Object.keys(result))
        expect(read.arguments).toEqual({ "a\u0000b": "x\u0000y" })
      }),
    )

    it.effect("works over a client configured with name transforms", () =>
      Effect.gen(function* () {
        const { url, schema } = yield* TestDatabase.TestSchema
        const client = yield* clientAt(url, {
          transformResultNames: Str.snakeToCamel,
          transformQueryNames: Str.camelToSnake,
        })
        const store = yield* storeOn(client, { schema })
        const { record } = yield* store.insertOrGet(handle({ key: "transformed" }))
        expect(Option.getOrThrow(yield* store.get("tenant", "transformed"))).toEqual(record)
      }).pipe(Effect.scoped),
    )

    it.effect("two schemas on one database are two stores", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const { schema } = yield* TestDatabase.TestSchema
        const a = yield* storeOn(sql, { schema })
        const b = yield* storeOn(sql, { schema: `${schema}_b` })
        yield* Effect.addFinalizer(() => Effect.ignore(sql`DROP SCHEMA ${sql(`${schema}_b`)} CASCADE`))
        yield* a.insertOrGet(handle({ key: "only-in-a" }))
        expect(Option.isNone(yield* b.get("tenant", "only-in-a"))).toBe(true)
      }).pipe(Effect.scoped),
    )

    it.effect("judges time by the database's clock, or by the host's Clock when asked", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const { schema } = yield* TestDatabase.TestSchema
        const database = yield* storeOn(sql, { schema })
        const host = yield* storeOn(sql, { schema, clock: "host" })
        const [row] = yield* sql<{
          readonly now: number
        }>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now`.withoutTransform
        const read = yield* database.now
        // Within a round trip of the server's own reading (this runs on one machine).
        expect(Math.abs(read - Number(row?.now))).toBeLessThan(1_000)
        // The TestClock of this test starts at the epoch: the host store follows it.
        expect(yield* host.now).toBe(0)
      }).pipe(Effect.scoped),
    )

    it.effect("instances starting together migrate once", () =>
      Effect.gen(function* () {
        const { url, schema } = yield* TestDatabase.TestSchema
        const fresh = `${schema}_m`
        const clients = yield* Effect.all(Array.from({ length: 4 }, () => clientAt(url)))
        const [first] = clients
        if (first === undefined) return
        yield* Effect.addFinalizer(() => Effect.ignore(first`DROP SCHEMA ${first(fresh)} CASCADE`))
        yield* Effect.all(
          clients.map((c) => storeOn(c, { schema: fresh })),
          { concurrency: "unbounded" },
        )
        const rows = yield* first<{
          readonly migration_id: number
        }>`SELECT migration_id FROM ${first(`${fresh}.mcp_handles_migrations`)}`
        // Each migration recorded exactly once.
        expect(rows.map((r) => r.migration_id).sort()).toEqual(
          Array.from({ length: PgStore.schemaVersion }, (_, i) => i + 1),
        )
      }).pipe(Effect.scoped),
    )

    it.effect("refuses a schema migrated by a newer release, and an unmigrated one without migrate", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const { schema } = yield* TestDatabase.TestSchema
        const newer = `${schema}_n`
        yield* Effect.addFinalizer(() => Effect.ignore(sql`DROP SCHEMA ${sql(newer)} CASCADE`))

        const unmigrated = yield* Effect.flip(storeOn(sql, { schema: newer, migrate: false }))
        expect(unmigrated).toBeInstanceOf(PgStore.OpenError)
        expect(unmigrated).toMatchObject({
          reason: "older-schema",
          found: 0,
          supported: PgStore.schemaVersion,
        })

        yield* storeOn(sql, { schema: newer })
        yield* storeOn(sql, { schema: newer, migrate: false })
        yield* sql`INSERT INTO ${sql(`${newer}.mcp_handles_migrations`)} (migration_id, name) VALUES (99, 'from_the_future')`
        for (const migrate of [true, false]) {
          const error = yield* Effect.flip(storeOn(sql, { schema: newer, migrate }))
          expect(error).toBeInstanceOf(PgStore.OpenError)
          expect(error).toMatchObject({ reason: "newer-schema", found: 99, supported: PgStore.schemaVersion })
          expect(error.message).toMatch(/newer release/)
        }
      }).pipe(Effect.scoped),
    )

    it.effect("takes its options from Config", () =>
      Effect.gen(function* () {
        const { schema } = yield* TestDatabase.TestSchema
        const store = yield* HandleStore.pipe(
          Effect.provide(PgStore.layerConfig({ schema: Config.string("STORE_SCHEMA") })),
          Effect.withConfigProvider(ConfigProvider.fromJson({ STORE_SCHEMA: schema })),
        )
        const { record } = yield* store.insertOrGet(handle({ key: "configured" }))
        expect(record.key).toBe("configured")
      }),
    )

    it.effect("rejects schema names that are not plain identifiers", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        for (const schema of [
          "",
          "Upper",
          "a-b",
          'x"; DROP TABLE y; --',
          "pg_catalog",
          "a".repeat(64),
          "1abc",
        ]) {
          const error = yield* Effect.flip(storeOn(sql, { schema }))
          expect(error).toBeInstanceOf(PgStore.OpenError)
          expect(error.reason).toBe("invalid-options")
        }
        for (const retry of [
          { budget: -1 },
          { budget: "-5 seconds" },
          { budget: "soon" },
          { baseDelay: 0 },
          { maxDelay: Number.POSITIVE_INFINITY },
          // The attempt count this option used to take, from a caller TypeScript does not check.
          { times: 2 },
        ]) {
          const error = yield* Effect.flip(storeOn(sql, { retry: retry as PgStore.RetryOptions }))
          expect(error).toBeInstanceOf(PgStore.OpenError)
          expect(error.reason).toBe("invalid-options")
        }
      }),
    )

    it.effect("a row that does not decode is a StoreError, not a record", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const { schema } = yield* TestDatabase.TestSchema
        const store = yield* storeOn(sql, { schema })
        yield* store.insertOrGet(handle({ key: "corrupt" }))
        yield* sql`UPDATE ${sql(`${schema}.handles`)} SET body = '{"tool": 42}'::json WHERE key = 'corrupt'`
        const error = yield* Effect.flip(store.get("tenant", "corrupt"))
        expect(error._tag).toBe("StoreError")
        expect(error.message).toMatch(/does not decode/)
      }),
    )
  })
})
