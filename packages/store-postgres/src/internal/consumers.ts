/**
 * Consumers (issue 28) on PostgreSQL: the `consumers` table, and GC, which waits for them. Each
 * operation is one statement, safe to retry after a lost reply: a second forget or sweep finds
 * nothing more to do, and its answer is then a lower bound.
 *
 * @internal
 */
import type { PgClient } from "@effect/sql-pg/PgClient"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HandleStoreDriver from "@mcp-handles/core/HandleStoreDriver"
import * as SqlStore from "@mcp-handles/core/SqlStore"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Migrations from "./migrations.js"
import type { StatementRunner } from "./statement-runner.js"

const decodeConsumers = Schema.decodeUnknown(Schema.Array(HandleStoreDriver.ConsumerRow))

const columns =
  'consumer, scope, first_seen_at::float8 AS "firstSeenAt", last_seen_at::float8 AS "lastSeenAt"'

/** One row of a sweep's answer: the totals (no consumer), or one consumer's unacknowledged count. */
interface SweepRow {
  readonly consumer: string | null
  readonly scope: string | null
  readonly n: number
  readonly kept: number
}

export const consumers = (
  sql: PgClient,
  schema: string,
  run: StatementRunner,
): Pick<HandleStoreDriver.HandleStoreDriver, "listConsumers" | "forgetConsumer" | "deleteSettledBefore"> => {
  const t = sql(`${schema}.${Migrations.table}`)
  const c = sql(`${schema}.${Migrations.consumersTable}`)
  const d = sql(`${schema}.${Migrations.deliveriesTable}`)
  const terminal = sql.literal(`(${SqlStore.terminalStatusList})`)
  const inScope = (scope: string | undefined) =>
    scope === undefined ? sql.literal("") : sql`AND scope = ${scope}`

  return {
    listConsumers: (scope) =>
      run(
        "listConsumers",
        sql`SELECT ${sql.literal(columns)} FROM ${c} WHERE TRUE ${inScope(scope)}
          ORDER BY scope, consumer`.withoutTransform.pipe(Effect.flatMap(decodeConsumers)),
      ),

    // Its deliveries go with it: should it claim again, it is a new consumer.
    forgetConsumer: ({ consumer, scope }) =>
      run(
        "forgetConsumer",
        sql<{ readonly n: number }>`WITH deliveries AS (
            DELETE FROM ${d} WHERE consumer = ${consumer} ${inScope(scope)}
          ), forgotten AS (
            DELETE FROM ${c} WHERE consumer = ${consumer} ${inScope(scope)} RETURNING 1
          )
          SELECT count(*)::int AS n FROM forgotten`.withoutTransform.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
        ),
      ),

    // One statement: what it reports, keeps and deletes come from one snapshot. The DELETE
    // checks the row's own conditions again, so a row replaced under the same key meanwhile
    // (collected and called again) is judged as it is now.
    deleteSettledBefore: ({ scope, settledBefore, unacknowledgedBefore }) => {
      const past =
        unacknowledgedBefore === undefined
          ? sql.literal("false")
          : sql`h.settled_at < ${unacknowledgedBefore}`
      return run(
        "deleteSettledBefore",
        sql<SweepRow>`WITH old AS (
            SELECT h.id, h.scope, h.key, h.status, (h.body->>'launches')::float8 AS launches, ${past} AS past
            FROM ${t} h
            WHERE h.status IN ${terminal} AND h.settled_at < ${settledBefore} ${inScope(scope)}
              -- One with a due time still has a stray task to cancel: that task's only record.
              AND h.next_poll_at IS NULL
          ), holding AS (
            SELECT c.consumer, o.id, o.scope, o.past FROM old o JOIN ${c} c ON c.scope = o.scope
            WHERE NOT EXISTS (SELECT 1 FROM ${d} d
              WHERE d.consumer = c.consumer AND d.scope = o.scope AND d.key = o.key
                AND d.acked AND d.status = o.status AND d.launches = o.launches)
          ), deleted AS (
            DELETE FROM ${t} h USING old o
            WHERE h.id = o.id AND h.status IN ${terminal} AND h.settled_at < ${settledBefore}
              AND h.next_poll_at IS NULL
              AND (o.past OR NOT EXISTS (SELECT 1 FROM holding x WHERE x.id = o.id))
            RETURNING h.id
          )
          SELECT NULL::text AS consumer, NULL::text AS scope, (SELECT count(*)::int FROM deleted) AS n,
            (SELECT count(DISTINCT id)::int FROM holding WHERE NOT past) AS kept
          UNION ALL
          SELECT x.consumer, x.scope, count(*)::int, 0 FROM holding x JOIN deleted USING (id)
          GROUP BY x.consumer, x.scope`.withoutTransform.pipe(
          Effect.map((rows): HandleStore.GcReport => {
            const totals = rows.find((row) => row.consumer === null)
            return {
              deleted: totals?.n ?? 0,
              kept: totals?.kept ?? 0,
              unacknowledged: rows.flatMap((row) =>
                row.consumer === null || row.scope === null
                  ? []
                  : [{ consumer: row.consumer, scope: row.scope, outcomes: row.n }],
              ),
            }
          }),
        ),
      )
    },
  }
}
