/**
 * The schema, as @effect/sql migrations kept in code (no files to ship or find at run time).
 * Migration ids only ever grow; `latestVersion` is the newest this build understands, and a
 * database that records a higher id is refused rather than touched.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/** The migrations bookkeeping table; named for us so it cannot collide in a shared database. */
export const migrationsTable = "mcp_handles_migrations"

/** "MCPH": marks the file as ours, so a store never adopts another application's database. */
export const applicationId = 0x4d435048

const v1 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`PRAGMA application_id = ${applicationId}`)
  // Columns for every field a query filters or sorts on; the rest of the record is one JSON
  // document (`body`), decoded through the HandleRecord schema on the way out.
  yield* sql`CREATE TABLE handles (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    server_id TEXT NOT NULL,
    status TEXT NOT NULL,
    next_poll_at INTEGER,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    version INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    settled_at INTEGER,
    body TEXT NOT NULL,
    UNIQUE (scope, key)
  )`
  // claimDue: open rows by due time. Partial, so settled history never slows the reconciler;
  // the WHERE must match claimDue's query text for SQLite to use it.
  yield* sql`CREATE INDEX handles_due ON handles (next_poll_at)
    WHERE status IN ('pending', 'working', 'input_required')`
  // list: a scope's rows in (created_at, key) order, with and without a status filter.
  yield* sql`CREATE INDEX handles_list ON handles (scope, created_at, key)`
  yield* sql`CREATE INDEX handles_status ON handles (scope, status, created_at, key)`
  // deleteSettledBefore: only settled rows are indexed.
  yield* sql`CREATE INDEX handles_settled ON handles (settled_at) WHERE settled_at IS NOT NULL`
})

/**
 * claimDue orders by (next_poll_at, created_at, scope, key). With only next_poll_at indexed,
 * rows that share a due time (a group commit stamps many with one `now`) were sorted in a
 * temporary B-tree on every claim: 20 ms per claim with 100,000 tied rows, 0.2 ms with this.
 */
const v2 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX handles_due_order ON handles (next_poll_at, created_at, scope, key)
    WHERE status IN ('pending', 'working', 'input_required')`
  yield* sql`DROP INDEX handles_due`
})

/**
 * A server's task id is held by one row: a server that hands one id out for two calls gets the
 * second refused (`TaskIdTaken`) instead of two rows silently sharing one task.
 */
const v3 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNIQUE INDEX handles_task ON handles (server_id, json_extract(body, '$.taskId'))
    WHERE json_type(body, '$.taskId') = 'text'`
})

/**
 * Outcome delivery (issue 15): per consumer and row, the rest last handed out, to which member
 * and until when, and whether it was acknowledged. Rows deleted by GC take their deliveries with
 * them (the trigger), so a key used again after GC is a new outcome.
 */
const v4 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE outcome_deliveries (
    consumer TEXT NOT NULL,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    status TEXT NOT NULL,
    launches INTEGER NOT NULL,
    member TEXT,
    lease_until INTEGER,
    acked INTEGER NOT NULL,
    deliveries INTEGER NOT NULL,
    PRIMARY KEY (consumer, scope, key)
  ) WITHOUT ROWID`
  yield* sql`CREATE INDEX outcome_deliveries_row ON outcome_deliveries (scope, key)`
  yield* sql`CREATE TRIGGER handles_outcome_deliveries_gc AFTER DELETE ON handles BEGIN
    DELETE FROM outcome_deliveries WHERE scope = old.scope AND key = old.key;
  END`
})

/**
 * Servers (issues 15 item 7 and 16): each server's name, URL (never credentials), the identity
 * rows written against that URL carry, and when it was first and last seen. Shared by every
 * process on the store, so the CLI reaches the rows an app wrote by their server's name.
 */
const v5 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE servers (
    name TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    id TEXT NOT NULL,
    first_seen_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
  ) WITHOUT ROWID`
})

/**
 * Consumers (issue 28): each consumer known in a scope, from its first claim there. GC keeps a
 * terminal row until every consumer known in its scope has acknowledged it. Consumers that
 * claimed before this migration are known from it on (their first and last sighting: now).
 */
const v6 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // The store's clock: the host's, read through Effect (a TestClock in tests).
  const now = yield* Clock.currentTimeMillis
  yield* sql`CREATE TABLE consumers (
    scope TEXT NOT NULL,
    consumer TEXT NOT NULL,
    first_seen_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    PRIMARY KEY (scope, consumer)
  ) WITHOUT ROWID`
  yield* sql`INSERT INTO consumers (scope, consumer, first_seen_at, last_seen_at)
    SELECT DISTINCT scope, consumer, ${now}, ${now} FROM outcome_deliveries`
})

/**
 * A settled call with a stray task still to cancel stays due (issue 28): claimDue takes every row
 * with a due time, open or not, so its index covers every scheduled row (still only open rows,
 * and the few settled ones with a stray). Settled rows written before are healed: those with an
 * uncancelled stray become due at once, every other settled row has no due time.
 */
const v7 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE handles SET next_poll_at = CASE
      WHEN EXISTS (SELECT 1 FROM json_each(body, '$.strayTasks') WHERE json_extract(value, '$.cancelSent') = 0)
      THEN coalesce(settled_at, created_at) ELSE NULL END
    WHERE status NOT IN ('pending', 'working', 'input_required')`
  yield* sql`CREATE INDEX handles_due_any ON handles (next_poll_at, created_at, scope, key)
    WHERE next_poll_at IS NOT NULL`
  yield* sql`DROP INDEX handles_due_order`
})

/**
 * One live process per instance id (see instance-lock.ts): the holder of each id, taken and
 * checked inside one write transaction, so two processes can never both take it.
 */
const v8 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // The holder: a random token of its process, its pid and host, and when it last said it lives.
  yield* sql`CREATE TABLE instances (
    instance_id TEXT PRIMARY KEY,
    token TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, heartbeat_at INTEGER NOT NULL
  ) WITHOUT ROWID`
})
/**
 * `mcp-handles ui` (issue 33): a list across every scope is in (created_at, key, scope) order,
 * which no index had (every page sorted the whole table: 1.3 s at 100,000 rows); and the counts
 * by status of every scope, or of one server, read this index alone instead of every row.
 */
const v9 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX handles_all ON handles (created_at, key, scope)`
  yield* sql`CREATE INDEX handles_server_status ON handles (server_id, status, scope)`
})
/**
 * The task id as a column (issue 29 item 5): the v3 index on `json_extract(body, '$.taskId')`
 * parsed the JSON body on every write that touched the row (24.6 µs against 19.1 µs of SQLite's
 * CPU per begin and update), and group commit is CPU-bound. Same rule as v3: a text task id is
 * held by one row of a server; rows without one (NULL) are not indexed. Backfilled from the body
 * the old index read, so a task id held before is still held.
 */
const v10 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE handles ADD COLUMN task_id TEXT`
  yield* sql`UPDATE handles SET task_id = json_extract(body, '$.taskId') WHERE json_type(body, '$.taskId') = 'text'`
  yield* sql`DROP INDEX handles_task`
  yield* sql`CREATE UNIQUE INDEX handles_task_id ON handles (server_id, task_id) WHERE task_id IS NOT NULL`
})
/**
 * What the boot spread (`spreadDue`) and the lease renewal read of the JSON body, as columns
 * (issue 29 item 5): SQLite parses the whole body (about 600 B) for each JSON function handed it,
 * and those parses were most of B3's instructions. `poll_interval_ms` is the interval the server
 * asked for (`snapshot.pollIntervalMs`; NULL when it named none), `cancel_unsent` is 1 while a
 * cancel is recorded but not yet acknowledged (`cancel.sent` not true). Every write of the body
 * writes them too (writes.ts); rows written before are filled from their body here, by the same
 * rules the spread applied to the body.
 */
const v11 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // No declared type: the number is kept as the body holds it (integer or real), as the spread read it.
  yield* sql`ALTER TABLE handles ADD COLUMN poll_interval_ms`
  yield* sql`ALTER TABLE handles ADD COLUMN cancel_unsent INTEGER NOT NULL DEFAULT 0`
  yield* sql`UPDATE handles SET
      poll_interval_ms = CASE WHEN json_type(body, '$.snapshot.pollIntervalMs') IN ('integer', 'real')
        THEN json_extract(body, '$.snapshot.pollIntervalMs') END,
      cancel_unsent = CASE WHEN json_type(body, '$.cancel') = 'object'
        AND json_extract(body, '$.cancel.sent') IS NOT 1 THEN 1 ELSE 0 END`
})
/**
 * The rows `pendingIntents` asks for each reconciler tick (a cancel not yet sent, or a task
 * waiting for input, by lease owner): an index of those few rows, so the question costs nothing
 * like a scan of every row an instance holds.
 */
const v12 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX handles_intents ON handles (lease_owner)
    WHERE cancel_unsent = 1 OR status = 'input_required'`
})
/**
 * The lock holder's pid namespace (see instance-lock.ts): a pid says whether a process lives only
 * to a process of the same pid namespace, and containers sharing a host name need not share one.
 * NULL on rows written before it was recorded: those are judged by their heartbeat alone.
 */
const v13 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Added only where it is missing: a file rolled back to an earlier version by hand may keep it.
  const columns = yield* sql<{ readonly name: string }>`SELECT name FROM pragma_table_info('instances')`
  if (!columns.some((column) => column.name === "pid_space"))
    yield* sql`ALTER TABLE instances ADD COLUMN pid_space TEXT`
})
const migrations = {
  "1_handles": v1,
  "2_due_order": v2,
  "3_task_id_unique": v3,
  "4_outcome_deliveries": v4,
  "5_servers": v5,
  "6_consumers": v6,
  "7_due_chores": v7,
  "8_instances": v8,
  "9_list_all": v9,
  "10_task_id_column": v10,
  "11_spread_columns": v11,
  "12_intents": v12,
  "13_instance_pid_space": v13,
}

/** The newest schema version this build knows. */
export const latestVersion = 13

export const loader = Migrator.fromRecord(migrations)

/** Runs the pending migrations (each in the migrator's transaction). */
export const run = Migrator.make({})({ loader, table: migrationsTable })
