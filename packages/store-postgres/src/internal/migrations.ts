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
/** Outcome delivery (issue 15): what each consumer was handed and acknowledged. */
export const deliveriesTable = "outcome_deliveries"
/** Servers (issues 15 item 7 and 16): each server's name, URL and identity. */
export const serversTable = "servers"
/** Consumers (issue 28): who GC waits for, per scope. */
export const consumersTable = "consumers"
/** Instance ids taken, with their advisory lock keys (issue 33: the fleet, also idle holders). */
export const instancesTable = "instances"

/** The unique index that keeps a task id on one row; its violations are `TaskIdTaken`. */
export const taskIndex = "handles_task"

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
    [
      2,
      "task_id_unique",
      // A server's task id is held by one row (see HandleStore.TaskIdTaken). A column of its
      // own, holding the id as a JSON string literal: an index on the json body would parse
      // every body, and a NUL (which a server may send) cannot be text.
      Effect.succeed(
        Effect.flatMap(Sql.SqlClient, (sql) => {
          const t = sql(`${schema}.${table}`)
          return Effect.all(
            [
              sql`ALTER TABLE ${t} ADD COLUMN task_id text COLLATE "C"`,
              sql`UPDATE ${t} SET task_id = to_json(body->>'taskId')::text
                WHERE strpos(body::text, '\\u0000') = 0 AND body->>'taskId' IS NOT NULL`,
              sql`CREATE UNIQUE INDEX ${sql(taskIndex)} ON ${t} (server_id, task_id) WHERE task_id IS NOT NULL`,
            ],
            { discard: true },
          )
        }),
      ),
    ],
    [
      3,
      "outcome_deliveries",
      // Outcome delivery (issue 15): per consumer and row, the rest last handed out, to which
      // member and until when, and whether it was acknowledged. Deleted with the row (GC).
      Effect.succeed(
        Effect.flatMap(Sql.SqlClient, (sql) => {
          const t = sql(`${schema}.${table}`)
          const d = sql(`${schema}.${deliveriesTable}`)
          return Effect.all(
            [
              sql`CREATE TABLE ${d} (
                consumer text COLLATE "C" NOT NULL,
                scope text COLLATE "C" NOT NULL,
                key text COLLATE "C" NOT NULL,
                status text NOT NULL,
                launches double precision NOT NULL,
                member text COLLATE "C",
                lease_until double precision,
                acked boolean NOT NULL,
                deliveries integer NOT NULL,
                PRIMARY KEY (consumer, scope, key),
                FOREIGN KEY (scope, key) REFERENCES ${t} (scope, key) ON DELETE CASCADE
              )`,
              sql`CREATE INDEX outcome_deliveries_row ON ${d} (scope, key)`,
            ],
            { discard: true },
          )
        }),
      ),
    ],
    [
      4,
      "servers",
      // Servers (issues 15 item 7 and 16): each server's name, URL (never credentials), the
      // identity rows written against that URL carry, and when it was first and last seen.
      Effect.succeed(
        Effect.flatMap(
          Sql.SqlClient,
          (sql) =>
            sql`CREATE TABLE ${sql(`${schema}.${serversTable}`)} (
              name text COLLATE "C" PRIMARY KEY,
              url text NOT NULL,
              id text COLLATE "C" NOT NULL,
              first_seen_at double precision NOT NULL,
              last_seen_at double precision NOT NULL
            )`,
        ),
      ),
    ],
    [
      5,
      "consumers",
      // Consumers (issue 28): each consumer known in a scope, from its first claim there. GC
      // keeps a terminal row until every consumer known in its scope has acknowledged it.
      // Consumers that claimed before this migration are known from it on (first and last
      // sighting: the database's now).
      Effect.succeed(
        Effect.flatMap(Sql.SqlClient, (sql) => {
          const c = sql(`${schema}.${consumersTable}`)
          return Effect.all(
            [
              sql`CREATE TABLE ${c} (
                scope text COLLATE "C" NOT NULL,
                consumer text COLLATE "C" NOT NULL,
                first_seen_at double precision NOT NULL,
                last_seen_at double precision NOT NULL,
                PRIMARY KEY (scope, consumer)
              )`,
              sql`INSERT INTO ${c} (scope, consumer, first_seen_at, last_seen_at)
                SELECT DISTINCT scope, consumer, floor(extract(epoch FROM now()) * 1000), floor(extract(epoch FROM now()) * 1000)
                FROM ${sql(`${schema}.${deliveriesTable}`)}`,
            ],
            { discard: true },
          )
        }),
      ),
    ],
    [
      6,
      "due_chores",
      // A settled call with a stray task still to cancel stays due (issue 28): claimDue takes
      // every row with a due time, open or not. Settled rows written before are healed: those
      // with an uncancelled stray become due at once, every other one has no due time.
      Effect.succeed(
        Effect.flatMap(Sql.SqlClient, (sql) => {
          const t = sql(`${schema}.${table}`)
          return Effect.all(
            [
              sql`UPDATE ${t} SET next_poll_at = CASE
                  WHEN json_typeof(body->'strayTasks') = 'array' AND EXISTS (
                    SELECT 1 FROM json_array_elements(body->'strayTasks') AS stray
                    WHERE stray->>'cancelSent' = 'false')
                  THEN coalesce(settled_at, created_at) ELSE NULL END
                WHERE status NOT IN ${sql.literal(openStatuses)}`,
              sql`CREATE INDEX handles_due_any ON ${t} (next_poll_at) WHERE next_poll_at IS NOT NULL`,
              sql`DROP INDEX ${sql(`${schema}.handles_due`)}`,
            ],
            { discard: true },
          )
        }),
      ),
    ],
    [
      7,
      "operator_reads",
      // `mcp-handles ui` (issue 33): a list across every scope is in (created_at, key, scope)
      // order, which no index served; the counts by status of one server read an index too.
      // And the instance ids taken (`lockInstance`), each with its advisory lock key: a row
      // names a live holder while the database shows that lock held.
      Effect.succeed(
        Effect.flatMap(Sql.SqlClient, (sql) => {
          const t = sql(`${schema}.${table}`)
          return Effect.all(
            [
              sql`CREATE INDEX handles_all ON ${t} (created_at, key, scope)`,
              sql`CREATE INDEX handles_server_status ON ${t} (server_id, status, scope)`,
              sql`CREATE TABLE ${sql(`${schema}.${instancesTable}`)} (
                instance_id text COLLATE "C" PRIMARY KEY,
                lock_key bigint NOT NULL,
                host text NOT NULL,
                pid integer NOT NULL
              )`,
            ],
            { discard: true },
          )
        }),
      ),
    ],
    [
      8,
      "spread_columns",
      // What the boot spread and the lease renewal read of the body, as columns (issue 29
      // item 5, as SQLite's migration 11): a `json` body is text, parsed again by every `->`
      // of every row. `poll_interval_ms` is the interval the server asked for (NULL when it
      // named none), `cancel_unsent` whether a cancel is recorded but not yet acknowledged.
      // Written with the body by every write (calls.ts); filled here for the rows before.
      Effect.succeed(
        Effect.flatMap(Sql.SqlClient, (sql) => {
          const t = sql(`${schema}.${table}`)
          return Effect.all(
            [
              sql`ALTER TABLE ${t} ADD COLUMN poll_interval_ms float8,
                ADD COLUMN cancel_unsent boolean NOT NULL DEFAULT false`,
              sql`UPDATE ${t} SET
                  poll_interval_ms = CASE WHEN json_typeof(body->'snapshot'->'pollIntervalMs') = 'number'
                    THEN (body->'snapshot'->>'pollIntervalMs')::float8 END,
                  cancel_unsent = coalesce(json_typeof(body->'cancel') = 'object'
                    AND (body->'cancel'->>'sent') IS DISTINCT FROM 'true', false)`,
            ],
            { discard: true },
          )
        }),
      ),
    ],
    [
      9,
      "intents",
      // The rows `pendingIntents` asks for each reconciler tick (a cancel not yet sent, or a task
      // waiting for input, by lease owner): an index of those few rows, not of every row an
      // instance holds.
      Effect.succeed(
        Effect.flatMap(Sql.SqlClient, (sql) => {
          const t = sql(`${schema}.${table}`)
          return sql`CREATE INDEX handles_intents ON ${t} (lease_owner)
            WHERE cancel_unsent OR status = 'input_required'`
        }),
      ),
    ],
  ])

export const latestVersion = 9
