/**
 * The driver port: the thin part of a store that only its own storage can do, and the one
 * constructor (`makeStore`) that turns a driver into a `HandleStore`. What every store would
 * otherwise repeat lives here once: the initial record of a new call, version bumps, list
 * cursors and limits, the empty-filter short cut, batch limits, the store's typed write failures
 * and the wrapping of a driver's own errors.
 *
 * ```ts
 * const layer = Layer.effect(HandleStore.HandleStore, Effect.sync(() => HandleStoreDriver.makeStore(myDriver)))
 * ```
 *
 * A driver fails with whatever its storage fails with: `makeStore` reports it as a `StoreError`
 * naming the operation (a `StoreError` the driver made itself passes as it is).
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { HandleRecord, HistoryEntry, isResting, isTerminal, type Status } from "./HandleRecord.js"
import * as HandleStore from "./HandleStore.js"
import * as InstanceHold from "./InstanceHold.js"
import { JsonObject } from "./Json.js"

/**
 * How a driver's compare-and-set went: written, lost (the stored version differs, or the row is
 * gone), or refused because another row of the same server holds the task id.
 *
 * @since 0.2.0
 * @category models
 */
export type WriteOutcome = "written" | "version-conflict" | "task-id-taken"

/**
 * One page to read, with the filter already checked: `statuses` is never empty, `limit` is a
 * whole number of at least 2 (the page plus one row that tells whether another page follows).
 *
 * @since 0.2.0
 * @category models
 */
export interface ListQuery {
  /** Every scope when undefined: then list order breaks ties on the scope too. */
  readonly scope: string | undefined
  readonly statuses: ReadonlyArray<Status> | undefined
  readonly serverId: string | undefined
  /** Only rows with a due time (`ListFilter.scheduled`). */
  readonly scheduled?: boolean | undefined
  /** Only rows strictly after this position in list order. */
  readonly after: CursorPosition | undefined
  readonly limit: number
}

/**
 * What a store must do itself. Every effect may fail with the storage's own errors.
 *
 * @since 0.2.0
 * @category models
 */
export interface HandleStoreDriver {
  /** The store's clock; the host's (`Clock`) when absent. */
  readonly now?: Effect.Effect<number> | undefined
  /**
   * See `HandleStore.lockInstance`. When absent (a store only one process can open), the store
   * keeps its own clients apart: one per instance id.
   */
  readonly lockInstance?:
    | ((
        instanceId: string,
      ) => Effect.Effect<void, HandleStore.InstanceIdInUse | HandleStore.StoreError, Scope.Scope>)
    | undefined
  /**
   * Checked before every write: fails while the store cannot prove it holds the instance id it
   * locked (see `InstanceHold.Guard`). Every write passes when absent.
   */
  readonly writable?: ((operation: string) => Effect.Effect<void, HandleStore.StoreError>) | undefined
  /**
   * Inserts `record` (a new call's pending row) unless its scope and key exist; returns the row
   * as stored and whether this call created it. Exactly one concurrent caller creates it.
   */
  readonly insertOrGet: (record: HandleRecord) => Effect.Effect<HandleStore.InsertOrGetResult, unknown>
  readonly get: (scope: string, key: string) => Effect.Effect<Option.Option<HandleRecord>, unknown>
  /**
   * Writes `next` where the stored row of its scope and key is at `next.version - 1` (the
   * version is already bumped), unless another row of the same server holds its task id.
   */
  readonly update: (
    next: HandleRecord,
    options?: HandleStore.UpdateOptions,
  ) => Effect.Effect<WriteOutcome, unknown>
  /**
   * `HandleStore.claimDue`, `limit` at least 1; returns the claimed rows as now stored (lease
   * taken, version bumped: see `bump`).
   */
  readonly claimDue: (
    options: HandleStore.ClaimOptions,
  ) => Effect.Effect<ReadonlyArray<HandleRecord>, unknown>
  /** `HandleStore.spreadDue`, `limit` at least 1. */
  readonly spreadDue: (options: HandleStore.SpreadOptions) => Effect.Effect<number, unknown>
  readonly release: (scope: string, key: string, owner: string) => Effect.Effect<void, unknown>
  readonly renewLease: (options: HandleStore.RenewOptions) => Effect.Effect<boolean, unknown>
  /** `HandleStore.renewLeases`, `rows` never empty. */
  readonly renewLeases: (
    options: HandleStore.RenewManyOptions,
  ) => Effect.Effect<ReadonlyArray<{ readonly scope: string; readonly key: string }>, unknown>
  readonly releaseOwner: (options: HandleStore.ReleaseOwnerOptions) => Effect.Effect<number, unknown>
  /** Up to `query.limit` rows matching the query, in list order (`compareListOrder`). */
  readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<HandleRecord>, unknown>
  /** `HandleStore.deleteSettledBefore`; the report in any order (see `gcReport`). */
  readonly deleteSettledBefore: (
    options: HandleStore.GcOptions,
  ) => Effect.Effect<HandleStore.GcReport, unknown>

  // --- Servers (issues 15 item 7 and 16): see `HandleStore.ServerStore`.
  /** `HandleStore.recordServer`: an upsert by name. */
  readonly recordServer: (server: HandleStore.SeenServer) => Effect.Effect<HandleStore.ServerRecord, unknown>
  /** Every server, ordered by name (code points). */
  readonly listServers: Effect.Effect<ReadonlyArray<HandleStore.ServerRecord>, unknown>
  readonly removeServer: (name: string) => Effect.Effect<boolean, unknown>
  /** `HandleStore.rebind` with `from` and `to` distinct; all rows or none. */
  readonly rebind: (options: HandleStore.RebindOptions) => Effect.Effect<RebindOutcome, unknown>

  // --- Outcome delivery (issue 15): see `HandleStore.claimOutcomes` and the helpers below.
  /** `HandleStore.claimOutcomes`, `limit` at least 1. */
  readonly claimOutcomes: (
    options: HandleStore.ClaimOutcomesOptions,
  ) => Effect.Effect<ReadonlyArray<HandleStore.OutcomeDelivery>, unknown>
  readonly ackOutcome: (options: HandleStore.AckOutcomeOptions) => Effect.Effect<boolean, unknown>
  readonly releaseOutcomes: (options: HandleStore.ReleaseOutcomesOptions) => Effect.Effect<number, unknown>
  /** `HandleStore.listConsumers`, ordered by scope, then name (code points). */
  readonly listConsumers: (
    scope: string | undefined,
  ) => Effect.Effect<ReadonlyArray<HandleStore.ConsumerRecord>, unknown>
  readonly forgetConsumer: (options: HandleStore.ForgetConsumerOptions) => Effect.Effect<number, unknown>
}

/**
 * The most rows one page of `list` holds.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxListLimit = 1000

/**
 * The page size `list` uses for the limit a caller asked: rounded down, then brought into
 * 1..`maxListLimit` (a limit that is not a number is 1).
 *
 * @since 0.2.0
 * @category utils
 */
export const listLimit = (limit: number): number =>
  Math.max(1, Math.min(Math.floor(limit) || 1, maxListLimit))

/** A claim's or spread's batch size: rounded down; none at all for zero, negative or NaN. */
const batchLimit = (limit: number): number => Math.max(Math.floor(limit) || 0, 0)

/**
 * `record` as the next write stores it: `fields` laid over it and the version bumped. Built
 * without re-validating: only versions and lease fields change, from values already checked.
 *
 * @since 0.2.0
 * @category constructors
 */
export const bump = (record: HandleRecord, fields: Partial<HandleRecord> = {}): HandleRecord =>
  new HandleRecord({ ...record, ...fields, version: record.version + 1 }, true)

const validateArguments = Schema.validateEither(Schema.NullOr(JsonObject))

/**
 * The row `insertOrGet` inserts: every adapter starts from the same record, so they differ only
 * in how they keep it. Built without re-validating every field (the validating constructor costs
 * more than a durable commit, on every call's critical path); only `arguments` can hold what the
 * types do not rule out, and it is checked with a validator compiled once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const initialRecord = (
  handle: HandleStore.NewHandle,
): Either.Either<HandleRecord, HandleStore.StoreError> => {
  const checked = validateArguments(handle.arguments)
  if (Either.isLeft(checked)) {
    return Either.left(
      new HandleStore.StoreError({
        operation: "insertOrGet",
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
        polls: 0,
        launches: 1,
        lastProblem: null,
        leaseOwner: handle.owner,
        leaseExpiresAt: handle.now + handle.leaseMs,
        version: 1,
        createdAt: handle.now,
        updatedAt: handle.now,
        settledAt: null,
        history: [
          new HistoryEntry(
            // The instance: lease owners are named `{instanceId}` or `{instanceId}#{role}`.
            {
              at: handle.now,
              from: null,
              to: "pending",
              cause: "call",
              instance: handle.owner.split("#")[0] ?? null,
            },
            true,
          ),
        ],
      },
      true,
    ),
  )
}

/**
 * List order is (createdAt, key); the cursor is the position of the last row of a page.
 *
 * @since 0.1.0
 * @category models
 */
export interface CursorPosition {
  readonly createdAt: number
  readonly key: string
  /** Set in a cursor of a page across every scope (third in list order there). */
  readonly scope?: string | undefined
}

/**
 * @since 0.1.0
 * @category cursors
 */
export const encodeCursor = (position: CursorPosition): string =>
  position.scope === undefined
    ? `${position.createdAt}.${encodeURIComponent(position.key)}`
    : // "/" never appears in an encoded key: it separates the scope of a page across scopes.
      `${position.createdAt}.${encodeURIComponent(position.key)}/${encodeURIComponent(position.scope)}`

/**
 * @since 0.1.0
 * @category cursors
 */
export const decodeCursor = (cursor: string): Option.Option<CursorPosition> => {
  const dot = cursor.indexOf(".")
  const createdAt = Number(cursor.slice(0, dot))
  if (dot <= 0 || !Number.isSafeInteger(createdAt)) return Option.none()
  try {
    const rest = cursor.slice(dot + 1)
    const slash = rest.indexOf("/")
    return Option.some(
      slash < 0
        ? { createdAt, key: decodeURIComponent(rest) }
        : {
            createdAt,
            key: decodeURIComponent(rest.slice(0, slash)),
            scope: decodeURIComponent(rest.slice(slash + 1)),
          },
    )
  } catch {
    return Option.none()
  }
}

/**
 * @since 0.1.0
 * @category cursors
 */
export const compareListOrder = (a: CursorPosition, b: CursorPosition): number =>
  a.createdAt - b.createdAt ||
  compareCodePoints(a.key, b.key) ||
  // Within one scope, both scopes are equal (or a one-scope cursor has none): no effect.
  (a.scope === undefined || b.scope === undefined ? 0 : compareCodePoints(a.scope, b.scope))

/**
 * Keys order by Unicode code point, which is what SQL stores give with a binary collation (UTF-8
 * bytes in SQLite, `COLLATE "C"` in Postgres); JavaScript's `<` compares UTF-16 units instead.
 *
 * @since 0.1.0
 * @category cursors
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

/**
 * Whether `record` belongs on a page of `query` (the in-memory reading of its WHERE clause); the
 * limit and the order are the caller's.
 *
 * @since 0.2.0
 * @category predicates
 */
export const matches =
  (query: ListQuery) =>
  (record: HandleRecord): boolean =>
    (query.scope === undefined || record.scope === query.scope) &&
    (query.statuses === undefined || query.statuses.includes(record.status)) &&
    (query.serverId === undefined || record.serverId === query.serverId) &&
    (query.scheduled !== true || record.nextPollAt !== null) &&
    (query.after === undefined || compareListOrder(record, query.after) > 0)

/**
 * Whether `record` is old enough for `deleteSettledBefore` (the in-memory reading of its WHERE
 * clause); it goes once no known consumer holds it (`isAcknowledged`, `isPastConsumers`).
 *
 * @since 0.2.0
 * @category predicates
 */
export const isCollectable = (record: HandleRecord, options: HandleStore.GcOptions): boolean =>
  (options.scope === undefined || record.scope === options.scope) &&
  isTerminal(record.status) &&
  record.settledAt !== null &&
  record.settledAt < options.settledBefore &&
  // Due: a stray task it holds is still to cancel, and this row is its only record.
  record.nextPollAt === null

const emptyPage: HandleStore.ListPage = { records: [], nextCursor: null }

/**
 * The store a driver makes: the port's operations, each written once on top of the driver's.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeStore = (driver: HandleStoreDriver): HandleStore.HandleStore => {
  const refail = <A>(operation: string, effect: Effect.Effect<A, unknown>) =>
    HandleStore.StoreError.refail(operation)(effect)
  const writable = driver.writable
  const holds = InstanceHold.make()
  /** A write: refused while the store's instance lock is lost. */
  const write = <A>(operation: string, effect: Effect.Effect<A, unknown>) =>
    writable === undefined
      ? refail(operation, effect)
      : Effect.zipRight(writable(operation), refail(operation, effect))

  const update = (record: HandleRecord, options?: HandleStore.UpdateOptions) =>
    Effect.suspend(() => {
      const next = bump(record)
      return Effect.flatMap(
        write("update", driver.update(next, options)),
        (outcome): Effect.Effect<HandleRecord, HandleStore.VersionConflict | HandleStore.TaskIdTaken> =>
          outcome === "written"
            ? Effect.succeed(next)
            : outcome === "task-id-taken"
              ? Effect.fail(
                  new HandleStore.TaskIdTaken({
                    scope: record.scope,
                    key: record.key,
                    serverId: record.serverId,
                  }),
                )
              : Effect.fail(
                  new HandleStore.VersionConflict({
                    scope: record.scope,
                    key: record.key,
                    expectedVersion: record.version,
                  }),
                ),
      )
    })

  const list = (
    filter: HandleStore.ListFilter,
  ): Effect.Effect<HandleStore.ListPage, HandleStore.StoreError> => {
    const after = filter.cursor === undefined ? Option.none() : decodeCursor(filter.cursor)
    if (filter.cursor !== undefined && Option.isNone(after)) {
      return Effect.fail(new HandleStore.StoreError({ operation: "list", message: "invalid cursor" }))
    }
    if (filter.statuses !== undefined && filter.statuses.length === 0) return Effect.succeed(emptyPage)
    const limit = listLimit(filter.limit)
    const allScopes = filter.scope === undefined
    const position = Option.getOrUndefined(after)
    const query: ListQuery = {
      scope: filter.scope,
      statuses: filter.statuses,
      serverId: filter.serverId,
      scheduled: filter.scheduled,
      // Across scopes, a cursor without a scope (from a one-scope page) starts before every scope.
      after: allScopes && position !== undefined ? { ...position, scope: position.scope ?? "" } : position,
      // One row past the page: its presence says whether another page follows.
      limit: limit + 1,
    }
    return Effect.map(refail("list", driver.list(query)), (rows) => {
      const records = rows.length > limit ? rows.slice(0, limit) : rows
      const last = records[records.length - 1]
      const cursorOf = (row: HandleRecord) =>
        encodeCursor(
          allScopes
            ? { createdAt: row.createdAt, key: row.key, scope: row.scope }
            : { createdAt: row.createdAt, key: row.key },
        )
      return { records, nextCursor: rows.length > limit && last ? cursorOf(last) : null }
    })
  }

  return HandleStore.HandleStore.of({
    now: driver.now ?? Clock.currentTimeMillis,
    lockInstance:
      driver.lockInstance ?? ((instanceId) => InstanceHold.once(holds, instanceId, instanceId, Effect.void)),
    insertOrGet: (handle) =>
      Effect.suspend(() => {
        const record = initialRecord(handle)
        return Either.isLeft(record)
          ? Effect.fail(record.left)
          : write("insertOrGet", driver.insertOrGet(record.right))
      }),
    get: (scope, key) => refail("get", driver.get(scope, key)),
    update,
    claimDue: (options) => {
      const limit = batchLimit(options.limit)
      return limit === 0
        ? Effect.succeed([])
        : write("claimDue", driver.claimDue(limit === options.limit ? options : { ...options, limit }))
    },
    spreadDue: (options) => {
      const limit = batchLimit(options.limit)
      return limit === 0
        ? Effect.succeed(0)
        : write("spreadDue", driver.spreadDue(limit === options.limit ? options : { ...options, limit }))
    },
    release: (scope, key, owner) => write("release", driver.release(scope, key, owner)),
    renewLease: (options) => write("renewLease", driver.renewLease(options)),
    renewLeases: (options) =>
      options.rows.length === 0 ? Effect.succeed([]) : write("renewLeases", driver.renewLeases(options)),
    releaseOwner: (options) => write("releaseOwner", driver.releaseOwner(options)),
    list,
    deleteSettledBefore: (options) =>
      Effect.map(write("deleteSettledBefore", driver.deleteSettledBefore(options)), gcReport),
    // Servers (issues 15 item 7 and 16).
    recordServer: (server) => write("recordServer", driver.recordServer(server)),
    listServers: refail("listServers", driver.listServers),
    removeServer: (name) => write("removeServer", driver.removeServer(name)),
    rebind: (options) =>
      options.from === options.to
        ? Effect.succeed(0)
        : Effect.flatMap(write("rebind", driver.rebind(options)), (outcome) =>
            "moved" in outcome
              ? Effect.succeed(outcome.moved)
              : Effect.fail(
                  new HandleStore.TaskIdTaken({
                    scope: outcome.taken.scope,
                    key: outcome.taken.key,
                    serverId: options.to,
                  }),
                ),
          ),
    claimOutcomes: (options) => {
      const limit = batchLimit(options.limit)
      return limit === 0
        ? Effect.succeed([])
        : write(
            "claimOutcomes",
            driver.claimOutcomes(limit === options.limit ? options : { ...options, limit }),
          )
    },
    ackOutcome: (options) => write("ackOutcome", driver.ackOutcome(options)),
    releaseOutcomes: (options) => write("releaseOutcomes", driver.releaseOutcomes(options)),
    listConsumers: (scope) => refail("listConsumers", driver.listConsumers(scope)),
    forgetConsumer: (options) => write("forgetConsumer", driver.forgetConsumer(options)),
  })
}

// ---------------------------------------------------------------------------------------------
// Outcome delivery (issue 15): the rules of `claimOutcomes`, read in memory.
// ---------------------------------------------------------------------------------------------

/**
 * What a store keeps per consumer and row once an outcome was handed out.
 *
 * @since 0.3.0
 * @category models
 */
export interface DeliveryState {
  /** The rest last handed out. */
  readonly rest: HandleStore.Rest
  readonly member: string | null
  /** When the claim runs out (epoch milliseconds); null once released. */
  readonly leaseUntil: number | null
  readonly acked: boolean
  /** How many times `rest` was handed out. */
  readonly deliveries: number
}

/**
 * @since 0.3.0
 * @category constructors
 */
export const restOf = (record: HandleRecord): HandleStore.Rest => ({
  status: record.status,
  launches: record.launches,
})

const sameRest = (a: HandleStore.Rest, b: HandleStore.Rest) =>
  a.status === b.status && a.launches === b.launches

/**
 * Whether `record` is due for a consumer whose state for it is `state` (undefined: never
 * handed out): it rests, and its rest is new, or unacknowledged with no live claim.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isOutcomeDue = (record: HandleRecord, state: DeliveryState | undefined, now: number): boolean =>
  isResting(record.status) &&
  (state === undefined ||
    !sameRest(state.rest, restOf(record)) ||
    (!state.acked && (state.leaseUntil === null || state.leaseUntil <= now)))

/**
 * The state after handing `record` out to `member` (see `isOutcomeDue`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const claimedState = (
  record: HandleRecord,
  state: DeliveryState | undefined,
  options: HandleStore.ClaimOutcomesOptions,
): DeliveryState => {
  const rest = restOf(record)
  return {
    rest,
    member: options.member,
    leaseUntil: options.now + options.leaseMs,
    acked: false,
    deliveries: state !== undefined && sameRest(state.rest, rest) ? state.deliveries + 1 : 1,
  }
}

/**
 * Whether an acknowledgement matches the delivered rest (any, when it names none).
 *
 * @since 0.3.0
 * @category predicates
 */
export const acknowledges = (options: HandleStore.AckOutcomeOptions, state: DeliveryState): boolean =>
  options.rest === undefined || sameRest(options.rest, state.rest)

// ---------------------------------------------------------------------------------------------
// Consumers (issue 28): who GC waits for.
// ---------------------------------------------------------------------------------------------

/** The sightings after one at `now` (a server's, a consumer's): the first kept, the last never back. */
const sighted = (
  stored: { readonly firstSeenAt: number; readonly lastSeenAt: number } | undefined,
  now: number,
) => ({
  firstSeenAt: stored?.firstSeenAt ?? now,
  lastSeenAt: Math.max(stored?.lastSeenAt ?? now, now),
})

/**
 * Whether a consumer whose state for `record` is `state` has acknowledged the rest the row is
 * in now: an acknowledged earlier rest (in doubt, since reissued) does not count.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isAcknowledged = (record: HandleRecord, state: DeliveryState | undefined): boolean =>
  state?.acked === true && sameRest(state.rest, restOf(record))

/**
 * Whether `record` settled before `unacknowledgedBefore`: GC takes it whoever has not
 * acknowledged it (and reports them).
 *
 * @since 0.3.0
 * @category predicates
 */
export const isPastConsumers = (record: HandleRecord, options: HandleStore.GcOptions): boolean =>
  options.unacknowledgedBefore !== undefined &&
  record.settledAt !== null &&
  record.settledAt < options.unacknowledgedBefore

/**
 * The consumer a claim records, given what was stored for it (the in-memory reading of its
 * upsert): the first sighting kept, the last one never moved back.
 *
 * @since 0.3.0
 * @category constructors
 */
export const seenConsumer = (
  stored: HandleStore.ConsumerRecord | undefined,
  options: HandleStore.ClaimOutcomesOptions,
): HandleStore.ConsumerRecord => ({
  consumer: options.consumer,
  scope: options.scope,
  ...sighted(stored, options.now),
})

/**
 * Consumer order: by scope, then name, by code point.
 *
 * @since 0.3.0
 * @category utils
 */
export const compareConsumers = (
  a: { readonly scope: string; readonly consumer: string },
  b: { readonly scope: string; readonly consumer: string },
): number => compareCodePoints(a.scope, b.scope) || compareCodePoints(a.consumer, b.consumer)

/**
 * `report` as the port gives it: consumers by scope, then name, none with nothing to report.
 *
 * @since 0.3.0
 * @category constructors
 */
export const gcReport = (report: HandleStore.GcReport): HandleStore.GcReport => ({
  deleted: report.deleted,
  kept: report.kept,
  unacknowledged: report.unacknowledged.filter((entry) => entry.outcomes > 0).sort(compareConsumers),
})

/**
 * A stored consumer row, decoded: the table is outside input like every row.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ConsumerRow = Schema.Struct({
  consumer: Schema.String,
  scope: Schema.String,
  firstSeenAt: Schema.Number,
  lastSeenAt: Schema.Number,
})

// ---------------------------------------------------------------------------------------------
// Servers (issues 15 item 7 and 16): shared rules of the servers table.
// ---------------------------------------------------------------------------------------------

/**
 * How a driver's rebind went: the rows moved, or the first row whose task id a row of the
 * target server already holds (then nothing moved).
 *
 * @since 0.3.0
 * @category models
 */
export type RebindOutcome =
  | { readonly moved: number }
  | { readonly taken: { readonly scope: string; readonly key: string } }

/**
 * The server `recordServer` stores, given what was stored under its name (the in-memory
 * reading of its upsert): the first sighting kept, the last one never moved back.
 *
 * @since 0.3.0
 * @category constructors
 */
export const seenServer = (
  stored: HandleStore.ServerRecord | undefined,
  seen: HandleStore.SeenServer,
): HandleStore.ServerRecord => ({ name: seen.name, url: seen.url, id: seen.id, ...sighted(stored, seen.now) })

/**
 * A stored server row, decoded: the table is outside input like every row.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ServerRow = Schema.Struct({
  name: Schema.String,
  url: Schema.String,
  id: Schema.String,
  firstSeenAt: Schema.Number,
  lastSeenAt: Schema.Number,
})
