/**
 * Where the client keeps its calls, chosen by plain options: SQLite (the default), PostgreSQL,
 * or memory. Each store is loaded when a client opens on it, so an app on PostgreSQL never
 * loads SQLite's native driver.
 *
 * @since 0.1.0
 */
import type { DurationInput } from "./DurationInput.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Store = SqliteStore | PostgresStore | MemoryStore

/**
 * An embedded SQLite file: durable across `kill -9`, one process driving it at a time per
 * `instanceId`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteStore {
  readonly kind: "sqlite"
  /**
   * The database file, created with mode 0600 when missing; its directory must exist (a typo is
   * reported, not created). Default `./.mcp-handles/tasks.db`, whose directory is created.
   */
  readonly filename?: string | undefined
  /**
   * `"FULL"` (default) fsyncs every commit; `"NORMAL"` only at checkpoints: a returned write
   * survives `kill -9`, but the last commits before a power loss may be lost.
   */
  readonly synchronous?: "FULL" | "NORMAL" | undefined
  /** How long a write waits for another process's lock. Default 5 s. */
  readonly busyTimeout?: DurationInput | undefined
  /** Most writes committed in one transaction. Default 1024. */
  readonly maxBatchSize?: number | undefined
  /** How long a routine write (a poll that changed nothing) may wait to share a commit. Default 10 ms. */
  readonly commitDelay?: DurationInput | undefined
}

/**
 * A PostgreSQL database: one store for a fleet of instances (give each a distinct, stable
 * `instanceId`), with a connection pool of its own.
 *
 * @since 0.1.0
 * @category models
 */
export interface PostgresStore {
  readonly kind: "postgres"
  /** `postgres://user:password@host/database`; kept redacted, never logged. */
  readonly url: string
  /** The schema holding the store's tables, created if absent. Default `mcp_handles`. */
  readonly schema?: string | undefined
  /** Run pending migrations when the store opens (default), or require them done. */
  readonly migrate?: boolean | undefined
  /** Backoff for transient connection failures; every operation is safe to retry. */
  readonly retry?:
    | {
        /** How long an operation keeps retrying from its first failure. Default 30 s. */
        readonly budget?: DurationInput | undefined
        /** First backoff delay, doubled with jitter. Default 25 ms. */
        readonly baseDelay?: DurationInput | undefined
        /** Longest single delay. Default 1 s. */
        readonly maxDelay?: DurationInput | undefined
      }
    | undefined
  /** Whose clock judges leases: the database server's (default) or this host's. */
  readonly clock?: "database" | "host" | undefined
  /** How often the session holding the instance lock is checked. Default 5 s. */
  readonly instanceLockCheck?: DurationInput | undefined
  /** Most connections in the pool. Default 10. */
  readonly maxConnections?: number | undefined
  /** How long opening a connection may take. Default 10 s. */
  readonly connectTimeout?: DurationInput | undefined
  /** The `application_name` the database shows. Default `mcp-handles`. */
  readonly applicationName?: string | undefined
}

/**
 * In process memory: nothing survives the process (tests, throwaway work).
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryStore {
  readonly kind: "memory"
}
