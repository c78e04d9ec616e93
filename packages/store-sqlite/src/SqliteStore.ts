/**
 * The HandleStore on SQLite (`@effect/sql-sqlite-node`): the embedded default. One file, no
 * server, durable across `kill -9` and power loss with the default `synchronous: "FULL"`.
 *
 * Writes from concurrent fibers are group-committed: each `insertOrGet`/`update`/`claimDue`/
 * `release` returns only after the transaction holding it is on disk, and many of them share one
 * fsync.
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import * as Sqlite from "@effect/sql-sqlite-node/SqliteClient"
import type { HandleRecord } from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HandleStoreDriver from "@mcp-handles/core/HandleStoreDriver"
import * as InstanceHold from "@mcp-handles/core/InstanceHold"
import * as SqlStore from "@mcp-handles/core/SqlStore"
import Database from "better-sqlite3"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Consumers from "./internal/consumers.js"
import * as File from "./internal/file.js"
import * as InstanceLock from "./internal/instance-lock.js"
import * as Migrations from "./internal/migrations.js"
import * as Rows from "./internal/rows.js"
import * as Servers from "./internal/servers.js"
import * as Writer from "./internal/writer.js"
import * as Writes from "./internal/writes.js"

/**
 * How hard each commit is pushed to disk.
 *
 * - `"FULL"` (default): the WAL is fsynced at every commit; a write that returned survives
 *   a process crash and a power loss or OS crash.
 * - `"NORMAL"`: the WAL is fsynced only at checkpoints. A write that returned survives a process
 *   crash (`kill -9`), but the last commits before a power loss or OS crash may be lost; the
 *   database stays consistent either way. Commits are several times cheaper.
 *
 * @since 0.1.0
 * @category models
 */
export type Synchronous = "FULL" | "NORMAL"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * Path of the database file, created with mode 0600 when missing; its directory must exist
   * (a typo is reported, not created). Default `defaultFilename`, whose directory is created.
   */
  readonly filename?: string | undefined
  /** Default `"FULL"`. */
  readonly synchronous?: Synchronous | undefined
  /** How long a write waits for another process's lock before failing. Default 5 seconds. */
  readonly busyTimeout?: Duration.DurationInput | undefined
  /** Most writes committed in one transaction. Default 1024. */
  readonly maxBatchSize?: number | undefined
  /**
   * How long a routine write (a poll that found its task still working) may wait for other
   * writes to share its commit; any other write commits at the next turn of the event loop and
   * takes the waiting ones along. With thousands of tasks open, polls come a few milliseconds
   * apart and each would otherwise pay an fsync of its own. Default 10 milliseconds; 0 commits
   * routine writes like any other.
   */
  readonly commitDelay?: Duration.DurationInput | undefined
}

/**
 * What the store uses for an option that is not given.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults: {
  readonly synchronous: Synchronous
  readonly busyTimeout: Duration.DurationInput
  readonly maxBatchSize: number
  readonly commitDelay: Duration.DurationInput
} = {
  synchronous: "FULL",
  busyTimeout: "5 seconds",
  maxBatchSize: 1024,
  commitDelay: "10 millis",
}

/**
 * Where the store lives when no `filename` is given: `./.mcp-handles/tasks.db`, relative to the
 * working directory. Its directory is created (mode 0700) when missing, so an app runs in a fresh
 * folder; the CLI uses the same default.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultFilename = "./.mcp-handles/tasks.db"

/**
 * The database could not be opened as a store (the error both SQL stores share): its `reason`
 * says which problem it is, its `location` is the file name. Whatever the reason, the file was
 * not modified.
 *
 * @since 0.1.0
 * @category errors
 */
export const OpenError: typeof SqlStore.OpenError = SqlStore.OpenError

/**
 * @since 0.1.0
 * @category errors
 */
export type OpenError = SqlStore.OpenError

/**
 * The schema version this build creates and understands.
 *
 * @since 0.1.0
 * @category constants
 */
export const schemaVersion: number = Migrations.latestVersion

const sqliteCode = (error: SqlError): string | undefined => {
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" ? code : undefined
}

/** The driver's own words ("database is locked") rather than its wrapper's ("Failed to execute statement"). */
const driverWords = (error: SqlError): string => {
  const inner = (error.cause as { message?: unknown } | undefined)?.message
  return typeof inner === "string" && inner !== "" ? inner : error.message
}

/**
 * Opens (creating or upgrading) the database and returns the store; the database closes with
 * the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<HandleStore.HandleStore, OpenError, Scope.Scope> =>
  Effect.gen(function* () {
    const filename = options.filename ?? defaultFilename
    const maxBatchSize = Math.max(1, Math.floor(options.maxBatchSize ?? defaults.maxBatchSize))
    const busyMs = Math.max(0, Math.round(Duration.toMillis(options.busyTimeout ?? defaults.busyTimeout)))
    const commitDelayMs = Math.max(
      0,
      Math.round(Duration.toMillis(options.commitDelay ?? defaults.commitDelay)),
    )
    const synchronous: Synchronous = options.synchronous === "NORMAL" ? "NORMAL" : defaults.synchronous
    const openError = (reason: SqlStore.OpenErrorReason, problem: string, cause?: unknown) =>
      SqlStore.openError({ store: "SQLite", location: filename, reason, problem, cause })
    const fromSql = (what: string) => (error: SqlError) => {
      const code = sqliteCode(error)
      return code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT"
        ? openError(
            "not-a-database",
            `${filename} is not a usable SQLite database (${code}); it was left untouched. Point the store at a new path, or restore the file from a backup`,
            error,
          )
        : openError(
            "cannot-open",
            `could not ${what} ${filename}: ${driverWords(error)}${code ? ` (${code})` : ""}${code === "SQLITE_BUSY" ? "; another process holds a lock on it" : ""}`,
            error,
          )
    }

    const directory = options.filename === undefined ? File.createDirectory(filename) : null
    if (directory !== null) return yield* openError(directory.reason, directory.message)
    const prepared = File.prepare(filename)
    if (prepared.problem !== null) return yield* openError(prepared.problem.reason, prepared.problem.message)

    // WAL stays off until the file has been checked: switching the journal mode writes to the
    // file, and a file that is not ours must not be written.
    const sql = yield* Sqlite.make({ filename, disableWAL: true }).pipe(
      Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
      Effect.catchAllDefect((cause) =>
        Effect.fail(openError("cannot-open", `SQLite could not open ${filename}: ${String(cause)}`, cause)),
      ),
    )

    yield* sql.unsafe(`PRAGMA busy_timeout = ${busyMs}`).pipe(Effect.mapError(fromSql("configure")))

    const storedVersion = Effect.gen(function* () {
      const tables = yield* sql<{ readonly name: string }>`
        SELECT name FROM sqlite_master WHERE type = 'table' AND name = ${Migrations.migrationsTable}`
      if (tables.length === 0) return 0
      const [row] = yield* sql<{ readonly version: number | null }>`
        SELECT max(migration_id) AS version FROM ${sql(Migrations.migrationsTable)}`
      return row?.version ?? 0
    })

    yield* Effect.gen(function* () {
      const [app] = yield* sql<{ readonly application_id: number }>`PRAGMA application_id`
      const id = app?.application_id ?? 0
      if (id !== 0 && id !== Migrations.applicationId) {
        return yield* openError(
          "foreign-database",
          `${filename} is a SQLite database of another application (application_id ${id}); it was left untouched. Point the store at its own file`,
        )
      }
      const version = yield* storedVersion
      if (version > Migrations.latestVersion) {
        return yield* SqlStore.openError({
          store: "SQLite",
          location: filename,
          reason: "newer-schema",
          problem: `${filename} was written by a newer version of @mcp-handles/store-sqlite (schema version ${version}; this version understands up to ${Migrations.latestVersion}). It was left untouched: upgrade @mcp-handles/store-sqlite to open it`,
          found: version,
          supported: Migrations.latestVersion,
        })
      }
    }).pipe(Effect.catchTag("SqlError", (error) => Effect.fail(fromSql("read")(error))))

    const setup = Effect.gen(function* () {
      const [mode] = yield* sql<{ readonly journal_mode: string }>`PRAGMA journal_mode = WAL`
      if (mode?.journal_mode.toLowerCase() !== "wal") {
        return yield* openError(
          "cannot-open",
          `could not switch ${filename} to WAL mode (it stays in ${mode?.journal_mode ?? "an unknown"} mode); is it on a filesystem without shared memory support?`,
        )
      }
      yield* sql.unsafe(`PRAGMA synchronous = ${synchronous}`)
    })
    yield* setup.pipe(Effect.catchTag("SqlError", (error) => Effect.fail(fromSql("configure")(error))))

    // Two processes opening a new file at once: the loser's migrator sees the winner's lock and
    // skips; it then re-checks until the winner's schema is committed.
    const migrate = Effect.gen(function* () {
      for (let attempt = 0; ; attempt++) {
        yield* Migrations.run.pipe(Effect.provideService(SqlClient.SqlClient, sql))
        const version = yield* storedVersion
        if (version >= Migrations.latestVersion) return
        if (attempt >= 5) {
          return yield* openError(
            "cannot-open",
            `the schema of ${filename} is at version ${version} and could not be upgraded to ${Migrations.latestVersion}`,
          )
        }
      }
    })
    yield* migrate.pipe(
      Effect.catchTags({
        SqlError: (error) => Effect.fail(fromSql("create the schema of")(error)),
        MigrationError: (error) =>
          Effect.fail(
            openError("cannot-open", `could not create the schema of ${filename}: ${error.message}`, error),
          ),
      }),
    )

    // The writer's own connection: a batch runs synchronously on it, from BEGIN to COMMIT, in
    // one step of the event loop (see internal/writer.ts). Reads of one row by its key are made
    // on it too, between batches; the other reads stay on the @effect/sql client's connection.
    // Both only ever see committed transactions.
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const db = new Database(filename, { timeout: busyMs })
          try {
            db.pragma(`synchronous = ${synchronous}`)
            return db
          } catch (error) {
            db.close()
            throw error
          }
        },
        catch: (cause) =>
          openError("cannot-open", `could not open ${filename} for writing: ${String(cause)}`, cause),
      }),
      (db) => Effect.sync(() => db.close()),
    )

    const sideProblems = File.tightenSideFiles(filename)
    if (sideProblems.length > 0) {
      return yield* openError(
        "not-writable",
        `cannot restrict the permissions of the database's side files: ${sideProblems.join("; ")}`,
      )
    }

    const writes = Writes.make(db)
    const writer = yield* Writer.make({ transactor: writes.transactor, maxBatchSize, commitDelayMs })
    const guard = InstanceHold.makeGuard()
    return HandleStoreDriver.makeStore({
      ...makeDriver(filename, sql, writes, writer, Servers.make(db), Consumers.make(db)),
      lockInstance: (instanceId) => InstanceLock.lockInstance(filename, db, guard, instanceId),
      // Heartbeats are written on the host's real clock (instance-lock.ts), and judged on it.
      listInstances: Effect.sync(() => InstanceLock.list(db, Date.now())),
      writable: guard.writable,
    })
  })

/** Every write through the group-committing writer; reads of many rows on the @effect/sql client's connection. */
const makeDriver = (
  filename: string,
  sql: Sqlite.SqliteClient,
  writes: ReturnType<typeof Writes.make>,
  writer: Writer.Writer,
  servers: ReturnType<typeof Servers.make>,
  consumers: ReturnType<typeof Consumers.make>,
): HandleStoreDriver.HandleStoreDriver => {
  /** Submits the write `operation` makes of `record` and its row values. */
  const submitRecord = <A, E>(
    operation: "insertOrGet" | "update",
    record: HandleRecord,
    write: (record: HandleRecord, params: ReadonlyArray<unknown>) => Writer.Operation<A, E>,
    options?: HandleStore.UpdateOptions,
  ) =>
    Effect.suspend(() => {
      const params = Rows.toParams(operation, record)
      return Either.isLeft(params)
        ? Effect.fail(params.left)
        : writer.submit(operation, write(record, params.right), options)
    })
  /**
   * `ListFilter.keyContains`: instr, not LIKE (which reads % and _ in the text), over the key
   * with its ASCII capitals made small (SQLite's lower without ICU: `foldAscii`).
   */
  const keyContains = (text: string) => sql`instr(lower(key), ${HandleStoreDriver.foldAscii(text)}) > 0`

  return {
    // One host, one clock: the embedded store keeps the host's (the driver port's default).
    insertOrGet: (record) => submitRecord("insertOrGet", record, writes.insertOrGet),

    // On the writer's connection (see Writes.readOne): the read before every poll's write.
    get: (scope, key) =>
      Effect.flatMap(
        Effect.try({
          try: () => writes.readOne(scope, key),
          catch: (cause) =>
            new HandleStore.StoreError({
              operation: "get",
              message: `could not read ${filename}: ${String(cause)}`,
            }),
        }),
        (row) =>
          row === undefined ? Effect.succeedNone : Effect.map(Rows.decodeRow("get", row), Option.some),
      ),

    // What a driver asks before each poll of a row it kept (see `CallStore.peek`): no body read.
    peek: (scope, key) =>
      Effect.flatMap(
        Effect.try({
          try: () => writes.readStamp(scope, key),
          catch: (cause) =>
            new HandleStore.StoreError({
              operation: "peek",
              message: `could not read ${filename}: ${String(cause)}`,
            }),
        }),
        (row) => (row === undefined ? Effect.succeedNone : Effect.map(Rows.decodeStamp(row), Option.some)),
      ),

    update: (next, options) =>
      submitRecord("update", next, options?.routine === true ? writes.updateRoutine : writes.update, options),

    claimDue: (options) =>
      Effect.map(writer.submit("claimDue", writes.claimDue(options)), (claimed) =>
        claimed.map((record) =>
          HandleStoreDriver.bump(record, {
            leaseOwner: options.owner,
            leaseExpiresAt: options.now + options.leaseMs,
          }),
        ),
      ),

    spreadDue: (options) => writer.submit("spreadDue", writes.spreadDue(options)),

    release: (scope, key, owner) => writer.submit("release", writes.release(scope, key, owner)),

    renewLease: ({ scope, key, owner, until }) =>
      writer.submit("renewLease", writes.renewLease(scope, key, owner, until)),

    renewLeases: (options) => writer.submit("renewLeases", writes.renewLeases(options)),

    releaseOwner: (options) => writer.submit("releaseOwner", writes.releaseOwner(options)),

    pendingIntents: ({ owner, limit }) =>
      Effect.try({
        try: () => writes.readIntents(owner, limit),
        catch: (cause) =>
          new HandleStore.StoreError({
            operation: "pendingIntents",
            message: `could not read ${filename}: ${String(cause)}`,
          }),
      }),

    list: (query) => {
      const where: Array<Statement.Fragment> = []
      if (query.scope !== undefined) where.push(sql`scope = ${query.scope}`)
      if (query.statuses !== undefined) where.push(sql.in("status", query.statuses))
      if (query.serverId !== undefined) where.push(sql`server_id = ${query.serverId}`)
      if (query.scheduled === true) where.push(sql`next_poll_at IS NOT NULL`)
      if (query.keyContains !== undefined) where.push(keyContains(query.keyContains))
      if (query.after !== undefined) {
        const { createdAt, key } = query.after
        // Across scopes (no scope filter), the scope breaks ties of creation time and key.
        where.push(
          query.scope === undefined
            ? sql`(created_at, key, scope) > (${createdAt}, ${key}, ${query.after.scope ?? ""})`
            : sql`(created_at > ${createdAt} OR (created_at = ${createdAt} AND key > ${key}))`,
        )
      }
      const order = query.scope === undefined ? "created_at, key, scope" : "created_at, key"
      // Scheduled rows are the open ones (and a few settled with a stray): found by the due
      // index and sorted, rather than by walking a scope's whole history in list order, which
      // the planner, without statistics, prefers (0.4 s for a scope of 90,000 settled rows).
      const byDue = query.scheduled === true ? "INDEXED BY handles_due_any" : ""
      return Effect.flatMap(
        sql<Rows.Row>`SELECT ${sql.literal(Rows.columns)} FROM handles ${sql.literal(byDue)}
        WHERE ${where.length === 0 ? sql.literal("1") : sql.and(where)} ORDER BY ${sql.literal(order)} LIMIT ${query.limit}`,
        (rows) => Rows.decodeRows("list", rows),
      )
    },

    count: ({ scope, serverId, keyContains: text }) => {
      const where: Array<Statement.Fragment> = []
      if (scope !== undefined) where.push(sql`scope = ${scope}`)
      if (serverId !== undefined) where.push(sql`server_id = ${serverId}`)
      if (text !== undefined) where.push(keyContains(text))
      return Effect.flatMap(
        sql`SELECT status, count(*) AS n FROM handles
        WHERE ${where.length === 0 ? sql.literal("1") : sql.and(where)} GROUP BY status`,
        HandleStoreDriver.decodeCounts,
      )
    },

    // Servers (issues 15 item 7 and 16).
    recordServer: (seen) => writer.submit("recordServer", servers.record(seen)),
    listServers: Effect.flatMap(
      sql`SELECT ${sql.literal(Servers.columns)} FROM servers ORDER BY name`,
      Servers.decode,
    ),
    removeServer: (name) => writer.submit("removeServer", servers.remove(name)),
    rebind: (options) => writer.submit("rebind", servers.rebind(options)),
    // GC waits for the consumers (issue 28).
    deleteSettledBefore: (options) => writer.submit("deleteSettledBefore", consumers.collect(options)),

    // Outcome delivery (issue 15): each a write of the writer, so a claim reads and claims in
    // one transaction, and makes its consumer known in the same one.
    claimOutcomes: (options) =>
      writer.submit("claimOutcomes", () => {
        consumers.seen(options)
        return writes.claimOutcomes(options)()
      }),
    ackOutcome: (options) => writer.submit("ackOutcome", writes.ackOutcome(options)),
    releaseOutcomes: ({ consumer, member }) =>
      writer.submit("releaseOutcomes", writes.releaseOutcomes(consumer, member)),
    listConsumers: (scope) =>
      Effect.flatMap(
        sql`SELECT ${sql.literal(Consumers.columns)} FROM consumers
          WHERE ${scope === undefined ? sql.literal("1") : sql`scope = ${scope}`} ORDER BY scope, consumer`,
        Consumers.decode,
      ),
    forgetConsumer: (options) => writer.submit("forgetConsumer", consumers.forget(options)),
  }
}

/**
 * The store as a layer: opens the database when built, closes it when released.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<HandleStore.HandleStore, OpenError> =>
  Layer.scoped(HandleStore.HandleStore, make(options))
