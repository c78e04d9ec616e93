/**
 * A store as plain SQL reads it, for the tests that look for secrets at rest: every row of every
 * table, as one JSON string.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

const dump = (
  client: Layer.Layer<SqlClient.SqlClient, unknown>,
  tables: string,
  qualify: (name: string) => string,
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const names = yield* sql.unsafe<{ readonly name: string }>(tables)
      return JSON.stringify(
        yield* Effect.forEach(names, (table) => sql.unsafe(`SELECT * FROM ${qualify(table.name)}`)),
      )
    }).pipe(Effect.provide(client)),
  )

/** Every table of the SQLite file. */
export const sqliteDump = (filename: string): Promise<string> =>
  dump(
    SqliteClient.layer({ filename, readonly: true }),
    "SELECT name FROM sqlite_master WHERE type = 'table'",
    (name) => `"${name}"`,
  )

/** Every table of the store's schema in the PostgreSQL database at `url`. */
export const pgDump = (url: string, schema = "mcp_handles"): Promise<string> =>
  dump(
    PgClient.layer({ url: Redacted.make(url) }),
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = '${schema}'`,
    (name) => `${schema}."${name}"`,
  )
