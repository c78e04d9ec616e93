/**
 * Migration 11 (issue 29 item 5): what the boot spread and the lease renewal read of the JSON
 * body (the interval the server asked for, whether a cancel is recorded but unsent) is kept in
 * columns, so the spread parses no JSON. The columns must say what the body says: filled from it
 * for rows written before, written with it by every write after, and the spread must schedule
 * exactly as it did when it read the body.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { SpreadWrites } from "@mcp-handles/store-contract"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import { latestVersion } from "../src/internal/migrations.js"
import { spreadStatement } from "../src/internal/writes.js"
import { withStore } from "./stores.js"

const { apply, change, towardDue, T0 } = SpreadWrites

let dir = ""
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-spread-columns-"))
})
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

/** The rows whose columns differ from what their body says, by migration 11's rules. */
const mismatched = (filename: string) => {
  const db = new Database(filename, { readonly: true })
  try {
    return db
      .prepare(`SELECT key, poll_interval_ms, cancel_unsent, body FROM handles WHERE NOT (
        poll_interval_ms IS (CASE WHEN json_type(body, '$.snapshot.pollIntervalMs') IN ('integer', 'real')
          THEN json_extract(body, '$.snapshot.pollIntervalMs') END)
        AND cancel_unsent IS (CASE WHEN json_type(body, '$.cancel') = 'object'
          AND json_extract(body, '$.cancel.sent') IS NOT 1 THEN 1 ELSE 0 END))`)
      .all()
  } finally {
    db.close()
  }
}

/** Turns the file back into what version 10 wrote: no spread columns. */
const toVersion10 = (filename: string) => {
  const old = new Database(filename)
  old.exec(`DROP INDEX handles_intents;
    ALTER TABLE handles DROP COLUMN poll_interval_ms;
    ALTER TABLE handles DROP COLUMN cancel_unsent;
    DELETE FROM mcp_handles_migrations WHERE migration_id > 10;`)
  old.close()
}

let run = 0
const freshFile = () => path.join(dir, `handles-${run++}.db`)

describe("migration 11: the spread's columns", () => {
  it.effect("a version 10 file with rows is migrated: each row's columns say what its record says", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 12 }), async (changes) => {
          const filename = freshFile()
          await Effect.runPromise(
            withStore(filename, (store) => Effect.forEach(changes, (c) => apply(store, c))),
          )
          toVersion10(filename)
          const records = await Effect.runPromise(
            withStore(filename, (store) =>
              Effect.forEach(["a", "b", "c", "d", "e"], (key) => store.get("s", key)).pipe(
                Effect.map((found) => found.flatMap(Option.toArray)),
              ),
            ),
          )
          const db = new Database(filename, { readonly: true })
          const version = db.prepare("SELECT max(migration_id) AS v FROM mcp_handles_migrations").get()
          const rows = db
            .prepare(
              "SELECT key, poll_interval_ms AS interval, cancel_unsent AS unsent FROM handles ORDER BY key",
            )
            .all() as Array<{ key: string; interval: number | null; unsent: number }>
          db.close()
          expect(version).toEqual({ v: latestVersion })
          // The oracle is the record itself, in JavaScript (the migration computes in SQL).
          expect(rows).toEqual(
            records.map((record) => ({
              key: record.key,
              interval:
                typeof record.snapshot?.pollIntervalMs === "number"
                  ? // JSON (and so the body) has no negative zero.
                    record.snapshot.pollIntervalMs + 0
                  : null,
              unsent: record.cancel !== null && !record.cancel.sent ? 1 : 0,
            })),
          )
          expect(mismatched(filename)).toEqual([])
        }),
        { numRuns: 40 },
      ),
    ),
  )

  it.effect("after any sequence of writes, every row's columns say what its body says", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 30 }), async (changes) => {
          const filename = freshFile()
          await Effect.runPromise(
            withStore(filename, (store) => Effect.forEach(changes, (c) => apply(store, c))),
          )
          expect(mismatched(filename)).toEqual([])
        }),
        { numRuns: 60 },
      ),
    ),
  )
})

/** The spread as it was before migration 11: the interval and the cancel check read from the body. */
const bodySpreadStatement = `WITH picked AS MATERIALIZED (
    SELECT rowid AS id, next_poll_at AS due, body -> '$.snapshot.pollIntervalMs' AS interval
    FROM handles
    WHERE status IN ('pending', 'working', 'input_required') AND status <> 'pending' AND next_poll_at <= @now
      AND (lease_owner IS NULL OR lease_owner = @owner
        OR lease_owner IN (SELECT value FROM json_each(@takeOver)) OR lease_expires_at <= @now)
      AND task_id IS NOT NULL
      AND (json_type(body, '$.cancel') IS NOT 'object' OR json_extract(body, '$.cancel.sent') = 1)
      AND (@servers = 0 OR server_id IN (SELECT value FROM json_each(@ids))
  OR (CASE WHEN length(server_id) > 17 AND substr(server_id, -17, 1) = ':'
    THEN substr(server_id, 1, length(server_id) - 17) ELSE server_id END) IN (SELECT value FROM json_each(@names)))
    ORDER BY next_poll_at, created_at, scope, key LIMIT @limit),
  windowed AS (SELECT id, due, CASE WHEN json_type(interval) IN ('integer', 'real')
    THEN max(@min, min(@max, CAST(json_extract(interval, '$') AS INTEGER))) ELSE @default END AS window
    FROM picked),
  timed AS MATERIALIZED (SELECT id,
    max(@now, due + window) + ((id * 2654435761 + @seed) % 4294967296) % window AS next FROM windowed)
  UPDATE handles SET next_poll_at = timed.next, lease_owner = @owner, lease_expires_at = timed.next + @lease,
    version = version + 1
  FROM timed WHERE handles.rowid = timed.id`

/** Runs `statement` on a copy of `filename` and returns every row's schedule and lease after it. */
const scheduleAfter = (filename: string, statement: string, params: Record<string, unknown>) => {
  const copy = `${filename}-${run++}.db`
  fs.copyFileSync(filename, copy)
  const db = new Database(copy)
  try {
    const changed = db.prepare(statement).run(params).changes
    const rows = db
      .prepare("SELECT key, next_poll_at, lease_owner, lease_expires_at, version FROM handles ORDER BY key")
      .all()
    return { changed, rows }
  } finally {
    db.close()
  }
}

let spread = 0

describe("spreadDue with the columns", () => {
  it.effect("schedules every row exactly as the statement that read the body did", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(towardDue, { minLength: 1, maxLength: 20 }),
          fc.record({
            seed: fc.integer({ min: 0, max: 4294967295 }),
            limit: fc.integer({ min: 1, max: 6 }),
            min: fc.integer({ min: 1, max: 2_000 }),
            span: fc.integer({ min: 0, max: 100_000 }),
            default: fc.integer({ min: 1, max: 100_000 }),
            // The rows' lease holder ("me", see stores.ts) spreads, or another instance takes it over, or not.
            owner: fc.constantFrom("me", "spreader"),
            takeOver: fc.constantFrom("[]", '["me"]'),
          }),
          async (changes, options) => {
            const filename = freshFile()
            // Closed (checkpointed) before the copies are made, so each copy holds every row.
            await Effect.runPromise(
              withStore(filename, (store) => Effect.forEach(changes, (c) => apply(store, c))),
            )
            const params = {
              now: T0,
              min: options.min,
              max: options.min + options.span,
              default: options.default,
              seed: options.seed,
              owner: options.owner,
              lease: 30_000,
              takeOver: options.takeOver,
              limit: options.limit,
              servers: 0,
              ids: "[]",
              names: "[]",
            }
            const before = scheduleAfter(filename, bodySpreadStatement, params)
            expect(scheduleAfter(filename, spreadStatement, params)).toEqual(before)
            spread += before.changed
          },
        ),
        { numRuns: 80 },
      ),
    ).pipe(
      // The runs between them spread rows, so the schedules compared are not all untouched ones.
      Effect.tap(() => expect(spread).toBeGreaterThan(40)),
    ),
  )
})
