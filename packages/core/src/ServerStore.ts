/**
 * The servers part of the store port (issues 15 item 7 and 16): the servers a store's rows point
 * at, shared by every process on the store.
 *
 * @since 0.4.0
 */
import type * as Effect from "effect/Effect"
import type { StoreError, TaskIdTaken } from "./StoreError.js"

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
