/**
 * One live process per instance id on a shared database (see HandleStore.lockInstance).
 *
 * @internal
 */

import * as crypto from "node:crypto"
import * as os from "node:os"
import type * as SqlConnection from "@effect/sql/SqlConnection"
import type { PgClient } from "@effect/sql-pg/PgClient"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as InstanceHold from "@mcp-handles/core/InstanceHold"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Migrations from "./migrations.js"

/** A 64-bit advisory lock key for an instance id in a schema. */
export const advisoryKey = (schema: string, instanceId: string): string =>
  BigInt.asIntN(
    64,
    BigInt(
      `0x${crypto.createHash("sha256").update(`mcp-handles:${schema}:${instanceId}`).digest("hex").slice(0, 16)}`,
    ),
  ).toString()

/** The instances table of `schema`, quoted. */
const instancesOf = (schema: string) => `"${schema.replaceAll('"', '""')}"."${Migrations.instancesTable}"`

/**
 * The instance ids held now (`HandleStore.listInstances`): those whose advisory lock a session
 * holds. The database vouches for the holder's life, so its heartbeat is the database's now.
 */
export const list = (sql: PgClient, schema: string) =>
  Effect.flatMap(
    sql.unsafe(
      `SELECT i.instance_id AS "instanceId", i.host, i.pid,
        floor(extract(epoch FROM clock_timestamp()) * 1000)::float8 AS "heartbeatAt"
      FROM ${instancesOf(schema)} i
      WHERE EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
        AND ((l.classid::bigint << 32) | l.objid::bigint) = i.lock_key)
      ORDER BY i.instance_id`,
    ).withoutTransform,
    Schema.decodeUnknown(Instances),
  )

const Instances = Schema.Array(
  Schema.Struct({
    instanceId: Schema.String,
    heartbeatAt: Schema.Finite,
    host: Schema.NullOr(Schema.String),
    pid: Schema.NullOr(Schema.Int),
  }),
)

/** Another session holds the lock: its backend (when the database could tell) and a description. */
class HeldElsewhere extends Data.TaggedError("HeldElsewhere")<{
  readonly backend: number | undefined
  readonly holder: string
}> {}

/** The database session holding the lock, and the scope that gives its connection back. */
interface Session {
  readonly scope: Scope.CloseableScope
  readonly connection: SqlConnection.Connection
  readonly backend: number
}

/** The watch runs on real time: sessions die in real time, also under a test's virtual clock. */
const liveClock = Clock.make()

/** Which database the pool reaches, for telling one process's holds apart (never printed). */
const databaseOf = (sql: PgClient) => {
  const { url, host, port, database, path } = sql.config
  return crypto
    .createHash("sha256")
    .update(JSON.stringify([url === undefined ? null : Redacted.value(url), host, port, database, path]))
    .digest("hex")
    .slice(0, 16)
}

const release = (session: Session, key: string) =>
  // The session goes back to the pool: unlock first, or the pool would keep holding the id.
  Effect.flatMap(
    Effect.ignore(session.connection.executeValues("SELECT pg_advisory_unlock($1::bigint)", [key])),
    () => Scope.close(session.scope, Exit.void),
  )

/**
 * One live process per instance id, with a session advisory lock on a connection reserved for
 * it: the database lets go the moment that session ends, so a process killed by SIGKILL frees its
 * id at once (its socket closes), and a restart is never kept waiting.
 *
 * The session can end while this process lives on (a failover, an idle-session killer, a
 * pooler), and then another process may take the id. So it is checked every `checkEvery`: once
 * it is found gone, the id is marked lost in `guard` (the store refuses every write) and taken
 * again on a new session; if another process holds it by then, that is logged as an error and
 * writes stay refused for as long as this store lives.
 */
export const lockInstance = (
  sql: PgClient,
  schema: string,
  instanceId: string,
  /** The store's retry of transient failures (a pooled session that died under us). */
  retry: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>,
  guard: InstanceHold.Guard,
  checkEvery: Duration.Duration,
): Effect.Effect<void, HandleStore.InstanceIdInUse | HandleStore.StoreError, Scope.Scope> => {
  const key = advisoryKey(schema, instanceId)

  /** Who holds the id, as the database tells: its backend pid and client address. */
  const holderOf = sql<{ readonly pid: number; readonly client: string | null }>`
    SELECT l.pid, a.client_addr::text AS client FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted
      AND ((l.classid::bigint << 32) | l.objid::bigint) = ${key}::bigint`.withoutTransform.pipe(
    Effect.map((rows) => rows[0]),
    Effect.orElseSucceed(() => undefined),
  )
  const inUse = Effect.flatMap(holderOf, (holder) =>
    Effect.fail(
      new HeldElsewhere({
        backend: holder?.pid,
        holder:
          holder === undefined
            ? "another database session"
            : `database backend ${holder.pid}${holder.client === null ? "" : ` of ${holder.client}`}`,
      }),
    ),
  )

  // One attempt on a session of its own: a pooled session that died is retried on another.
  const attempt = Effect.gen(function* () {
    const scope = yield* Scope.make()
    return yield* Effect.gen(function* () {
      const connection = yield* Scope.extend(sql.reserve, scope)
      const [row] = yield* connection.executeValues(
        "SELECT pg_try_advisory_lock($1::bigint), pg_backend_pid()",
        [key],
      )
      if (row?.[0] === true) {
        // Named for the fleet view; the lock, not this row, says whether the holder lives.
        yield* connection.executeValues(
          `INSERT INTO ${instancesOf(schema)} (instance_id, lock_key, host, pid) VALUES ($1, $2::bigint, $3, $4)
            ON CONFLICT (instance_id) DO UPDATE SET lock_key = excluded.lock_key, host = excluded.host, pid = excluded.pid`,
          [instanceId, key, os.hostname(), process.pid],
        )
        return { scope, connection, backend: Number(row[1]) } satisfies Session
      }
      return yield* inUse
    }).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
  })

  /** Whether `session` is alive and still holds the lock; an error (a dead socket) says no. */
  const stillHeld = (session: Session) =>
    session.connection
      .executeValues(
        `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
          AND pid = pg_backend_pid() AND ((classid::bigint << 32) | objid::bigint) = $1::bigint)`,
        [key],
      )
      .pipe(
        Effect.map(([row]) => row?.[0] === true),
        Effect.orElseSucceed(() => false),
      )

  const take = Effect.gen(function* () {
    const first = yield* retry(attempt).pipe(
      Effect.catchTag("HeldElsewhere", ({ holder }) =>
        Effect.fail(new HandleStore.InstanceIdInUse({ instanceId, holder })),
      ),
      HandleStore.StoreError.refail(
        "lockInstance",
        (error) => `database error: ${error instanceof Error ? error.message : String(error)}`,
      ),
    )
    const state: { session: Session | undefined; previous: number; takenOver: boolean } = {
      session: first,
      previous: first.backend,
      takenOver: false,
    }
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        guard.lost.delete(instanceId)
        return state.session === undefined ? Effect.void : release(state.session, key)
      }),
    )

    const check = Effect.gen(function* () {
      if (state.takenOver) return
      if (state.session !== undefined) {
        if (yield* stillHeld(state.session)) return
        const gone = state.session
        state.session = undefined
        state.previous = gone.backend
        guard.lost.set(instanceId, "its database session ended")
        yield* Effect.logError(
          `the database session holding instance id ${JSON.stringify(instanceId)} ended; every write is refused until the id is held again`,
        )
        // Unlocked first: a check that failed on a session still alive (a statement error) must
        // not hand the pool a connection that keeps holding the id.
        yield* Effect.ignore(release(gone, key))
      }
      const again = yield* Effect.either(attempt)
      if (Either.isRight(again)) {
        state.session = again.right
        guard.lost.delete(instanceId)
        return yield* Effect.logWarning(
          `instance id ${JSON.stringify(instanceId)} is held again on a new database session; writes resume`,
        )
      }
      const failure = again.left
      // The ended session may still be on its way out (its backend not gone yet): try again later.
      if (!(failure instanceof HeldElsewhere) || failure.backend === state.previous) return
      state.takenOver = true
      guard.lost.set(instanceId, `another process took it over: ${failure.holder}`)
      yield* Effect.logError(
        `instance id ${JSON.stringify(instanceId)} was taken over by ${failure.holder} after this process's database session ended; this store refuses every write`,
      )
    })
    yield* Effect.forkScoped(
      Effect.repeat(check, Schedule.spaced(checkEvery)).pipe(Effect.withClock(liveClock)),
    )
  })
  return InstanceHold.once(InstanceHold.thisProcess, `pg:${databaseOf(sql)}:${key}`, instanceId, take)
}
