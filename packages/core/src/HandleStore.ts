/**
 * The storage port: what the engine asks of a store, and how a store may fail. Adapters
 * (memory, SQLite, Postgres, or a third party's) are usually written on the thinner driver port
 * in `HandleStoreDriver`, and prove themselves with `@mcp-handles/store-contract`.
 *
 * The port is one service in three concerns, each declared in its own module: calls
 * (`CallStore`), servers (`ServerStore`) and the outbox (`OutboxStore`); how a store fails is
 * `StoreError`. Everything they declare is exported from here too.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { CallStore } from "./CallStore.js"
import type { OutboxStore } from "./OutboxStore.js"
import type { ServerStore } from "./ServerStore.js"
import type { InstanceIdInUse, StoreError } from "./StoreError.js"

/**
 * The calls concern (`CallStore`), re-exported.
 *
 * @since 0.4.0
 */
export * from "./CallStore.js"
/**
 * The outbox concern (`OutboxStore`), re-exported.
 *
 * @since 0.4.0
 */
export * from "./OutboxStore.js"
/**
 * The servers concern (`ServerStore`), re-exported.
 *
 * @since 0.4.0
 */
export * from "./ServerStore.js"
/**
 * How a store fails (`StoreError`), re-exported.
 *
 * @since 0.4.0
 */
export * from "./StoreError.js"

/**
 * A process holding an instance id on the store (`lockInstance`), as the store knows it.
 *
 * @since 0.6.0
 * @category models
 */
export interface InstanceRecord {
  readonly instanceId: string
  /**
   * When the store last knew it alive (the store's clock): its last heartbeat, or now for a
   * store that tells a live holder itself (a database session, this process).
   */
  readonly heartbeatAt: number
  /** Its host and process id, where the store keeps them. */
  readonly host: string | null
  readonly pid: number | null
}

/**
 * The whole port: its three concerns, and what belongs to the store as a whole (its clock and
 * its instance lock).
 *
 * @since 0.1.0
 * @category models
 */
export interface HandleStore extends CallStore, ServerStore, OutboxStore {
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
   * The instance ids held on the store now (an operator's fleet view, `mcp-handles ui`), by id;
   * also those that hold no call. A store that keeps heartbeats lists a holder until it is
   * released or judged stale, with its last heartbeat.
   */
  readonly listInstances: Effect.Effect<ReadonlyArray<InstanceRecord>, StoreError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const HandleStore: Context.Tag<HandleStore, HandleStore> = Context.GenericTag<HandleStore>(
  "@mcp-handles/core/HandleStore",
)
