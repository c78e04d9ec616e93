/**
 * Migration 8 (issue 29 item 5, as SQLite's migration 11): what the boot spread and the lease
 * renewal read of the `json` body (the interval the server asked for, whether a cancel is
 * recorded but unsent) is kept in columns. The columns must say what the body says: filled from
 * it for rows written before, written with it by every write after; and the spread must take the
 * rows it took when it read the body, each within the window the body gave it.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import { SpreadWrites } from "@mcp-handles/store-contract"
import { PgStore } from "@mcp-handles/store-postgres"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"

const { apply, change, towardDue, T0 } = SpreadWrites

let run = 0

/** A store on a fresh schema of the test's database, with `changes` written through it. */
const storeWith = (changes: ReadonlyArray<SpreadWrites.Change>) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const { schema } = yield* TestDatabase.TestSchema
    const own = `${schema}_${run++}`
    yield* Effect.addFinalizer(() => Effect.ignore(sql`DROP SCHEMA IF EXISTS ${sql(own)} CASCADE`))
    const store = yield* PgStore.make({ schema: own })
    yield* Effect.forEach(changes, (c) => apply(store, c))
    return { sql, own, store, t: sql(`${own}.handles`) }
  })

/** The rows whose columns differ from what their body says, by migration 8's rules. */
const mismatched = (sql: PgClient.PgClient, own: string) =>
  sql`SELECT key FROM ${sql(`${own}.handles`)} WHERE
    poll_interval_ms IS DISTINCT FROM (CASE WHEN json_typeof(body->'snapshot'->'pollIntervalMs') = 'number'
      THEN (body->'snapshot'->>'pollIntervalMs')::float8 END)
    OR cancel_unsent IS DISTINCT FROM coalesce(json_typeof(body->'cancel') = 'object'
      AND (body->'cancel'->>'sent') IS DISTINCT FROM 'true', false)`.withoutTransform

describe("migration 8: the spread's columns", () => {
  it.layer(TestDatabase.layerClient())((it) => {
    it.scoped("a version 7 schema with rows is migrated: each row's columns say what its record says", () =>
      Effect.forEach(
        fc.sample(fc.array(change, { minLength: 1, maxLength: 12 }), { numRuns: 25, seed: 11 }),
        (changes) =>
          Effect.gen(function* () {
            const { sql, own, t } = yield* storeWith(changes)
            yield* sql`ALTER TABLE ${t} DROP COLUMN poll_interval_ms, DROP COLUMN cancel_unsent`
            yield* sql`DELETE FROM ${sql(`${own}.mcp_handles_migrations`)} WHERE migration_id > 7`
            const store = yield* PgStore.make({ schema: own })
            const records = (yield* store.list({ scope: "s", limit: 10 })).records
            const rows = yield* sql<{
              readonly key: string
              readonly interval: number | null
              readonly unsent: boolean
            }>`SELECT key, poll_interval_ms AS interval, cancel_unsent AS unsent FROM ${t} ORDER BY key`
              .withoutTransform
            const [version] =
              yield* sql`SELECT max(migration_id) AS v FROM ${sql(`${own}.mcp_handles_migrations`)}`
                .withoutTransform
            expect(version).toEqual({ v: PgStore.schemaVersion })
            // The oracle is the record itself, in JavaScript (the migration computes in SQL).
            expect(rows).toEqual(
              [...records]
                .sort((a, b) => (a.key < b.key ? -1 : 1))
                .map((record) => ({
                  key: record.key,
                  // JSON (and so the body) has no negative zero.
                  interval:
                    typeof record.snapshot?.pollIntervalMs === "number"
                      ? record.snapshot.pollIntervalMs + 0
                      : null,
                  unsent: record.cancel !== null && !record.cancel.sent,
                })),
            )
            expect(yield* mismatched(sql, own)).toEqual([])
          }).pipe(Effect.scoped),
        { discard: true },
      ),
    )

    it.scoped("after any sequence of writes, every row's columns say what its body says", () =>
      Effect.forEach(
        fc.sample(fc.array(change, { minLength: 1, maxLength: 30 }), { numRuns: 25, seed: 12 }),
        (changes) =>
          Effect.gen(function* () {
            const { sql, own } = yield* storeWith(changes)
            expect(yield* mismatched(sql, own)).toEqual([])
          }).pipe(Effect.scoped),
        { discard: true },
      ),
    )

    it.scoped("spreadDue takes the rows it took reading the body, each within the body's window", () =>
      Effect.gen(function* () {
        let spread = 0
        const cases = fc.sample(
          fc.tuple(
            fc.array(towardDue, { minLength: 1, maxLength: 20 }),
            fc.record({
              limit: fc.integer({ min: 1, max: 6 }),
              min: fc.integer({ min: 1, max: 2_000 }),
              span: fc.integer({ min: 0, max: 100_000 }),
              default: fc.integer({ min: 1, max: 100_000 }),
              owner: fc.constantFrom("me", "spreader"),
              takeOver: fc.constantFrom<ReadonlyArray<string>>([], ["me"]),
            }),
          ),
          { numRuns: 60, seed: 13 },
        )
        for (const [changes, o] of cases) {
          yield* Effect.gen(function* () {
            const { sql, store, t } = yield* storeWith(changes)
            const max = o.min + o.span
            // The rows and windows as the statement that read the body picked them.
            const expected = yield* sql<{
              readonly key: string
              readonly due: number
              readonly span: number
            }>`
              SELECT key, next_poll_at AS due, CASE WHEN json_typeof(body->'snapshot'->'pollIntervalMs') = 'number'
                  THEN greatest(${o.min}::float8, least(${max}::float8, ceil((body->'snapshot'->>'pollIntervalMs')::float8)))
                  ELSE ${o.default}::float8 END AS span
              FROM ${t}
              WHERE status IN ('pending', 'working', 'input_required') AND status <> 'pending' AND next_poll_at <= ${T0}
                AND (lease_owner IS NULL OR lease_owner = ${o.owner}
                  OR ${o.takeOver.length > 0 ? sql`lease_owner IN ${sql.in(o.takeOver)}` : sql`FALSE`}
                  OR lease_expires_at <= ${T0})
                AND json_typeof(body->'taskId') = 'string'
                AND (json_typeof(body->'cancel') IS DISTINCT FROM 'object' OR body->'cancel'->>'sent' = 'true')
              ORDER BY next_poll_at, id LIMIT ${o.limit}`.withoutTransform
            const n = yield* store.spreadDue({
              owner: o.owner,
              takeOver: o.takeOver,
              now: T0,
              leaseMs: 30_000,
              limit: o.limit,
              minIntervalMs: o.min,
              maxIntervalMs: max,
              defaultIntervalMs: o.default,
            })
            const after = yield* sql<{ readonly key: string; readonly next: number; readonly owner: string }>`
              SELECT key, next_poll_at AS next, lease_owner AS owner FROM ${t}
              WHERE key IN ${sql.in(expected.length > 0 ? expected.map((row) => row.key) : [""])}
              ORDER BY key`.withoutTransform
            expect(n).toBe(expected.length)
            expect(after.map((row) => row.key)).toEqual(expected.map((row) => row.key).sort())
            for (const row of after) {
              const picked = expected.find((e) => e.key === row.key)
              if (picked === undefined) throw new Error("unreachable")
              const from = Math.max(T0, Number(picked.due) + Number(picked.span))
              expect(row.owner).toBe(o.owner)
              expect(Number(row.next)).toBeGreaterThanOrEqual(from)
              expect(Number(row.next)).toBeLessThan(from + Math.max(1, Number(picked.span)))
            }
            spread += n
          }).pipe(Effect.scoped)
        }
        // The cases spread rows, so what was compared is not only empty selections.
        expect(spread).toBeGreaterThan(20)
      }),
    )
  })
})
