/**
 * Servers (issues 15 item 7 and 16): the `servers` table, one statement per operation. Each is
 * safe to retry after a lost reply: the upsert sets absolute values (last seen never moves
 * back), a second removal or rebind finds nothing more to do (its answer is then a lower bound).
 *
 * @internal
 */
import type { PgClient } from "@effect/sql-pg/PgClient"
import * as HandleStoreDriver from "@mcp-handles/core/HandleStoreDriver"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Migrations from "./migrations.js"
import type { StatementRunner } from "./statement-runner.js"

const decodeServers = Schema.decodeUnknown(Schema.Array(HandleStoreDriver.ServerRow))

const columns = 'name, url, id, first_seen_at::float8 AS "firstSeenAt", last_seen_at::float8 AS "lastSeenAt"'

export const servers = (
  sql: PgClient,
  schema: string,
  run: StatementRunner,
): Pick<HandleStoreDriver.HandleStoreDriver, "recordServer" | "listServers" | "removeServer" | "rebind"> => {
  const s = sql(`${schema}.${Migrations.serversTable}`)
  const t = sql(`${schema}.${Migrations.table}`)
  const cols = sql.literal(columns)
  const inScope = (alias: string, scope: string | undefined) =>
    scope === undefined ? sql.literal("") : sql`AND ${sql.literal(alias)}.scope = ${scope}`

  return {
    recordServer: ({ name, url, id, now }) =>
      run(
        "recordServer",
        sql`INSERT INTO ${s} AS s (name, url, id, first_seen_at, last_seen_at)
          VALUES (${name}, ${url}, ${id}, ${now}, ${now})
          ON CONFLICT (name) DO UPDATE SET url = excluded.url, id = excluded.id,
            last_seen_at = greatest(s.last_seen_at, excluded.last_seen_at)
          RETURNING ${cols}`.withoutTransform.pipe(
          Effect.flatMap(decodeServers),
          Effect.flatMap(([server]) =>
            server === undefined
              ? Effect.fail(new Error("the upsert returned no row"))
              : Effect.succeed(server),
          ),
        ),
      ),

    listServers: run(
      "listServers",
      sql`SELECT ${cols} FROM ${s} ORDER BY name`.withoutTransform.pipe(Effect.flatMap(decodeServers)),
    ),

    removeServer: (name) =>
      run(
        "removeServer",
        sql`DELETE FROM ${s} WHERE name = ${name} RETURNING 1 AS ok`.withoutTransform.pipe(
          Effect.map((rows) => rows.length > 0),
        ),
      ),

    // One statement: the clash check and the move see one snapshot, so either every row moves
    // or none does.
    rebind: ({ from, to, scope }) =>
      run(
        "rebind",
        sql<{
          readonly scope: string | null
          readonly key: string | null
          readonly n: number
        }>`WITH clash AS (
            SELECT a.scope, a.key FROM ${t} a
            WHERE a.server_id = ${from} ${inScope("a", scope)} AND a.task_id IS NOT NULL
              AND EXISTS (SELECT 1 FROM ${t} b WHERE b.server_id = ${to} AND b.task_id = a.task_id)
            LIMIT 1
          ), moved AS (
            UPDATE ${t} h SET server_id = ${to}, version = h.version + 1, write_id = NULL
            WHERE h.server_id = ${from} ${inScope("h", scope)} AND NOT EXISTS (SELECT 1 FROM clash)
            RETURNING 1
          )
          SELECT (SELECT scope FROM clash) AS scope, (SELECT key FROM clash) AS key,
            (SELECT count(*)::int FROM moved) AS n`.withoutTransform.pipe(
          Effect.map(
            ([row]): HandleStoreDriver.RebindOutcome =>
              row?.scope != null && row.key != null
                ? { taken: { scope: row.scope, key: row.key } }
                : { moved: row?.n ?? 0 },
          ),
        ),
      ),
  }
}
