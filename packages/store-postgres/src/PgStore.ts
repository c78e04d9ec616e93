/**
 * A HandleStore on PostgreSQL, for a fleet of client instances sharing one database. Leases are
 * taken with `FOR UPDATE SKIP LOCKED`, so two instances never claim the same row at once; every
 * claim and write bumps the row's version, so an instance that lost its lease cannot overwrite
 * the new owner's state.
 *
 * @since 0.1.0
 */

import * as Migrator from "@effect/sql/Migrator"
import * as Sql from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClientModule from "@effect/sql-pg/PgClient"
import { PgClient } from "@effect/sql-pg/PgClient"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HandleStoreDriver from "@mcp-handles/core/HandleStoreDriver"
import * as InstanceHold from "@mcp-handles/core/InstanceHold"
import * as SqlStore from "@mcp-handles/core/SqlStore"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { calls } from "./internal/calls.js"
import { consumers } from "./internal/consumers.js"
import * as DatabaseClock from "./internal/database-clock.js"
import * as InstanceLock from "./internal/instance-lock.js"
import * as Migrations from "./internal/migrations.js"
import * as OpenErrors from "./internal/open-errors.js"
import { outcomeDelivery } from "./internal/outcomes.js"
import { servers } from "./internal/servers.js"
import type { StatementRunner } from "./internal/statement-runner.js"
import { isTransient } from "./internal/transient.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface RetryOptions {
  /**
   * How long an operation keeps retrying, counted from its first failure: a failure after this
   * is final (the backoff already under way runs out first). A time rather than a count, because
   * how many attempts a fault eats depends on how fast it strikes and how loaded the machine is,
   * whereas an outage to ride out is a span of time. Default 30 s; zero does not retry.
   */
  readonly budget?: Duration.DurationInput | undefined
  /** First backoff delay, doubled (with jitter) on each retry. Default 25 ms. */
  readonly baseDelay?: Duration.DurationInput | undefined
  /** Longest single backoff delay. Default 1 s. */
  readonly maxDelay?: Duration.DurationInput | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The schema holding the store's tables, created if absent. A lowercase SQL identifier
   * (`[a-z_][a-z0-9_]*`, at most 63 characters, not `pg_*`). Default `mcp_handles`.
   */
  readonly schema?: string | undefined
  /**
   * Run pending migrations when the store is built (default). With `false` the schema must
   * already be at this release's version, for deployments whose runtime role may not run DDL.
   */
  readonly migrate?: boolean | undefined
  /**
   * Backoff for transient connection failures (a terminated backend, a restarting server). Every
   * operation is safe to retry: writes carry a token that tells a retry whether its previous
   * attempt committed before the connection died.
   */
  readonly retry?: RetryOptions | undefined
  /**
   * Whose clock judges leases and due times. `database` (default): the database server's, so
   * instances on hosts whose clocks disagree share one time (the offset to the host clock is
   * measured when the store is built and again every minute). `host`: this host's `Clock`, for
   * tests that run in virtual time.
   */
  readonly clock?: "database" | "host" | undefined
  /**
   * How often the database session holding the instance lock is checked (alive, lock still
   * held). A session that ended (a failover, an idle-session killer) stops every write until
   * the lock is held again. Default 5 seconds.
   */
  readonly instanceLockCheck?: Duration.DurationInput | undefined
}

/**
 * The options of a store with a connection pool of its own (`layerUrl`).
 *
 * @since 0.2.0
 * @category models
 */
export interface UrlOptions extends Options {
  /** Most connections in the pool. Default 10. */
  readonly maxConnections?: number | undefined
  /** How long opening a connection may take. Default 10 seconds. */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** The `application_name` the database shows for the pool's sessions. Default `mcp-handles`. */
  readonly applicationName?: string | undefined
}

/**
 * What the store uses for an option that is not given.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults: {
  readonly schema: string
  readonly migrate: boolean
  readonly clock: "database" | "host"
  readonly retry: {
    readonly budget: Duration.DurationInput
    readonly baseDelay: Duration.DurationInput
    readonly maxDelay: Duration.DurationInput
  }
  readonly maxConnections: number
  readonly connectTimeout: Duration.DurationInput
  readonly applicationName: string
  readonly instanceLockCheck: Duration.DurationInput
} = {
  schema: "mcp_handles",
  migrate: true,
  clock: "database",
  retry: { budget: "30 seconds", baseDelay: "25 millis", maxDelay: "1 second" },
  maxConnections: 10,
  connectTimeout: "10 seconds",
  applicationName: "mcp-handles",
  instanceLockCheck: "5 seconds",
}

/**
 * The schema version this release writes and reads.
 *
 * @since 0.1.0
 * @category constants
 */
export const schemaVersion: number = Migrations.latestVersion

/**
 * The store could not be opened (the error both SQL stores share): options that cannot work
 * (`invalid-options`), a schema migrated by a newer release (`newer-schema`, never touched:
 * downgrading would lose what the newer release relies on) or, with `migrate: false`, not yet
 * migrated (`older-schema`), or a database that failed while it was being set up
 * (`cannot-open`). Its `location` is the schema.
 *
 * @since 0.2.0
 * @category errors
 */
export const OpenError: typeof SqlStore.OpenError = SqlStore.OpenError

/**
 * @since 0.2.0
 * @category errors
 */
export type OpenError = SqlStore.OpenError

const identifier = /^[a-z_][a-z0-9_]{0,62}$/

const validate = (options: Options, place: string): Effect.Effect<string, OpenError> => {
  const schema = options.schema ?? defaults.schema
  const invalid = (message: string) => Effect.fail(OpenErrors.openError(place, "invalid-options", message))
  if (!identifier.test(schema) || schema.startsWith("pg_")) {
    return invalid(
      `schema must match ${identifier.source} and not start with pg_, got ${JSON.stringify(schema)}`,
    )
  }
  const retry = options.retry ?? {}
  // Callers from JavaScript may still pass the attempt count this option used to take; ignoring
  // it would silently turn "retry twice" into "retry for 30 s".
  if ("times" in retry) return invalid("retry.times is no longer supported: give retry.budget, a duration")
  for (const [name, input, positive] of [
    ["budget", retry.budget, false],
    ["baseDelay", retry.baseDelay, true],
    ["maxDelay", retry.maxDelay, true],
  ] as const) {
    const problem = input === undefined ? undefined : durationProblem(input, positive)
    if (problem !== undefined)
      return invalid(`retry.${name} must be ${problem}, got ${JSON.stringify(String(input))}`)
  }
  return Effect.succeed(schema)
}

/**
 * Why `input` cannot be used as a retry duration, if it cannot. `Duration.decode` reads a negative
 * amount as zero and throws on garbage, so both are caught here, before the store is built.
 */
const durationProblem = (input: unknown, positive: boolean): string | undefined => {
  const negative =
    (typeof input === "number" && !(input >= 0)) ||
    (typeof input === "bigint" && input < 0n) ||
    (typeof input === "string" && input.trim().startsWith("-")) ||
    (Array.isArray(input) && input.some((part) => typeof part === "number" && !(part >= 0)))
  const decoded = Duration.decodeUnknown(input)
  if (negative || Option.isNone(decoded)) return "a non-negative duration"
  if (positive && !(Duration.isFinite(decoded.value) && Duration.toMillis(decoded.value) > 0)) {
    return "a positive, finite duration"
  }
  return undefined
}

const retrySchedule = (options: RetryOptions = {}) => {
  const maxDelay = Duration.decode(options.maxDelay ?? defaults.retry.maxDelay)
  return Schedule.exponential(options.baseDelay ?? defaults.retry.baseDelay).pipe(
    Schedule.jittered,
    Schedule.modifyDelay((delay) => Duration.min(delay, maxDelay)),
    // Elapsed time since the first failure, on the Clock: a TestClock governs it in tests.
    Schedule.upTo(options.budget ?? defaults.retry.budget),
  )
}

const isTransientSqlError = (error: unknown): boolean => error instanceof SqlError && isTransient(error)

/** A driver error's own words ("password authentication failed") follow the wrapper's. */
const describe = (error: SqlError): string => {
  const cause = error.cause
  const inner =
    typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string"
      ? cause.message
      : ""
  return inner === "" ? error.message : `${error.message}: ${inner}`
}

/** How a failure that outlived the retries reads in the StoreError that reports it. */
const describeFailure = (error: unknown): string =>
  error instanceof SqlError
    ? isTransient(error)
      ? `database unreachable, gave up after retrying: ${describe(error)}`
      : `database error: ${describe(error)}`
    : error instanceof Error
      ? error.message
      : String(error)

/** Which version the schema is at, 0 when it has never been migrated. */
const currentVersion = (sql: Sql.SqlClient, schema: string) =>
  Effect.gen(function* () {
    const qualified = `${schema}.${Migrations.migrationsTable}`
    const [exists] = yield* sql<{ readonly t: string | null }>`SELECT to_regclass(${qualified})::text AS t`
      .withoutTransform
    if (exists?.t == null) return 0
    const [row] = yield* sql<{
      readonly v: number | null
    }>`SELECT max(migration_id) AS v FROM ${sql(qualified)}`.withoutTransform
    return row?.v ?? 0
  })

/**
 * Brings the schema up to this release's version and returns the version it is at then: this
 * release's, or a newer release's, which is left alone. Concurrent instances starting together
 * are serialised on an advisory lock, so exactly one runs each migration.
 */
const migrate = (sql: Sql.SqlClient, schema: string) =>
  Effect.gen(function* () {
    // The common case (already migrated) runs no DDL and takes no lock.
    const found = yield* currentVersion(sql, schema)
    if (found >= Migrations.latestVersion) return found
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`@mcp-handles/store-postgres:${schema}`}))`
        yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
        // Created here, under the lock, in the shape the migrator expects: its own check-then-create
        // would race, and a failed check would abort this transaction.
        yield* sql`CREATE TABLE IF NOT EXISTS ${sql(`${schema}.${Migrations.migrationsTable}`)} (
          migration_id integer PRIMARY KEY,
          created_at timestamp with time zone NOT NULL DEFAULT now(),
          name text NOT NULL
        )`
        const locked = yield* currentVersion(sql, schema)
        if (locked > Migrations.latestVersion) return locked
        yield* Migrator.make({})({
          loader: Migrations.loader(schema),
          table: `${schema}.${Migrations.migrationsTable}`,
        })
        return Migrations.latestVersion
      }),
    )
  }).pipe(
    // The migrator turns a failed migration into a defect; here it is the store failing to start.
    Effect.catchAllDefect((defect) =>
      Effect.fail(
        new HandleStore.StoreError({ operation: "migrate", message: "a migration failed", cause: defect }),
      ),
    ),
  )

/** The schema is at `found`, which is not this release's version. */
const incompatible = (place: string, schema: string, found: number): OpenError => {
  const supported = Migrations.latestVersion
  return OpenErrors.openError(
    place,
    found > supported ? "newer-schema" : "older-schema",
    found > supported
      ? `schema "${schema}" is at version ${found}, migrated by a newer release of @mcp-handles/store-postgres; this release supports up to version ${supported}. Upgrade the package.`
      : `schema "${schema}" is at version ${found}, this release needs version ${supported}; run the migrations (migrate: true).`,
    { found, supported },
  )
}

/**
 * Builds the store on the `PgClient` in context, migrating its schema first (unless told not to).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<HandleStore.HandleStore, OpenError, PgClient> =>
  Effect.gen(function* () {
    const sql = yield* PgClient
    const place = OpenErrors.placeOf(sql.config)
    const schema = yield* validate(options, place)
    const schedule = retrySchedule(options.retry)
    const retrying = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.retry(effect, { schedule, while: isTransientSqlError })

    /**
     * Retries transient failures, then reports what is left as a StoreError. The store's own
     * typed failures pass through untouched.
     */
    const run = <A, E>(operation: string, effect: Effect.Effect<A, E, Sql.SqlClient>) =>
      effect.pipe(
        retrying,
        HandleStore.StoreError.refail(operation, describeFailure),
        Effect.provideService(Sql.SqlClient, sql),
      )
    // The driver's own words when it gave any (a refused connection, a missing database), else
    // the store's (a failed migration).
    const cannotOpen = (error: HandleStore.StoreError) =>
      OpenErrors.openError(
        place,
        "cannot-open",
        error.cause instanceof SqlError
          ? `${isTransient(error.cause) ? "unreachable, gave up after retrying: " : ""}${OpenErrors.describeCause(error.cause, OpenErrors.secretOf(sql.config))}`
          : error.message,
        { cause: error },
      )

    const found = yield* run(
      "migrate",
      options.migrate === false ? currentVersion(sql, schema) : migrate(sql, schema),
    ).pipe(Effect.mapError(cannotOpen))
    if (found !== Migrations.latestVersion) return yield* incompatible(place, schema, found)
    const now =
      options.clock === "host" ? undefined : yield* Effect.mapError(DatabaseClock.make(run, sql), cannotOpen)
    const guard = InstanceHold.makeGuard()
    const checkEvery = Duration.decode(options.instanceLockCheck ?? defaults.instanceLockCheck)
    return HandleStoreDriver.makeStore({
      ...makeDriver(sql, schema, run),
      now,
      lockInstance: (instanceId) =>
        InstanceLock.lockInstance(sql, schema, instanceId, retrying, guard, checkEvery),
      listInstances: run("listInstances", InstanceLock.list(sql, schema)),
      writable: guard.writable,
    })
  })

/** The store's operations, each one statement (two where a retry must learn what happened). */
const makeDriver = (
  sql: PgClient,
  schema: string,
  run: StatementRunner,
): Omit<HandleStoreDriver.HandleStoreDriver, "now" | "lockInstance" | "writable"> => ({
  ...calls(sql, schema, run),
  ...outcomeDelivery(sql, schema, run),
  // Consumers and GC (issue 28).
  ...consumers(sql, schema, run),
  // Servers (issues 15 item 7 and 16).
  ...servers(sql, schema, run),
})

/**
 * The store as a layer over the `PgClient` in context, with options read from `Config`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: Config.Config.Wrap<Options>,
): Layer.Layer<HandleStore.HandleStore, ConfigError.ConfigError | OpenError, PgClient> =>
  Layer.effect(HandleStore.HandleStore, Effect.flatMap(Config.unwrap(config), make))

/**
 * The store as a layer over the `PgClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<HandleStore.HandleStore, OpenError, PgClient> =>
  Layer.effect(HandleStore.HandleStore, make(options))

/**
 * The store with a connection pool of its own, for callers that have only a URL (a CLI, a
 * script, the Promise facade). The URL is kept redacted, so it never reaches a log.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerUrl = (
  url: string,
  options: UrlOptions = {},
): Layer.Layer<HandleStore.HandleStore, OpenError | ConfigError.ConfigError> => {
  const { maxConnections, connectTimeout, applicationName, ...storeOptions } = options
  const config = {
    url: Redacted.make(url),
    maxConnections: maxConnections ?? defaults.maxConnections,
    connectTimeout: Duration.decode(connectTimeout ?? defaults.connectTimeout),
    applicationName: applicationName ?? defaults.applicationName,
  }
  return layer(storeOptions).pipe(
    Layer.provide(
      PgClientModule.layer(config).pipe(
        // The pool's first connection meets the same passing conditions as any query (a server
        // at its connection limit, starting up, failing over): waited out within the same budget.
        Layer.retry(
          retrySchedule(storeOptions.retry).pipe(
            Schedule.whileInput((error: SqlError | ConfigError.ConfigError) => isTransientSqlError(error)),
          ),
        ),
        // A database that cannot be reached is a store that cannot be opened, said so in one line.
        Layer.mapError((error) =>
          error instanceof SqlError
            ? OpenErrors.openError(
                OpenErrors.placeOf(config),
                "cannot-open",
                OpenErrors.describeCause(error, OpenErrors.secretOf(config)),
                { cause: error },
              )
            : error,
        ),
      ),
    ),
  )
}

/**
 * A driver error as one line for people (`connection refused (ECONNREFUSED)`, `database "x"
 * does not exist (3D000)`), `secret` (a password) masked wherever it appears: the words every
 * `OpenError` of this store gives as its problem.
 *
 * @since 0.7.0
 * @category errors
 */
export const describeDriverError: (error: unknown, secret?: string) => string = OpenErrors.describeCause
