/**
 * One live process per instance id on a shared database (see HandleStore.lockInstance).
 *
 * @internal
 */

import * as crypto from "node:crypto"
import type * as SqlConnection from "@effect/sql/SqlConnection"
import type { PgClient } from "@effect/sql-pg/PgClient"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"

/** Instance locks this process holds, by lock key: clients of one process share one. */
const heldLocks = new Map<
  string,
  { count: number; readonly scope: Scope.CloseableScope; readonly connection: SqlConnection.Connection }
>()

/** A 64-bit advisory lock key for an instance id in a schema. */
export const advisoryKey = (schema: string, instanceId: string): string =>
  BigInt.asIntN(
    64,
    BigInt(
      `0x${crypto.createHash("sha256").update(`mcp-handles:${schema}:${instanceId}`).digest("hex").slice(0, 16)}`,
    ),
  ).toString()

/**
 * One live process per instance id, with a session advisory lock on a connection reserved for
 * it: the database lets go the moment that session ends, so a process killed by SIGKILL frees its
 * id at once (its socket closes), and a restart is never kept waiting.
 */
export const lockInstance = (
  sql: PgClient,
  schema: string,
  instanceId: string,
  /** The store's retry of transient failures (a pooled session that died under us). */
  retry: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>,
): Effect.Effect<void, HandleStore.InstanceIdInUse | HandleStore.StoreError, Scope.Scope> => {
  const key = advisoryKey(schema, instanceId)
  const acquire = Effect.gen(function* () {
    const mine = heldLocks.get(key)
    if (mine !== undefined) {
      mine.count++
      return
    }
    // One attempt on a session of its own: a pooled session that died is retried on another.
    const attempt = Effect.gen(function* () {
      const scope = yield* Scope.make()
      return yield* Effect.gen(function* () {
        const connection = yield* Scope.extend(sql.reserve, scope)
        const [row] = yield* connection.executeValues("SELECT pg_try_advisory_lock($1::bigint)", [key])
        if (row?.[0] === true) return { scope, connection }
        return yield* inUse
      }).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
    })
    const inUse = Effect.gen(function* () {
      const holders = yield* sql<{ readonly pid: number; readonly client: string | null }>`
        SELECT l.pid, a.client_addr::text AS client FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted
          AND ((l.classid::bigint << 32) | l.objid::bigint) = ${key}::bigint`.withoutTransform.pipe(
        Effect.orElseSucceed(() => []),
      )
      const holder = holders[0]
      return yield* new HandleStore.InstanceIdInUse({
        instanceId,
        holder:
          holder === undefined
            ? "another database session"
            : `database backend ${holder.pid}${holder.client === null ? "" : ` of ${holder.client}`}`,
      })
    })
    const { scope, connection } = yield* retry(attempt).pipe(
      HandleStore.StoreError.refail(
        "lockInstance",
        (error) => `database error: ${error instanceof Error ? error.message : String(error)}`,
      ),
    )
    heldLocks.set(key, { count: 1, scope, connection })
  })
  const release = Effect.suspend(() => {
    const mine = heldLocks.get(key)
    if (mine === undefined) return Effect.void
    if (--mine.count > 0) return Effect.void
    heldLocks.delete(key)
    // The session goes back to the pool: unlock first, or the pool would keep holding the id.
    return Effect.flatMap(
      Effect.ignore(mine.connection.executeValues("SELECT pg_advisory_unlock($1::bigint)", [key])),
      () => Scope.close(mine.scope, Exit.void),
    )
  })
  return Effect.acquireRelease(acquire, () => release)
}
