/**
 * Outcome delivery (issue 15) on PostgreSQL: `claimOutcomes`, `ackOutcome`, `releaseOutcomes`.
 *
 * @internal
 */
import type { PgClient } from "@effect/sql-pg/PgClient"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import type * as HandleStoreDriver from "@mcp-handles/core/HandleStoreDriver"
import * as SqlStore from "@mcp-handles/core/SqlStore"
import * as Effect from "effect/Effect"
import type * as ParseResult from "effect/ParseResult"
import * as Migrations from "./migrations.js"
import * as Rows from "./rows.js"
import type { StatementRunner } from "./statement-runner.js"

const corrupt = (error: ParseResult.ParseError) =>
  new HandleStore.StoreError({
    operation: "claimOutcomes",
    message: `stored row is not a valid record: ${error.message.slice(0, 2000)}`,
    cause: error,
  })

/**
 * Outcome delivery (issue 15). A claim is one statement, which also makes its consumer known in
 * the scope (issue 28): due rows are upserted into the
 * deliveries table, and the upsert's own condition decides between members claiming at once
 * (the second waits for the first to commit, then finds a live claim and takes nothing), so
 * each outcome goes to one member without locking the rows the engine writes. A claim retried
 * after a lost reply finds its first attempt's claims live and returns none of them: they are
 * handed out again when their claim runs out (at least once).
 */
export const outcomeDelivery = (
  sql: PgClient,
  schema: string,
  run: StatementRunner,
): Pick<HandleStoreDriver.HandleStoreDriver, "claimOutcomes" | "ackOutcome" | "releaseOutcomes"> => {
  const t = sql(`${schema}.${Migrations.table}`)
  const d = sql(`${schema}.${Migrations.deliveriesTable}`)
  const c = sql(`${schema}.${Migrations.consumersTable}`)
  const columns = sql.literal(
    Rows.selectColumns
      .split(", ")
      .map((column) => `h.${column}`)
      .join(", "),
  )
  const resting = sql.literal(`(${SqlStore.restingStatusList})`)
  const launches = sql.literal("(h.body->>'launches')::float8")
  return {
    claimOutcomes: ({ consumer, member, scope, now, leaseMs, limit }) =>
      run(
        "claimOutcomes",
        sql`WITH seen AS (
            INSERT INTO ${c} AS c (scope, consumer, first_seen_at, last_seen_at)
            VALUES (${scope}, ${consumer}, ${now}, ${now})
            ON CONFLICT (scope, consumer) DO UPDATE SET
              last_seen_at = greatest(c.last_seen_at, excluded.last_seen_at)
          ), due AS (
            SELECT h.scope, h.key, h.status, ${launches} AS launches
            FROM ${t} h LEFT JOIN ${d} d ON d.consumer = ${consumer} AND d.scope = h.scope AND d.key = h.key
            WHERE h.scope = ${scope} AND h.status IN ${resting}
              AND (d.consumer IS NULL OR d.status <> h.status OR d.launches <> ${launches}
                OR (NOT d.acked AND (d.lease_until IS NULL OR d.lease_until <= ${now})))
            ORDER BY h.created_at, h.key
            LIMIT ${limit}
          ), claimed AS (
            INSERT INTO ${d} AS d (consumer, scope, key, status, launches, member, lease_until, acked, deliveries)
            SELECT ${consumer}, scope, key, status, launches, ${member}, ${now + leaseMs}, false, 1 FROM due
            ON CONFLICT (consumer, scope, key) DO UPDATE SET
              deliveries = CASE WHEN d.status = excluded.status AND d.launches = excluded.launches
                THEN d.deliveries + 1 ELSE 1 END,
              status = excluded.status, launches = excluded.launches, member = excluded.member,
              lease_until = excluded.lease_until, acked = false
            WHERE d.status <> excluded.status OR d.launches <> excluded.launches
              OR (NOT d.acked AND (d.lease_until IS NULL OR d.lease_until <= ${now}))
            RETURNING d.scope, d.key, d.deliveries
          )
          SELECT ${columns}, claimed.deliveries AS delivered
          FROM ${t} h JOIN claimed ON claimed.scope = h.scope AND claimed.key = h.key
          ORDER BY h.created_at, h.key`.withoutTransform.pipe(
          Effect.flatMap((rows) =>
            Effect.forEach(rows, (raw) =>
              Effect.map(
                Effect.mapError(Rows.decodeRow(raw), corrupt),
                (row): HandleStore.OutcomeDelivery => ({
                  consumer,
                  record: row.record,
                  deliveries: Number((raw as { readonly delivered?: unknown }).delivered),
                }),
              ),
            ),
          ),
        ),
      ),

    ackOutcome: ({ consumer, scope, key, rest }) =>
      run(
        "ackOutcome",
        sql`UPDATE ${d} SET acked = true
          WHERE consumer = ${consumer} AND scope = ${scope} AND key = ${key}
            ${rest === undefined ? sql.literal("") : sql`AND status = ${rest.status} AND launches = ${rest.launches}`}
          RETURNING 1 AS ok`.withoutTransform.pipe(Effect.map((rows) => rows.length === 1)),
      ),

    releaseOutcomes: ({ consumer, member }) =>
      run(
        "releaseOutcomes",
        sql`UPDATE ${d} SET member = NULL, lease_until = NULL
          WHERE consumer = ${consumer} AND member = ${member} AND NOT acked
          RETURNING 1 AS ok`.withoutTransform.pipe(Effect.map((rows) => rows.length)),
      ),
  }
}
