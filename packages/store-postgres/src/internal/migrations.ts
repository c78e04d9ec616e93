/**
 * The schema, as @effect/sql migrations. Every statement names its schema explicitly: the
 * store never relies on `search_path`, which is per connection and set by whoever owns the pool.
 *
 * @internal
 */
import type * as Migrator from "@effect/sql/Migrator"
import type { SqlClient } from "@effect/sql/SqlClient"
import * as Sql from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export const table = "handles"
export const migrationsTable = "mcp_handles_migrations"

const openStatuses = "('pending', 'working', 'input_required')"

/** One statement per call: a multi-statement string cannot go through the extended protocol. */
const statements = (sql: SqlClient, schema: string) => {
  const t = sql(`${schema}.${table}`)
  return [
    sql`CREATE TABLE ${t} (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      scope text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      server_id text COLLATE "C" NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'working', 'input_required', 'completed', 'failed', 'cancelled', 'expired', 'in_doubt')),
      next_poll_at double precision,
      lease_owner text COLLATE "C",
      lease_expires_at double precision,
      version bigint NOT NULL,
      created_at double precision NOT NULL,
      settled_at double precision,
      body json NOT NULL,
      write_id uuid,
      CONSTRAINT handles_scope_key UNIQUE (scope, key)
    )`,
    sql`CREATE INDEX handles_list ON ${t} (scope, created_at, key)`,
    sql`CREATE INDEX handles_scope_status ON ${t} (scope, status)`,
    sql`CREATE INDEX handles_scope_server ON ${t} (scope, server_id)`,
    sql`CREATE INDEX handles_due ON ${t} (next_poll_at) WHERE status IN ${sql.literal(openStatuses)}`,
    sql`CREATE INDEX handles_lease_owner ON ${t} (lease_owner) WHERE lease_owner IS NOT NULL`,
    sql`CREATE INDEX handles_lease_expires ON ${t} (lease_expires_at) WHERE lease_owner IS NOT NULL`,
    sql`CREATE INDEX handles_settled ON ${t} (settled_at) WHERE settled_at IS NOT NULL`,
  ]
}

/**
 * The migrations this version of the package knows. `latestVersion` is the highest id: a
 * database migrated beyond it was written by a newer release and is refused.
 */
export const loader = (schema: string): Migrator.Loader =>
  Effect.succeed([
    [
      1,
      "create_handles",
      Effect.succeed(
        Effect.flatMap(Sql.SqlClient, (sql) =>
          Effect.forEach(statements(sql, schema), (s) => s, { discard: true }),
        ),
      ),
    ],
  ])

export const latestVersion = 1
