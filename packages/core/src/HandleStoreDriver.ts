/**
 * The driver port: the thin part of a store that only its own storage can do, and the one
 * constructor (`makeStore`) that turns a driver into a `HandleStore`. What every store would
 * otherwise repeat lives here once: the initial record of a new call, version bumps, list
 * cursors and limits, the empty-filter short cut, batch limits, the store's typed write failures
 * and the wrapping of a driver's own errors. The driver port and the shared rules are declared
 * by part, in `CallStoreDriver`, `ServerStoreDriver` and `OutboxStoreDriver`, and exported from
 * here too.
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
import type * as Scope from "effect/Scope"
import * as CallStoreDriver from "./CallStoreDriver.js"
import { type HandleRecord, Status } from "./HandleRecord.js"
import * as HandleStore from "./HandleStore.js"
import * as InstanceHold from "./InstanceHold.js"
import * as OutboxStoreDriver from "./OutboxStoreDriver.js"
import type * as ServerStoreDriver from "./ServerStoreDriver.js"

/**
 * The calls part of the driver port (`CallStoreDriver`), re-exported.
 *
 * @since 0.4.0
 */
export * from "./CallStoreDriver.js"
/**
 * The outbox part of the driver port (`OutboxStoreDriver`), re-exported.
 *
 * @since 0.4.0
 */
export * from "./OutboxStoreDriver.js"
/**
 * The servers part of the driver port (`ServerStoreDriver`), re-exported.
 *
 * @since 0.4.0
 */
export * from "./ServerStoreDriver.js"

/**
 * What a store must do itself: the three parts of the port (`CallStoreDriver`,
 * `ServerStoreDriver`, `OutboxStoreDriver`), and what belongs to the store as a whole. Every
 * effect may fail with the storage's own errors.
 *
 * @since 0.2.0
 * @category models
 */
export interface HandleStoreDriver
  extends CallStoreDriver.CallStoreDriver,
    ServerStoreDriver.ServerStoreDriver,
    OutboxStoreDriver.OutboxStoreDriver {
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
   * See `HandleStore.listInstances`. When absent, the ids this store's own clients hold (the
   * default `lockInstance`'s), alive now.
   */
  readonly listInstances?: Effect.Effect<ReadonlyArray<HandleStore.InstanceRecord>, unknown> | undefined
  /**
   * Checked before every write: fails while the store cannot prove it holds the instance id it
   * locked (see `InstanceHold.Guard`). Every write passes when absent.
   */
  readonly writable?: ((operation: string) => Effect.Effect<void, HandleStore.StoreError>) | undefined
}

/** A claim's or spread's batch size: rounded down; none at all for zero, negative or NaN. */
const batchLimit = (limit: number): number => Math.max(Math.floor(limit) || 0, 0)

const emptyPage: HandleStore.ListPage = { records: [], nextCursor: null }

/** An empty text filter selects every row: no driver sees it. */
const textFilter = (text: string | undefined): string | undefined => (text === "" ? undefined : text)

const noCounts = Object.fromEntries(Status.literals.map((status) => [status, 0])) as HandleStore.StatusCounts

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
  const peek = driver.peek
  const holds = InstanceHold.make()
  /** A write: refused while the store's instance lock is lost. */
  const write = <A>(operation: string, effect: Effect.Effect<A, unknown>) =>
    writable === undefined
      ? refail(operation, effect)
      : Effect.zipRight(writable(operation), refail(operation, effect))

  const update = (record: HandleRecord, options?: HandleStore.UpdateOptions) =>
    Effect.suspend(() => {
      const next = CallStoreDriver.bump(record)
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
    const after = filter.cursor === undefined ? Option.none() : CallStoreDriver.decodeCursor(filter.cursor)
    if (filter.cursor !== undefined && Option.isNone(after)) {
      return Effect.fail(new HandleStore.StoreError({ operation: "list", message: "invalid cursor" }))
    }
    if (filter.statuses !== undefined && filter.statuses.length === 0) return Effect.succeed(emptyPage)
    const limit = CallStoreDriver.listLimit(filter.limit)
    const allScopes = filter.scope === undefined
    const position = Option.getOrUndefined(after)
    const query: CallStoreDriver.ListQuery = {
      scope: filter.scope,
      statuses: filter.statuses,
      serverId: filter.serverId,
      scheduled: filter.scheduled,
      keyContains: textFilter(filter.keyContains),
      // Across scopes, a cursor without a scope (from a one-scope page) starts before every scope.
      after: allScopes && position !== undefined ? { ...position, scope: position.scope ?? "" } : position,
      // One row past the page: its presence says whether another page follows.
      limit: limit + 1,
    }
    return Effect.map(refail("list", driver.list(query)), (rows) => {
      const records = rows.length > limit ? rows.slice(0, limit) : rows
      const last = records[records.length - 1]
      const cursorOf = (row: HandleRecord) =>
        CallStoreDriver.encodeCursor(
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
    listInstances:
      driver.listInstances === undefined
        ? Effect.map(driver.now ?? Clock.currentTimeMillis, (now) =>
            [...holds.keys]
              .sort(CallStoreDriver.compareCodePoints)
              .map((instanceId) => ({ instanceId, heartbeatAt: now, host: null, pid: null })),
          )
        : refail("listInstances", driver.listInstances),
    insertOrGet: (handle) =>
      Effect.suspend(() => {
        const record = CallStoreDriver.initialRecord(handle)
        return Either.isLeft(record)
          ? Effect.fail(record.left)
          : write("insertOrGet", driver.insertOrGet(record.right))
      }),
    get: (scope, key) => refail("get", driver.get(scope, key)),
    peek:
      peek === undefined
        ? (scope, key) =>
            refail("peek", Effect.map(driver.get(scope, key), Option.map(CallStoreDriver.stampOf)))
        : (scope, key) => refail("peek", peek(scope, key)),
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
    pendingIntents: (options) => {
      const limit = batchLimit(options.limit)
      return limit === 0
        ? Effect.succeed([])
        : refail(
            "pendingIntents",
            driver.pendingIntents(limit === options.limit ? options : { ...options, limit }),
          )
    },
    list,
    count: (filter) =>
      Effect.map(
        refail(
          "count",
          driver.count({
            scope: filter.scope,
            serverId: filter.serverId,
            keyContains: textFilter(filter.keyContains),
          }),
        ),
        (found): HandleStore.StatusCounts => ({ ...noCounts, ...found }),
      ),
    deleteSettledBefore: (options) =>
      Effect.map(
        write("deleteSettledBefore", driver.deleteSettledBefore(options)),
        OutboxStoreDriver.gcReport,
      ),
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
