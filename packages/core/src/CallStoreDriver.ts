/**
 * The calls part of the driver port, and the rules of the calls part every store shares: the
 * initial record of a new call, version bumps, list cursors, order and limits, and the in-memory
 * reading of a page's WHERE clause.
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as CallStore from "./CallStore.js"
import { HandleRecord, HistoryEntry, Status } from "./HandleRecord.js"
import { JsonObject } from "./Json.js"
import { StoreError } from "./StoreError.js"

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
  /**
   * Only rows whose key contains this text, ASCII letters in either case (`foldAscii`); never
   * empty (an empty one is dropped before).
   */
  readonly keyContains?: string | undefined
  /** Only rows strictly after this position in list order. */
  readonly after: CursorPosition | undefined
  readonly limit: number
}

/**
 * The calls part of the driver port. Every effect may fail with the storage's own errors.
 *
 * @since 0.4.0
 * @category models
 */
export interface CallStoreDriver {
  /**
   * Inserts `record` (a new call's pending row) unless its scope and key exist; returns the row
   * as stored and whether this call created it. Exactly one concurrent caller creates it.
   */
  readonly insertOrGet: (record: HandleRecord) => Effect.Effect<CallStore.InsertOrGetResult, unknown>
  readonly get: (scope: string, key: string) => Effect.Effect<Option.Option<HandleRecord>, unknown>
  /**
   * `CallStore.peek`: the row's stamp read without its body. When absent, `get`'s record gives
   * it (correct, but it reads and decodes the whole row).
   */
  readonly peek?:
    | ((scope: string, key: string) => Effect.Effect<Option.Option<CallStore.RowStamp>, unknown>)
    | undefined
  /**
   * Writes `next` where the stored row of its scope and key is at `next.version - 1` (the
   * version is already bumped), unless another row of the same server holds its task id.
   */
  readonly update: (
    next: HandleRecord,
    options?: CallStore.UpdateOptions,
  ) => Effect.Effect<WriteOutcome, unknown>
  /**
   * `CallStore.claimDue`, `limit` at least 1; returns the claimed rows as now stored (lease
   * taken, version bumped: see `bump`).
   */
  readonly claimDue: (options: CallStore.ClaimOptions) => Effect.Effect<ReadonlyArray<HandleRecord>, unknown>
  /** `CallStore.spreadDue`, `limit` at least 1. */
  readonly spreadDue: (options: CallStore.SpreadOptions) => Effect.Effect<number, unknown>
  readonly release: (scope: string, key: string, owner: string) => Effect.Effect<void, unknown>
  readonly renewLease: (options: CallStore.RenewOptions) => Effect.Effect<boolean, unknown>
  /** `CallStore.renewLeases`, `rows` never empty. */
  readonly renewLeases: (
    options: CallStore.RenewManyOptions,
  ) => Effect.Effect<ReadonlyArray<{ readonly scope: string; readonly key: string }>, unknown>
  readonly releaseOwner: (options: CallStore.ReleaseOwnerOptions) => Effect.Effect<number, unknown>
  /** `CallStore.pendingIntents`, `limit` at least 1 (`Claiming.hasPendingIntent` says which rows). */
  readonly pendingIntents: (
    options: CallStore.IntentsOptions,
  ) => Effect.Effect<ReadonlyArray<{ readonly scope: string; readonly key: string }>, unknown>
  /** Up to `query.limit` rows matching the query, in list order (`compareListOrder`). */
  readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<HandleRecord>, unknown>
  /**
   * The rows of each status among those `query` selects; a status with none may be left out.
   * `keyContains` is never empty.
   */
  readonly count: (query: CallStore.CountFilter) => Effect.Effect<Partial<CallStore.StatusCounts>, unknown>
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

/**
 * `record` as the next write stores it: `fields` laid over it and the version bumped. Built
 * without re-validating: only versions and lease fields change, from values already checked.
 *
 * @since 0.2.0
 * @category constructors
 */
export const bump = (record: HandleRecord, fields: Partial<HandleRecord> = {}): HandleRecord =>
  new HandleRecord({ ...record, ...fields, version: record.version + 1 }, true)

/**
 * A row's stamp (`CallStore.peek`) as a store reads it from its own columns, under the record's
 * own rules for those fields: a database is outside input.
 *
 * @since 0.7.0
 * @category schemas
 */
export const RowStamp: Schema.Schema<CallStore.RowStamp> = Schema.Struct({
  version: HandleRecord.fields.version,
  leaseOwner: HandleRecord.fields.leaseOwner,
  leaseExpiresAt: HandleRecord.fields.leaseExpiresAt,
  nextPollAt: HandleRecord.fields.nextPollAt,
})

/**
 * The stamp of a record (`peek` of a store that reads whole rows).
 *
 * @since 0.7.0
 * @category constructors
 */
export const stampOf = (record: HandleRecord): CallStore.RowStamp => ({
  version: record.version,
  leaseOwner: record.leaseOwner,
  leaseExpiresAt: record.leaseExpiresAt,
  nextPollAt: record.nextPollAt,
})

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
export const initialRecord = (handle: CallStore.NewHandle): Either.Either<HandleRecord, StoreError> => {
  const checked = validateArguments(handle.arguments)
  if (Either.isLeft(checked)) {
    return Either.left(
      new StoreError({
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

const CountRows = Schema.Array(
  Schema.Struct({
    status: Status,
    // A 64-bit count comes back from Postgres as a string.
    n: Schema.Union(Schema.NonNegativeInt, Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative())),
  }),
)

/**
 * A SQL store's `SELECT status, count(*) AS n ... GROUP BY status`, decoded.
 *
 * @since 0.6.0
 * @category decoding
 */
export const decodeCounts = (
  rows: unknown,
): Effect.Effect<Partial<CallStore.StatusCounts>, ParseResult.ParseError> =>
  Effect.map(Schema.decodeUnknown(CountRows)(rows), (counted) =>
    Object.fromEntries(counted.map(({ status, n }) => [status, n])),
  )

/**
 * Text with its ASCII capitals made small, and nothing else changed: how `keyContains` compares
 * (SQL's `lower` does the same in SQLite without ICU and under Postgres's "C" collation, so every
 * store finds the same rows, which a Unicode folding would not give).
 *
 * @since 0.6.0
 * @category utils
 */
export const foldAscii = (text: string): string =>
  text.replace(/[A-Z]+/g, (capitals) => capitals.toLowerCase())

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
    (query.keyContains === undefined || foldAscii(record.key).includes(foldAscii(query.keyContains))) &&
    (query.after === undefined || compareListOrder(record, query.after) > 0)
