/**
 * The storage port. Adapters (memory, SQLite, Postgres, or a third party's) implement this
 * service and prove it with the contract suite in `@mcp-handles/core/testing`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { HandleRecord, openStatuses, type Status } from "./HandleRecord.js"
import { JsonObject } from "./Json.js"
import * as Polling from "./Polling.js"

/**
 * The store could not do its job (I/O, driver, corrupt row). Never used for "not found" or for a
 * lost compare-and-set.
 *
 * @since 0.1.0
 */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  operation: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect),
}) {}

/**
 * A compare-and-set lost: the row changed since it was read (another fiber, another instance, or
 * a lease that was taken over). The writer must re-read before deciding anything.
 *
 * @since 0.1.0
 */
export class VersionConflict extends Schema.TaggedError<VersionConflict>()("VersionConflict", {
  scope: Schema.String,
  key: Schema.String,
  expectedVersion: Schema.Number,
}) {}

/**
 * The write would give a server task id to a second row: the server handed one task id out for
 * two calls. A task id names one task, so it is held by one row; the second call must end
 * visibly instead of being merged into the first.
 *
 * @since 0.2.0
 */
export class TaskIdTaken extends Schema.TaggedError<TaskIdTaken>()("TaskIdTaken", {
  scope: Schema.String,
  key: Schema.String,
  serverId: Schema.String,
}) {}

/**
 * Another live process holds this instance id on the store. Instances sharing a store need
 * distinct ids; two live processes under one id would each take the other's rows for its own.
 *
 * @since 0.2.0
 */
export class InstanceIdInUse extends Schema.TaggedError<InstanceIdInUse>()("InstanceIdInUse", {
  instanceId: Schema.String,
  /** Who holds it, as far as the store can tell (a process id, a database backend). */
  holder: Schema.String,
}) {
  override get message(): string {
    return `instance id ${JSON.stringify(this.instanceId)} is in use by another live process (${this.holder}); give each process sharing a store its own instanceId`
  }
}

/**
 * The write-ahead intent of a call, written before the request leaves.
 *
 * @since 0.1.0
 */
export interface NewHandle {
  readonly scope: string
  readonly key: string
  readonly serverId: string
  readonly tool: string
  readonly arguments: JsonObject | null
  readonly argumentsHash: string
  /** The instance that will dispatch; it holds the lease while it does. */
  readonly owner: string
  readonly leaseMs: number
  readonly now: number
}

/** @since 0.1.0 */
export interface BeginResult {
  readonly record: HandleRecord
  /** False when the key already existed: the caller attaches instead of dispatching. */
  readonly created: boolean
}

/** @since 0.1.0 */
export interface ClaimOptions {
  readonly owner: string
  readonly now: number
  readonly leaseMs: number
  readonly limit: number
}

/**
 * The boot spread in bulk: after a restart, live tasks that are overdue get their next poll
 * moved to a random point within one poll interval, leased to `owner`, without being read back.
 *
 * @since 0.1.0
 */
export interface SpreadOptions {
  readonly owner: string
  /** Owners whose live leases are taken over too: this instance's names before the restart. */
  readonly takeOver: ReadonlyArray<string>
  readonly now: number
  readonly leaseMs: number
  readonly limit: number
  /** The window of a row is its stored `pollIntervalMs` clamped into [min, max], else `defaultIntervalMs`. */
  readonly minIntervalMs: number
  readonly maxIntervalMs: number
  readonly defaultIntervalMs: number
}

/** @since 0.2.0 */
export interface RenewOptions {
  readonly scope: string
  readonly key: string
  readonly owner: string
  /** The new expiry (epoch milliseconds). */
  readonly until: number
}

/** @since 0.2.0 */
export interface ReleaseOwnerOptions {
  readonly owner: string
  readonly now: number
}

/** @since 0.1.0 */
export interface ListFilter {
  readonly scope: string
  readonly statuses?: ReadonlyArray<Status>
  readonly serverId?: string
  /** 1 to 1000. */
  readonly limit: number
  /** From a previous page's `nextCursor`. */
  readonly cursor?: string
}

/** @since 0.1.0 */
export interface ListPage {
  readonly records: ReadonlyArray<HandleRecord>
  /** Null on the last page. */
  readonly nextCursor: string | null
}

/** @since 0.1.0 */
export interface GcOptions {
  /** Limit to one scope; all scopes when absent (an operator's sweep). */
  readonly scope?: string
  /** Terminal rows settled strictly before this instant are deleted. */
  readonly settledBefore: number
}

/**
 * @since 0.1.0
 */
export interface HandleStore {
  /**
   * The store's clock (epoch milliseconds). Leases and due times of the rows in a store are
   * judged by one clock: a fleet whose hosts disagree still agrees on when a lease ran out. An
   * embedded store uses the host's (Effect's `Clock`, so `TestClock` drives it); a shared one
   * uses the database's.
   */
  readonly now: Effect.Effect<number>
  /**
   * Holds `instanceId` for this process until the scope closes; fails with `InstanceIdInUse`
   * while another live process holds it. A process that dies, even by SIGKILL, lets go at once,
   * so a restart under the same id is never kept waiting. Clients in one process share the hold
   * (one process is one instance). A store only one process can open (memory) holds nothing.
   */
  readonly lockInstance: (
    instanceId: string,
  ) => Effect.Effect<void, InstanceIdInUse | StoreError, Scope.Scope>
  /**
   * Atomic insert-or-get by scope and key. Exactly one of any number of concurrent callers with
   * the same key gets `created: true`; the row is durable when this returns.
   */
  readonly begin: (handle: NewHandle) => Effect.Effect<BeginResult, StoreError>
  readonly get: (scope: string, key: string) => Effect.Effect<Option.Option<HandleRecord>, StoreError>
  /**
   * Compare-and-set: writes `record` when the stored version equals `record.version`, and
   * returns it with the version bumped. Durable when it returns. A task id is held by one row
   * per server: giving it to a second row fails with `TaskIdTaken` and writes nothing.
   */
  readonly update: (
    record: HandleRecord,
  ) => Effect.Effect<HandleRecord, StoreError | VersionConflict | TaskIdTaken>
  /**
   * Leases open rows that are due (`nextPollAt <= now`) and not leased by another live owner,
   * oldest due first, across all scopes. Each claimed row's version is bumped, which fences off
   * any previous owner's writes.
   */
  readonly claimDue: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<HandleRecord>, StoreError>
  /**
   * Reschedules up to `limit` due rows that are `working` or `input_required` with no unsent
   * cancel, free of other live leases: next poll at a uniformly random point of one interval
   * window starting at `now`, or one window after the row's due time if that is later (a process
   * that died may have polled at the due time without recording it), leased to `owner` until
   * then plus `leaseMs`, version bumped.
   * Returns how many rows it moved. One statement per call where the store allows: this is what
   * makes a restart with a large backlog cheap.
   */
  readonly spreadDue: (options: SpreadOptions) => Effect.Effect<number, StoreError>
  /** Gives up `owner`'s lease on a row (hand-off on close); a no-op for anyone else's lease. */
  readonly release: (scope: string, key: string, owner: string) => Effect.Effect<void, StoreError>
  /**
   * Extends `owner`'s lease on a row to `until` (the heartbeat of a holder whose request or input
   * question is still in flight). True when `owner` still held the lease; false when the row
   * changed hands or is gone. The version is left alone: a renewal fences nobody, and the
   * holder's own next compare-and-set still matches.
   */
  readonly renewLease: (options: RenewOptions) => Effect.Effect<boolean, StoreError>
  /**
   * Frees every lease `owner` holds on a row that is not due at `now` (or not scheduled at
   * all), version bumped. At boot, an instance frees what its previous process left leased
   * under its name, so those rows are polled at their due time instead of after the dead
   * lease runs out; rows already due are taken over by `spreadDue` instead. Returns how many.
   */
  readonly releaseOwner: (options: ReleaseOwnerOptions) => Effect.Effect<number, StoreError>
  /** One page of a scope's rows, ordered by creation time then key. */
  readonly list: (filter: ListFilter) => Effect.Effect<ListPage, StoreError>
  /** Deletes terminal rows settled before the cutoff; never an open or in-doubt row. */
  readonly deleteSettledBefore: (options: GcOptions) => Effect.Effect<number, StoreError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const HandleStore: Context.Tag<HandleStore, HandleStore> = Context.GenericTag<HandleStore>(
  "@mcp-handles/core/HandleStore",
)

const validateArguments = Schema.validateEither(Schema.NullOr(JsonObject))

/**
 * The row `begin` inserts: every adapter starts from the same record, so they differ only in
 * how they keep it. Built without re-validating every field (the validating constructor costs
 * more than a durable commit, on every call's critical path); only `arguments` can hold what the
 * types do not rule out, and it is checked with a validator compiled once.
 *
 * @since 0.1.0
 */
export const initialRecord = (handle: NewHandle): Either.Either<HandleRecord, StoreError> => {
  const checked = validateArguments(handle.arguments)
  if (Either.isLeft(checked)) {
    return Either.left(
      new StoreError({
        operation: "begin",
        message: `arguments of ${JSON.stringify(handle.key)} are not a JSON object: ${ParseResult.TreeFormatter.formatErrorSync(checked.left).slice(0, 500)}`,
      }),
    )
  }
  return Either.right(
    new HandleRecord(
      {
        scope: handle.scope,
        key: handle.key,
        serverId: handle.serverId,
        tool: handle.tool,
        arguments: handle.arguments,
        argumentsHash: handle.argumentsHash,
        taskId: null,
        status: "pending",
        snapshot: null,
        result: null,
        error: null,
        inputRequests: null,
        answers: {},
        stuckSince: null,
        cancel: null,
        // Due at once, guarded by the dispatcher's lease: another instance can claim it only
        // after the lease runs out, and this instance, restarted under the same id, at once.
        // Either way the reconciler finds a call whose dispatcher died and marks it in doubt.
        nextPollAt: handle.now,
        attempts: 0,
        pollsWithoutInterval: 0,
        launches: 1,
        lastProblem: null,
        leaseOwner: handle.owner,
        leaseExpiresAt: handle.now + handle.leaseMs,
        version: 1,
        createdAt: handle.now,
        updatedAt: handle.now,
        settledAt: null,
      },
      true,
    ),
  )
}

/**
 * Whether `claimDue` may take the row for `owner` at `now`: open, due, and not leased by another
 * live owner.
 *
 * @since 0.1.0
 */
export const isClaimable = (record: HandleRecord, owner: string, now: number): boolean =>
  openStatuses.includes(record.status) &&
  record.nextPollAt !== null &&
  record.nextPollAt <= now &&
  (record.leaseOwner === null ||
    record.leaseOwner === owner ||
    (record.leaseExpiresAt !== null && record.leaseExpiresAt <= now))

/**
 * List order is (createdAt, key); the cursor is the position of the last row of a page.
 *
 * @since 0.1.0
 */
export interface CursorPosition {
  readonly createdAt: number
  readonly key: string
}

/** @since 0.1.0 */
export const encodeCursor = (position: CursorPosition): string =>
  `${position.createdAt}.${encodeURIComponent(position.key)}`

/** @since 0.1.0 */
export const decodeCursor = (cursor: string): Option.Option<CursorPosition> => {
  const dot = cursor.indexOf(".")
  const createdAt = Number(cursor.slice(0, dot))
  if (dot <= 0 || !Number.isSafeInteger(createdAt)) return Option.none()
  try {
    return Option.some({ createdAt, key: decodeURIComponent(cursor.slice(dot + 1)) })
  } catch {
    return Option.none()
  }
}

/** @since 0.1.0 */
export const compareListOrder = (a: CursorPosition, b: CursorPosition): number =>
  a.createdAt - b.createdAt || compareCodePoints(a.key, b.key)

/**
 * Keys order by Unicode code point, which is what SQL stores give with a binary collation (UTF-8
 * bytes in SQLite, `COLLATE "C"` in Postgres); JavaScript's `<` compares UTF-16 units instead.
 *
 * @since 0.1.0
 */
export const compareCodePoints = (a: string, b: string): number => {
  const left = a[Symbol.iterator]()
  const right = b[Symbol.iterator]()
  for (;;) {
    const x = left.next()
    const y = right.next()
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1
    const diff = (x.value.codePointAt(0) ?? 0) - (y.value.codePointAt(0) ?? 0)
    if (diff !== 0) return diff
  }
}

/** @since 0.1.0 */
export const maxListLimit = 1000

/**
 * The fields SQL adapters keep in indexed columns, named as their columns are; the rest of a
 * record is a JSON body.
 *
 * @since 0.1.0
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
 * A row's body with its columns laid over it, ready to decode as a `HandleRecord`. Columns win
 * over any same-named key in the body: they are what the queries saw.
 *
 * @since 0.1.0
 */
export const fromColumns = (body: object, row: IndexedColumns): Record<string, unknown> => ({
  ...body,
  scope: row.scope,
  key: row.key,
  serverId: row.server_id,
  status: row.status,
  nextPollAt: row.next_poll_at,
  leaseOwner: row.lease_owner,
  leaseExpiresAt: row.lease_expires_at,
  version: row.version,
  createdAt: row.created_at,
  settledAt: row.settled_at,
})

/**
 * Whether `spreadDue` moves the row (the in-memory reading of its WHERE clause).
 *
 * @since 0.1.0
 */
export const isSpreadable = (record: HandleRecord, options: SpreadOptions): boolean =>
  (record.status === "working" || record.status === "input_required") &&
  record.taskId !== null &&
  (record.cancel === null || record.cancel.sent) &&
  record.nextPollAt !== null &&
  record.nextPollAt <= options.now &&
  (record.leaseOwner === null ||
    record.leaseOwner === options.owner ||
    options.takeOver.includes(record.leaseOwner) ||
    (record.leaseExpiresAt !== null && record.leaseExpiresAt <= options.now))

/**
 * The interval window `spreadDue` spreads a row over.
 *
 * @since 0.1.0
 */
export const spreadWindow = (record: HandleRecord, options: SpreadOptions): number => {
  const interval = record.snapshot?.pollIntervalMs
  return interval === undefined || !Number.isFinite(interval)
    ? options.defaultIntervalMs
    : Polling.clamp(options, interval)
}
