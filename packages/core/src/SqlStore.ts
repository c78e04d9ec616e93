/**
 * What the SQL stores share: the columns a row keeps beside its JSON body, the status lists of
 * their queries, and the one error for a database that cannot be opened as a store.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import * as HandleRecord from "./HandleRecord.js"

/**
 * The fields SQL stores keep in indexed columns, named as their columns are; the rest of a
 * record is a JSON body.
 *
 * @since 0.1.0
 * @category models
 */
export interface IndexedColumns {
  readonly scope: unknown
  readonly key: unknown
  readonly server_id: unknown
  readonly status: unknown
  readonly next_poll_at: unknown
  readonly lease_owner: unknown
  readonly lease_expires_at: unknown
  readonly version: unknown
  readonly created_at: unknown
  readonly settled_at: unknown
}

/**
 * What the SQL stores keep beside the body for their boot spread and lease renewal, so those
 * statements read no JSON (store-sqlite's migration 11, store-postgres' 8): the interval the
 * server asked for (null when it named none), and whether a cancel is recorded but not yet
 * acknowledged. Every write of a body writes these with it; the migrations fill them from a body
 * by the same rules.
 *
 * @since 0.6.0
 * @category utils
 */
export const spreadColumns = (
  record: HandleRecord.HandleRecord,
): { readonly pollIntervalMs: number | null; readonly cancelUnsent: boolean } => ({
  pollIntervalMs: typeof record.snapshot?.pollIntervalMs === "number" ? record.snapshot.pollIntervalMs : null,
  cancelUnsent: record.cancel !== null && record.cancel.sent !== true,
})

/**
 * A row's body with its columns laid over it, ready to decode as a `HandleRecord`. Columns win
 * over any same-named key in the body: they are what the queries saw.
 *
 * @since 0.1.0
 * @category utils
 */
export const fromColumns = (body: object, row: IndexedColumns): Record<string, unknown> => {
  // Copied key by key, then the columns stored one by one: a spread with the ten columns after
  // it made an object that decoded at less than half the speed (about 115 µs against 45 µs a row,
  // measured on a polled record), and a row is decoded before every poll.
  const fields: Record<string, unknown> = {}
  for (const name of Object.keys(body)) {
    const value: unknown = (body as Record<string, unknown>)[name]
    // A parsed `__proto__` key stays a plain field, as a spread would keep it: assigned, it would
    // set the copy's prototype, and fields missing from the body could be read through it.
    if (name === "__proto__") {
      Object.defineProperty(fields, name, { value, enumerable: true, writable: true, configurable: true })
    } else {
      fields[name] = value
    }
  }
  fields.scope = row.scope
  fields.key = row.key
  fields.serverId = row.server_id
  fields.status = row.status
  fields.nextPollAt = row.next_poll_at
  fields.leaseOwner = row.lease_owner
  fields.leaseExpiresAt = row.lease_expires_at
  fields.version = row.version
  fields.createdAt = row.created_at
  fields.settledAt = row.settled_at
  return fields
}

const quoted = (statuses: ReadonlyArray<HandleRecord.Status>): string =>
  statuses.map((status) => `'${status}'`).join(", ")

/**
 * The open statuses as a SQL list (`'pending', 'working', 'input_required'`), in the order
 * `HandleRecord.openStatuses` gives: partial indexes on open rows are created with this text.
 *
 * @since 0.2.0
 * @category constants
 */
export const openStatusList: string = quoted(HandleRecord.openStatuses)

/**
 * The terminal statuses as a SQL list.
 *
 * @since 0.2.0
 * @category constants
 */
export const terminalStatusList: string = quoted(HandleRecord.terminalStatuses)

/**
 * The resting statuses (terminal or in doubt) as an SQL list: the outcome feed's rows.
 *
 * @since 0.3.0
 * @category constants
 */
export const restingStatusList: string = quoted(HandleRecord.restingStatuses)

/**
 * Why a database could not be opened as a store.
 *
 * - `invalid-options`: the options cannot work (a schema name that is not a plain identifier, a
 *   duration that is not one).
 * - `cannot-create`: the path is not a file that can be created (missing directory, a directory,
 *   not a path at all).
 * - `not-writable`: the file exists but this process may not read and write it.
 * - `not-a-database`: the file is not a SQLite database, or is corrupt.
 * - `foreign-database`: a database that belongs to another application.
 * - `newer-schema`: migrated by a newer release of the store; upgrade the package instead of
 *   downgrading the data (which is never touched).
 * - `older-schema`: not yet migrated to this release's version, and the store was told not to.
 * - `cannot-open`: the database refused to open, set up or migrate (locked, unreachable, I/O).
 *
 * @since 0.2.0
 * @category models
 */
export const OpenErrorReason = Schema.Literal(
  "invalid-options",
  "cannot-create",
  "not-writable",
  "not-a-database",
  "foreign-database",
  "newer-schema",
  "older-schema",
  "cannot-open",
)

/**
 * @since 0.2.0
 * @category models
 */
export type OpenErrorReason = typeof OpenErrorReason.Type

/**
 * The database could not be opened as a store: the one error every SQL store's constructor
 * fails with. `reason` says which problem it is; the message, one line, names the store, where
 * it is and the problem, and what to do about it (`openError` builds it). Whatever the reason,
 * nothing was written.
 *
 * @since 0.2.0
 * @category errors
 */
export class OpenError extends Schema.TaggedError<OpenError>()("OpenError", {
  /** What was being opened: a database file, a database (`host:port/database`), a schema. */
  location: Schema.String,
  reason: OpenErrorReason,
  /** `cannot open the {store} store at {location}: {problem}`. */
  message: Schema.String,
  /** Which store: `SQLite`, `PostgreSQL` (unset on errors a store built before it was named). */
  store: Schema.optional(Schema.String),
  /** The problem alone, for a caller that names the store its own way (the CLI). */
  problem: Schema.optional(Schema.String),
  /** For `newer-schema` and `older-schema`: the schema version found. */
  found: Schema.optional(Schema.Number),
  /** For `newer-schema` and `older-schema`: the version this release reads and writes. */
  supported: Schema.optional(Schema.Number),
  cause: Schema.optional(Schema.Defect),
}) {}

/**
 * An `OpenError` whose message is the one line every store's open failures read as:
 * `cannot open the SQLite store at /srv/tasks.db: … is not a SQLite database …`. The problem
 * is one line too (a driver's multi-line text is joined).
 *
 * @since 0.7.0
 * @category constructors
 */
export const openError = (fields: {
  readonly store: string
  readonly location: string
  readonly reason: OpenErrorReason
  readonly problem: string
  readonly cause?: unknown
  readonly found?: number | undefined
  readonly supported?: number | undefined
}): OpenError => {
  const problem = fields.problem.replace(/\s*\n\s*/g, " ").trim()
  return new OpenError({
    location: fields.location,
    reason: fields.reason,
    store: fields.store,
    problem,
    message: `cannot open the ${fields.store} store at ${fields.location}: ${problem}`,
    ...(fields.cause === undefined ? {} : { cause: fields.cause }),
    ...(fields.found === undefined ? {} : { found: fields.found }),
    ...(fields.supported === undefined ? {} : { supported: fields.supported }),
  })
}
