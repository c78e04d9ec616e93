/**
 * A PostgreSQL database of a test's own, on DATABASE_URL's server if set, else the embedded one
 * the other Postgres tests use; dropped by `drop`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

/** Runs one statement as the test database's user, outside any store. */
const admin = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url) })),
    ),
  )

export interface FreshDatabase {
  /** The database's URL, for `--store`. */
  readonly url: string
  readonly name: string
  readonly drop: () => Promise<void>
}

/** Creates a database named `prefix`, the process and the time. */
export const freshDatabase = async (prefix: string): Promise<FreshDatabase> => {
  const server = await Effect.runPromise(TestDatabase.databaseUrl)
  const name = `${prefix}_${process.pid}_${Date.now()}`
  await admin(server, `CREATE DATABASE ${name}`)
  const url = new URL(server)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    drop: () => admin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined),
  }
}
