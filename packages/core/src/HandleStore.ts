/**
 * The storage port: what the engine asks of a store, and how a store may fail. Adapters
 * (memory, SQLite, Postgres, or a third party's) are usually written on the thinner driver port
 * in `HandleStoreDriver`, and prove themselves with `@mcp-handles/store-contract`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { HandleRecord, Status } from "./HandleRecord.js"
import type { JsonObject } from "./Json.js"

/**
 * The failures a store reports as themselves: `StoreError.refail` lets them through and wraps
 * anything else.
 *
 * @since 0.2.0
 * @category errors
 */
export type StoreFailure = StoreError | VersionConflict | TaskIdTaken | InstanceIdInUse

const isStoreFailure = (error: unknown): error is StoreFailure =>
  error instanceof StoreError ||
  error instanceof VersionConflict ||
  error instanceof TaskIdTaken ||
  error instanceof InstanceIdInUse

const messageOf = (cause: unknown): string =>
  cause instanceof Error || (typeof cause === "object" && cause !== null && "message" in cause)
    ? String((cause as { readonly message: unknown }).message)
    : String(cause)

/**
 * The store could not do its job (I/O, driver, corrupt row). Never used for "not found" (a
 * missing row is `None`, `false` or a `VersionConflict`, whichever the operation promises) or
 * for a lost compare-and-set.
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  operation: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect),
}) {
  /**
   * Reports every failure of `effect` as a StoreError of `operation`, the driver's own failure
   * kept as its cause; the store's typed failures (`StoreFailure`) pass as they are. The one
   * place a driver error (an SQL error, a schema error) becomes a store error.
   *
   * @since 0.2.0
   */
  static refail(
    operation: string,
    describe: (cause: unknown) => string = messageOf,
  ): <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, Extract<E, StoreFailure> | StoreError, R> {
    return <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.mapError(effect, (cause): Extract<E, StoreFailure> | StoreError =>
        isStoreFailure(cause)
          ? (cause as Extract<E, StoreFailure>)
          : new StoreError({ operation, message: describe(cause), cause }),
      )
  }
}

/**
 * A compare-and-set lost: the row changed since it was read (another fiber, another instance, or
 * a lease that was taken over), or is gone. The writer must re-read before deciding anything.
 *
 * @since 0.1.0
 * @category errors
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
 * @category errors
 */
export class TaskIdTaken extends Schema.TaggedError<TaskIdTaken>()("TaskIdTaken", {
  scope: Schema.String,
  key: Schema.String,
  serverId: Schema.String,
}) {}

/**
 * Another live client (another process, or another client of this process) holds this instance
 * id on the store. Clients sharing a store need distinct ids; two live clients under one id would
 * each take the other's rows for its own.
 *
 * @since 0.2.0
 * @category errors
 */
export class InstanceIdInUse extends Schema.TaggedError<InstanceIdInUse>()("InstanceIdInUse", {
  instanceId: Schema.String,
  /** Who holds it, as far as the store can tell (a process id, a database backend). */
  holder: Schema.String,
}) {
  override get message(): string {
    return `instance id ${JSON.stringify(this.instanceId)} is held by ${this.holder}; give each live client sharing a store its own instanceId`
  }
}

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
  /** 1 to 1000; a fraction is rounded down, anything outside is brought inside. */
  readonly limit: number
  /** From a previous page's `nextCursor`. */
  readonly cursor?: string | undefined
}

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
 * @since 0.1.0
 * @category models
 */
export interface GcOptions {
  /** Limit to one scope; all scopes when absent (an operator's sweep). */
  readonly scope?: string | undefined
  /**
   * Terminal rows settled strictly before this instant are deleted, once every consumer known
   * in their scope has acknowledged their outcome (see `ConsumerRecord`).
   */
  readonly settledBefore: number
  /**
   * Rows settled strictly before this instant (and before `settledBefore`) are deleted even
   * when a known consumer has not acknowledged them; the report counts them per consumer.
   * Absent: an unacknowledged outcome is kept for as long as its consumer is known.
   */
  readonly unacknowledgedBefore?: number | undefined
}

/**
 * What a GC sweep did. A sweep never drops an outcome silently: `unacknowledged` names each
 * consumer that lost outcomes it had not acknowledged, and `kept` says how many old rows wait
 * for a consumer.
 *
 * @since 0.3.0
 * @category models
 */
export interface GcReport {
  readonly deleted: number
  /** Rows old enough to go that were kept because a known consumer has not acknowledged them. */
  readonly kept: number
  /** Per consumer and scope, how many deleted rows it had not acknowledged; by scope, then consumer. */
  readonly unacknowledged: ReadonlyArray<UnacknowledgedOutcomes>
}

/**
 * @since 0.3.0
 * @category models
 */
export interface UnacknowledgedOutcomes {
  readonly consumer: string
  readonly scope: string
  /** How many of its outcomes the sweep deleted unacknowledged. */
  readonly outcomes: number
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
 * @since 0.1.0
 * @category models
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
   * so a restart under the same id is never kept waiting. A second client of this process is
   * refused too (see `InstanceHold`): two clients under one id would take each other's live
   * leases. A store that can no longer prove it holds the id (a lost database session) refuses
   * its writes until it has it back.
   */
  readonly lockInstance: (
    instanceId: string,
  ) => Effect.Effect<void, InstanceIdInUse | StoreError, Scope.Scope>
  /**
   * Atomic insert-or-get by scope and key: writes the call's intent unless the key exists.
   * Exactly one of any number of concurrent callers with the same key gets `created: true`; the
   * row is durable when this returns.
   */
  readonly insertOrGet: (handle: NewHandle) => Effect.Effect<InsertOrGetResult, StoreError>
  readonly get: (scope: string, key: string) => Effect.Effect<Option.Option<HandleRecord>, StoreError>
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
   * lease runs out; rows already due are taken over by `spreadDue` instead. Returns how many.
   */
  readonly releaseOwner: (options: ReleaseOwnerOptions) => Effect.Effect<number, StoreError>
  /**
   * One page of a scope's rows, ordered by creation time then key; of every scope's rows when
   * the filter names none, ordered by creation time, key, then scope.
   */
  readonly list: (filter: ListFilter) => Effect.Effect<ListPage, StoreError>
  /**
   * Deletes terminal rows settled before the cutoff whose outcome every consumer known in their
   * scope has acknowledged (or, past `unacknowledgedBefore`, whatever was acknowledged), and
   * says what it did; never an open or in-doubt row.
   */
  readonly deleteSettledBefore: (options: GcOptions) => Effect.Effect<GcReport, StoreError>

  // --- Outcome delivery (issue 15): the store as the app's inbox; models at the end of this module.
  /**
   * Hands out up to `limit` rows of `scope` that rest (terminal or in doubt) and are due for the
   * consumer: its current rest (status and launch count) is not acknowledged by the consumer,
   * and no member of the consumer holds a live claim on it (a claim whose lease is not past
   * `now`). Each is claimed for `member` until `now + leaseMs`: a member that dies without
   * acknowledging lets the outcome go to another member (or itself again) when the claim runs
   * out. A rest other than the one last delivered (an in-doubt call reissued, then completed)
   * is a new outcome. Oldest call first. Two members claiming at once never get the same row.
   * The consumer becomes known in `scope` (seen at `now`): from then on GC keeps the scope's
   * rows until it has acknowledged them.
   */
  readonly claimOutcomes: (
    options: ClaimOutcomesOptions,
  ) => Effect.Effect<ReadonlyArray<OutcomeDelivery>, StoreError>
  /**
   * Marks the consumer's delivered rest of a row acknowledged: it is not handed out again. With
   * `rest`, only when the delivered rest is that one (a later rest stays due). True when a
   * delivered rest was acknowledged (or already was); false when none matched.
   */
  readonly ackOutcome: (options: AckOutcomeOptions) => Effect.Effect<boolean, StoreError>
  /**
   * Ends every unacknowledged claim `member` holds for the consumer, so they are due at once:
   * a restarted member (one live process per instance id) takes back what its previous process
   * was handed but never acknowledged. Returns how many.
   */
  readonly releaseOutcomes: (options: ReleaseOutcomesOptions) => Effect.Effect<number, StoreError>
  /** The consumers known in `scope` (every scope when absent), by scope, then name. */
  readonly listConsumers: (scope?: string) => Effect.Effect<ReadonlyArray<ConsumerRecord>, StoreError>
  /**
   * Forgets a consumer (a decommissioned one, which would otherwise hold rows from GC) in one
   * scope, or every scope when none is named, with what it was handed and acknowledged. Should it
   * claim again, it is a new consumer: every resting row is delivered to it. Returns how many
   * scopes it was known in.
   */
  readonly forgetConsumer: (options: ForgetConsumerOptions) => Effect.Effect<number, StoreError>
}

/**
 * The port includes the servers part, declared in its own block below.
 *
 * @since 0.3.0
 * @category models
 */
export interface HandleStore extends ServerStore {}

// ---------------------------------------------------------------------------------------------
// Servers (issues 15 item 7 and 16): the servers a store's rows point at, shared by every
// process on the store. Kept apart from the outcome-delivery block above.
// ---------------------------------------------------------------------------------------------

/**
 * A server as the store knows it: rows name it by `id`, whose name part is `name`; the store
 * keeps the URL it was last seen at, never credentials (`ServerIdentity.normaliseUrl` refuses
 * them).
 *
 * @since 0.3.0
 * @category models
 */
export interface ServerRecord {
  /** The name an app configures it under; the key of the servers table. */
  readonly name: string
  /** The normalised URL, without credentials. */
  readonly url: string
  /** `ServerIdentity.of({ name, url })`: what rows written against this URL store as `serverId`. */
  readonly id: string
  readonly firstSeenAt: number
  readonly lastSeenAt: number
}

/**
 * @since 0.3.0
 * @category models
 */
export interface SeenServer {
  readonly name: string
  readonly url: string
  readonly id: string
  readonly now: number
}

/**
 * @since 0.3.0
 * @category models
 */
export interface RebindOptions {
  /** The server identity (`serverId`) the rows name now. */
  readonly from: string
  /** The identity they name afterwards. */
  readonly to: string
  /** Only this scope's rows; every scope when absent. */
  readonly scope?: string | undefined
}

/**
 * The servers part of the port.
 *
 * @since 0.3.0
 * @category models
 */
export interface ServerStore {
  /**
   * Records that `name` is at `url` (identity `id`) as of `now`: a new name is added with both
   * times `now`; a known one gets the URL and identity given and `lastSeenAt` moved to `now`
   * (never back), its `firstSeenAt` kept. Returns the server as stored.
   */
  readonly recordServer: (server: SeenServer) => Effect.Effect<ServerRecord, StoreError>
  /** Every known server, by name. */
  readonly listServers: Effect.Effect<ReadonlyArray<ServerRecord>, StoreError>
  /** Forgets a server's name and URL (its rows stay); false when it was not known. */
  readonly removeServer: (name: string) => Effect.Effect<boolean, StoreError>
  /**
   * Moves every row that names `from` to name `to`, versions bumped (a lease holder's next
   * write loses and re-reads). Atomic: when a row's task id is already held by a row of `to`,
   * nothing moves and it fails with `TaskIdTaken`. Returns how many rows moved.
   */
  readonly rebind: (options: RebindOptions) => Effect.Effect<number, StoreError | TaskIdTaken>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const HandleStore: Context.Tag<HandleStore, HandleStore> = Context.GenericTag<HandleStore>(
  "@mcp-handles/core/HandleStore",
)

// ---------------------------------------------------------------------------------------------
// Outcome delivery (issue 15): models of `claimOutcomes`, `ackOutcome` and `releaseOutcomes`.
// ---------------------------------------------------------------------------------------------

/**
 * Which rest of a row an outcome is: a row rests again, differently, after an in-doubt call is
 * reissued or abandoned.
 *
 * @since 0.3.0
 * @category models
 */
export interface Rest {
  readonly status: Status
  readonly launches: number
}

/**
 * @since 0.3.0
 * @category models
 */
export interface ClaimOutcomesOptions {
  /** The consumer's durable name: each consumer gets every outcome. */
  readonly consumer: string
  /** The member of the consumer group claiming (an instance id): each outcome goes to one member. */
  readonly member: string
  readonly scope: string
  readonly now: number
  /** How long a claim lasts without an acknowledgement before the outcome is handed out again. */
  readonly leaseMs: number
  readonly limit: number
}

/**
 * One outcome handed to a consumer.
 *
 * @since 0.3.0
 * @category models
 */
export interface OutcomeDelivery {
  readonly consumer: string
  /** The row as it rests. */
  readonly record: HandleRecord
  /** How many times this rest was handed to the consumer, this time included (1 the first time). */
  readonly deliveries: number
}

/**
 * @since 0.3.0
 * @category models
 */
export interface AckOutcomeOptions {
  readonly consumer: string
  readonly scope: string
  readonly key: string
  /** Acknowledge only this rest; whichever rest was delivered when absent. */
  readonly rest?: Rest | undefined
}

/**
 * @since 0.3.0
 * @category models
 */
export interface ReleaseOutcomesOptions {
  readonly consumer: string
  readonly member: string
}

/**
 * A consumer as the store knows it, per scope: from its first claim of the scope's outcomes
 * until it is forgotten. GC keeps a terminal row while a consumer known in its scope has not
 * acknowledged its outcome.
 *
 * @since 0.3.0
 * @category models
 */
export interface ConsumerRecord {
  readonly consumer: string
  readonly scope: string
  readonly firstSeenAt: number
  /** Its last claim. */
  readonly lastSeenAt: number
}

/**
 * @since 0.3.0
 * @category models
 */
export interface ForgetConsumerOptions {
  readonly consumer: string
  /** Every scope when absent. */
  readonly scope?: string | undefined
}
