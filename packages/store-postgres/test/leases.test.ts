/**
 * Leases across a fleet: four instances, each with its own pool (its own connections), claim
 * from one schema at once. No row is claimed by two instances within a lease, an expired lease
 * is taken over, and the instance that lost it is fenced off.
 */

import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import { type HandleStore, VersionConflict } from "@mcp-handles/core/HandleStore"
import { PgStore } from "@mcp-handles/store-postgres"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestServices from "effect/TestServices"

const T0 = 1_700_000_000_000
const LEASE = 60_000
const ROWS = 400

/** Four instances, each a pool of its own, building their stores (and migrating) at once. */
const fleet = Effect.gen(function* () {
  const { schema } = yield* TestDatabase.TestSchema
  return yield* Effect.all(
    ["i1", "i2", "i3", "i4"].map((name) =>
      Effect.gen(function* () {
        const context = yield* Layer.build(
          TestDatabase.layerPool({ maxConnections: 4, applicationName: name }),
        )
        const sql = Context.get(context, PgClient.PgClient)
        const store = yield* PgStore.make({ schema }).pipe(Effect.provideService(PgClient.PgClient, sql))
        return { name, sql, store }
      }),
    ),
    { concurrency: "unbounded" },
  )
})

const seed = (store: HandleStore, n: number) =>
  Effect.forEach(
    Array.from({ length: n }, (_, i) => `row-${String(i).padStart(4, "0")}`),
    (key) =>
      store.insertOrGet({
        scope: `tenant-${key.charCodeAt(key.length - 1) % 3}`,
        key,
        serverId: "srv",
        tool: "t",
        arguments: null,
        argumentsHash: "h",
        owner: "dispatcher",
        // Due, and the dispatcher's lease already over: anyone may claim.
        leaseMs: 0,
        now: T0,
      }),
    { concurrency: 16, discard: true },
  )

describe("leases across pools", () => {
  it.scoped(
    "no row is claimed twice within a lease; expired leases are taken over; stale owners are fenced",
    () =>
      TestServices.provideLive(
        Effect.gen(function* () {
          const instances = yield* fleet
          const [first] = instances
          if (first === undefined) return
          yield* seed(first.store, ROWS)

          // Round 1: every instance drains due rows with its claim loop, "polling" each claimed
          // row by moving its next poll past the claim instant. (One loop per owner id: an owner
          // reclaims its own leased rows at once, by contract, so two concurrent loops under one
          // id would take each other's rows.)
          const claims = new Map<string, Array<{ readonly owner: string; readonly record: HandleRecord }>>()
          yield* Effect.forEach(
            instances,
            ({ name, store }) =>
              Effect.gen(function* () {
                for (;;) {
                  const batch = yield* store.claimDue({ owner: name, now: T0 + 1, leaseMs: LEASE, limit: 7 })
                  if (batch.length === 0) return
                  for (const record of batch) {
                    const polled = yield* store.update(
                      new HandleRecord({ ...record, nextPollAt: T0 + 10_000 }),
                    )
                    claims.set(record.key, [
                      ...(claims.get(record.key) ?? []),
                      { owner: name, record: polled },
                    ])
                  }
                }
              }),
            { concurrency: "unbounded", discard: true },
          )
          expect(claims.size).toBe(ROWS)
          for (const list of claims.values()) expect(list).toHaveLength(1)
          const perInstance = instances.map(
            ({ name }) => [...claims.values()].filter(([c]) => c?.owner === name).length,
          )
          // Everyone took part (SKIP LOCKED spreads the rows instead of serialising the claimers).
          for (const n of perInstance) expect(n).toBeGreaterThan(0)

          // Due again, but every lease is live: nobody else gets anything.
          for (const { name, store } of instances) {
            const early = yield* store.claimDue({
              owner: `${name}-other`,
              now: T0 + 10_000,
              leaseMs: LEASE,
              limit: 1000,
            })
            expect(early).toHaveLength(0)
          }

          // i1 "dies" (a long pause); its leases expire and the others take its rows over.
          const deadRows = [...claims.values()].flat().filter((c) => c.owner === "i1")
          const expiry = T0 + 1 + LEASE
          const takeover = (yield* Effect.forEach(
            instances.slice(1),
            ({ name, store }) => store.claimDue({ owner: name, now: expiry, leaseMs: LEASE, limit: 1000 }),
            { concurrency: "unbounded" },
          )).flat()
          // Everything is due at `expiry`, leases of i2..i4 included (they expire at the same
          // instant), so each survivor takes rows; none is taken twice.
          const taken = takeover.map((r) => r.key)
          expect(new Set(taken).size).toBe(taken.length)
          expect(taken.length).toBe(ROWS)
          for (const { record } of deadRows) expect(taken).toContain(record.key)
          const takenBy = new Map(takeover.map((r) => [r.key, r]))

          // The paused instance wakes up and writes what it believes: every write is fenced off.
          // (Its pool's four connections at once: a hundred rows one by one took seconds at load.)
          yield* Effect.forEach(
            deadRows,
            ({ record }) =>
              Effect.gen(function* () {
                const late = yield* Effect.either(
                  first.store.update(new HandleRecord({ ...record, status: "completed", settledAt: expiry })),
                )
                expect(Either.isLeft(late) && late.left).toBeInstanceOf(VersionConflict)
                const current = Option.getOrThrow(yield* first.store.get(record.scope, record.key))
                expect(current.status).toBe("pending")
                expect(current).toEqual(takenBy.get(record.key))
              }),
            { concurrency: 4, discard: true },
          )
          // The new owner's write goes through.
          const [one] = deadRows
          if (one !== undefined) {
            const owner = takenBy.get(one.record.key)
            const instance = instances.find((i) => i.name === owner?.leaseOwner)
            if (owner === undefined || instance === undefined) throw new Error("no new owner")
            const done = yield* instance.store.update(
              new HandleRecord({ ...owner, status: "completed", settledAt: expiry }),
            )
            expect(done.status).toBe("completed")
          }
        }).pipe(Effect.provide(TestDatabase.layerClient())),
      ),
    // About 1,500 statements over five pools, four of them migrating at once: a few seconds on a
    // quiet machine, over 30 s at load 16 on two cores. Bounded, and generous.
    120_000,
  )

  it.scoped("a claimer skips rows another connection holds locked instead of waiting", () =>
    TestServices.provideLive(
      Effect.gen(function* () {
        const [a, b] = yield* fleet
        if (a === undefined || b === undefined) return
        const { schema } = yield* TestDatabase.TestSchema
        yield* seed(a.store, 5)
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // Instance a holds row-0000 locked in an open transaction (as a claim in flight would).
        const holder = yield* Effect.fork(
          a.sql.withTransaction(
            Effect.gen(function* () {
              yield* a.sql`SELECT 1 FROM ${a.sql(`${schema}.handles`)} WHERE key = 'row-0000' FOR UPDATE`
              yield* Deferred.succeed(locked, undefined)
              yield* Deferred.await(release)
            }),
          ),
        )
        yield* Deferred.await(locked)
        const claimed = yield* b.store.claimDue({ owner: "b", now: T0 + 1, leaseMs: LEASE, limit: 10 }).pipe(
          Effect.timeoutFail({
            duration: "5 seconds",
            onTimeout: () => new Error("claim blocked on a lock"),
          }),
        )
        expect(claimed.map((r) => r.key).sort()).toEqual(["row-0001", "row-0002", "row-0003", "row-0004"])
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        const rest = yield* b.store.claimDue({ owner: "c", now: T0 + 1, leaseMs: LEASE, limit: 10 })
        expect(rest.map((r) => r.key)).toEqual(["row-0000"])
      }).pipe(Effect.provide(TestDatabase.layerClient())),
    ),
  )
})
