/**
 * The calls part of the store port: one row per call, written ahead of its request, changed
 * only by compare-and-set, claimed and leased by the instance that drives it, and listed.
 *
 * @since 0.4.0
 */
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { HandleRecord, Status } from "./HandleRecord.js"
import type { JsonObject } from "./Json.js"
import type { StoreError, TaskIdTaken, VersionConflict } from "./StoreError.js"

/**
 * The write-ahead intent of a call, written before the request leaves.
 *
 * @since 0.1.0
 * @category models
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

/**
 * @since 0.2.0
 * @category models
 */
export interface InsertOrGetResult {
  readonly record: HandleRecord
  /** False when the key already existed: the caller attaches instead of dispatching. */
  readonly created: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ClaimOptions {
  readonly owner: string
  readonly now: number
  readonly leaseMs: number
  readonly limit: number
  /** Only rows of these servers (absent: every server's). */
  readonly servers?: ServerFilter | undefined
}

/**
 * The servers an instance can drive: rows written under one of `ids`, and rows of any identity
 * whose server name is one of `names` (names the store's servers table binds to this instance's
 * URL, where an operator moved a name). A claim never takes a row it cannot drive: an instance
 * without the row's server would only hold it from one that has it.
 *
 * @since 0.4.0
 * @category models
 */
export interface ServerFilter {
  readonly ids: ReadonlyArray<string>
  readonly names: ReadonlyArray<string>
}

/**
 * The boot spread in bulk: after a restart, live tasks that are overdue get their next poll
 * moved to a random point within one poll interval, leased to `owner`, without being read back.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpreadOptions {
  readonly owner: string
  /** Owners whose live leases are taken over too: this instance's names before the restart. */
  readonly takeOver: ReadonlyArray<string>
  readonly now: number
  readonly leaseMs: number
  readonly limit: number
  /** Only rows of these servers (absent: every server's). */
  readonly servers?: ServerFilter | undefined
  /** The window of a row is its stored `pollIntervalMs` clamped into [min, max], else `defaultIntervalMs`. */
  readonly minIntervalMs: number
  readonly maxIntervalMs: number
  readonly defaultIntervalMs: number
}

/**
 * @since 0.2.0
 * @category models
 */
export interface RenewOptions {
  readonly scope: string
  readonly key: string
  readonly owner: string
  /** The new expiry (epoch milliseconds). */
  readonly until: number
}

/**
 * @since 0.4.0
 * @category models
 */
export interface RenewManyOptions {
  readonly owner: string
  /** The rows to renew, by scope and key. */
  readonly rows: ReadonlyArray<{ readonly scope: string; readonly key: string }>
  /** The new expiry (epoch milliseconds); each renewed row's next poll is put off to it at the least. */
  readonly until: number
}

/**
 * @since 0.2.0
 * @category models
 */
export interface ReleaseOwnerOptions {
  readonly owner: string
  readonly now: number
  /** A freed row's window, as `spreadDue`'s: its stored `pollIntervalMs` clamped into [min, max], else the default. */
  readonly minIntervalMs: number
  readonly maxIntervalMs: number
  readonly defaultIntervalMs: number
}

/**
 * @since 0.7.0
 * @category models
 */
export interface IntentsOptions {
  /** Whose leases. */
  readonly owner: string
  readonly limit: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ListFilter {
  /** Every scope's rows when absent (an operator's view, `list --all-scopes`). */
  readonly scope?: string | undefined
  readonly statuses?: ReadonlyArray<Status> | undefined
  readonly serverId?: string | undefined
  /**
   * Only rows with a due time: open rows, and settled ones with a stray task still to cancel
   * (`list --stuck` finds those without reading settled history).
   */
  readonly scheduled?: boolean | undefined
  /**
   * Only rows whose key contains this text: ASCII letters in either case, every other character
   * (`%` and `_` too) as itself; empty: every row. Keys are stored in clear, also under
   * encryption at rest.
   */
  readonly keyContains?: string | undefined
  /** 1 to 1000; a fraction is rounded down, anything outside is brought inside. */
  readonly limit: number
  /** From a previous page's `nextCursor`. */
  readonly cursor?: string | undefined
}

/**
 * The rows `count` counts: `list`'s filter without the statuses (every status is counted) and
 * without paging.
 *
 * @since 0.6.0
 * @category models
 */
export interface CountFilter {
  /** Every scope's rows when absent. */
  readonly scope?: string | undefined
  readonly serverId?: string | undefined
  /** As `ListFilter.keyContains`. */
  readonly keyContains?: string | undefined
}

/**
 * How many rows of each status a `count` found (zero for a status it found none of).
 *
 * @since 0.6.0
 * @category models
 */
export type StatusCounts = { readonly [S in Status]: number }

/**
 * @since 0.1.0
 * @category models
 */
export interface ListPage {
  readonly records: ReadonlyArray<HandleRecord>
  /** Null on the last page. */
  readonly nextCursor: string | null
}

/**
 * How `update` may schedule a write. Whatever is given, the write is durable when `update`
 * returns.
 *
 * @since 0.3.0
 * @category models
 */
export interface UpdateOptions {
  /**
   * A routine write: a poll that found the task as it was, so nothing waits on the row but its
   * next poll. A store that commits writes in groups may hold it a moment (SQLite's
   * `commitDelay`) so that it shares one commit, and one fsync, with others. Default false.
   */
  readonly routine?: boolean | undefined
}

/**
 * A row's version, lease and next poll, without its record (`CallStore.peek`).
 *
 * @since 0.7.0
 * @category models
 */
export interface RowStamp {
  readonly version: number
  readonly leaseOwner: string | null
  readonly leaseExpiresAt: number | null
  readonly nextPollAt: number | null
}

/**
 * The calls part of the port.
 *
 * @since 0.4.0
 * @category models
 */
export interface CallStore {
  /**
   * Atomic insert-or-get by scope and key: writes the call's intent unless the key exists.
   * Exactly one of any number of concurrent callers with the same key gets `created: true`; the
   * row is durable when this returns.
   */
  readonly insertOrGet: (handle: NewHandle) => Effect.Effect<InsertOrGetResult, StoreError>
  readonly get: (scope: string, key: string) => Effect.Effect<Option.Option<HandleRecord>, StoreError>
  /**
   * The row's version, lease and next poll, without reading its record (None when the row is
   * gone): what a holder that kept the record of one version asks before it acts on the row
   * again. Every write but a lease renewal (`renewLease`, `renewLeases`) bumps the version, so
   * the same version means the same record, with the lease and next poll given here.
   *
   * @since 0.7.0
   */
  readonly peek: (scope: string, key: string) => Effect.Effect<Option.Option<RowStamp>, StoreError>
  /**
   * Compare-and-set: writes `record` when the stored version equals `record.version`, and
   * returns it with the version bumped. Durable when it returns. A task id is held by one row
   * per server: giving it to a second row fails with `TaskIdTaken` and writes nothing.
   */
  readonly update: (
    record: HandleRecord,
    options?: UpdateOptions,
  ) => Effect.Effect<HandleRecord, StoreError | VersionConflict | TaskIdTaken>
  /**
   * Leases rows that are due (`nextPollAt <= now`: open rows, and settled rows with a stray task
   * still to cancel) and not leased by another live owner, of the servers in `servers`, oldest
   * due first, across all scopes. Each claimed row's version is bumped, which fences off any
   * previous owner's writes.
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
   * `renewLease` for many rows at once (one statement where the store allows), for the rows a
   * holder watches without acting on them (push: a stream tells it when the task changes). Only
   * a live task (`working`, `input_required`) with no unsent cancel that `owner` holds is
   * renewed: its lease runs to `until`, and its next poll is put off to `until` if sooner, so
   * that nobody takes it up before the lease runs out and a claim never reads past it. A row
   * with a cancel to send is left to run out: its holder, told so, looks at it at once, and if
   * the holder is dead another instance sends the cancel. The version is left alone, as with
   * `renewLease`. Returns the rows renewed.
   */
  readonly renewLeases: (
    options: RenewManyOptions,
  ) => Effect.Effect<ReadonlyArray<{ readonly scope: string; readonly key: string }>, StoreError>
  /**
   * Frees every lease `owner` holds on a row that is not due at `now` (or not scheduled at
   * all), version bumped. At boot, an instance frees what its previous process left leased
   * under its name, so those rows are polled at their due time instead of after the dead
   * lease runs out; rows already due are taken over by `spreadDue` instead. A row whose next
   * poll is its lease's end (what `renewLeases` leaves on a row polled without a write) is due
   * one window from `now` instead, if that is sooner (`Claiming.releasedPollAt`). Returns how many.
   */
  readonly releaseOwner: (options: ReleaseOwnerOptions) => Effect.Effect<number, StoreError>
  /**
   * Up to `limit` live rows (`working`, `input_required`) leased to `owner` that hold an intent
   * for their holder to act on: a cancel not yet sent, or, while the task waits for input, an
   * answer not yet acknowledged. Intents are written by whichever instance asks and never take
   * the lease, so this is how a holder learns of another instance's cancel or answer without
   * reading every row it holds (its reconciler asks once a tick and wakes those rows' drivers).
   * Served by an index where the store has one; it reads, and writes nothing.
   *
   * @since 0.7.0
   */
  readonly pendingIntents: (
    options: IntentsOptions,
  ) => Effect.Effect<ReadonlyArray<{ readonly scope: string; readonly key: string }>, StoreError>
  /**
   * One page of a scope's rows, ordered by creation time then key; of every scope's rows when
   * the filter names none, ordered by creation time, key, then scope.
   */
  readonly list: (filter: ListFilter) => Effect.Effect<ListPage, StoreError>
  /**
   * The exact number of rows of each status among those `filter` selects (an operator's counts,
   * `mcp-handles ui`): one read, served by the store's indexes where it has them.
   */
  readonly count: (filter: CountFilter) => Effect.Effect<StatusCounts, StoreError>
}
