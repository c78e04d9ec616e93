/**
 * The servers part of the driver port (issues 15 item 7 and 16), and the shared rules of the
 * servers table.
 *
 * @since 0.4.0
 */
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { sighted } from "./internal/sighting.js"
import type * as ServerStore from "./ServerStore.js"

/**
 * The servers part of the driver port. Every effect may fail with the storage's own errors.
 *
 * @since 0.4.0
 * @category models
 */
export interface ServerStoreDriver {
  /** `ServerStore.recordServer`: an upsert by name. */
  readonly recordServer: (server: ServerStore.SeenServer) => Effect.Effect<ServerStore.ServerRecord, unknown>
  /** Every server, ordered by name (code points). */
  readonly listServers: Effect.Effect<ReadonlyArray<ServerStore.ServerRecord>, unknown>
  readonly removeServer: (name: string) => Effect.Effect<boolean, unknown>
  /** `ServerStore.rebind` with `from` and `to` distinct; all rows or none. */
  readonly rebind: (options: ServerStore.RebindOptions) => Effect.Effect<RebindOutcome, unknown>
}

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
  stored: ServerStore.ServerRecord | undefined,
  seen: ServerStore.SeenServer,
): ServerStore.ServerRecord => ({ name: seen.name, url: seen.url, id: seen.id, ...sighted(stored, seen.now) })

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
