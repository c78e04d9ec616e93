/**
 * The statement runner every part of the store is handed: it retries what a lost connection
 * interrupted, turns database failures into `StoreError`, and provides the client.
 *
 * @internal
 */
import type * as Sql from "@effect/sql/SqlClient"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import type * as Effect from "effect/Effect"

/** Runs one statement (or a few) as `operation`; typed store failures pass through untouched. */
export type StatementRunner = <A, E>(
  operation: string,
  effect: Effect.Effect<A, E, Sql.SqlClient>,
) => Effect.Effect<A, Extract<E, HandleStore.StoreFailure> | HandleStore.StoreError>
