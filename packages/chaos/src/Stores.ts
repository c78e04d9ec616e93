/**
 * The three stores under test, each fresh for one sequence: memory, SQLite (a new file in a
 * temporary directory) and PostgreSQL (a new schema on `DATABASE_URL`, or on a throwaway embedded
 * server when it is not set; dropped afterwards).
 *
 * @since 0.1.0
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import { MemoryStore } from "@mcp-handles/store-memory"
import { PgStore } from "@mcp-handles/store-postgres"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"

/**
 * @since 0.1.0
 * @category models
 */
export type Kind = "memory" | "sqlite" | "postgres"

/**
 * @since 0.1.0
 * @category constants
 */
export const kinds: ReadonlyArray<Kind> = ["memory", "sqlite", "postgres"]

let schemaCounter = 0

const liveClock = Clock.make()

/**
 * The store's own timing (connection timeouts, retry backoff) runs on real time: the clients
 * run on a virtual clock that jumps ahead while a query is on the wire, which would fire those
 * timeouts spuriously. Time that matters to the model arrives in the arguments (`now`).
 */
const onRealTime = (store: HandleStore.HandleStore, inFlight: InFlight): HandleStore.HandleStore =>
  wrap(store, (op, operation) => (...args) => {
    const run = Effect.suspend(() => {
      inFlight.count++
      return Effect.withClock(operation(...args), liveClock).pipe(
        Effect.ensuring(Effect.sync(() => inFlight.count--)),
      )
    })
    return op === "lockInstance" ? countingRelease(run, inFlight) : run
  })

/**
 * An operation of the store, as `wrap` sees it.
 *
 * @since 0.2.0
 * @category models
 */
export type Operation = (...args: Array<unknown>) => Effect.Effect<unknown, unknown, never>

/**
 * The store with each of its operations replaced by `around(name, operation)`, those that are an
 * Effect rather than a function (`listServers`) included, as operations of no arguments. `now`,
 * the store's clock, passes through as it is.
 *
 * @since 0.2.0
 */
export const wrap = (
  store: HandleStore.HandleStore,
  around: (
    op: keyof HandleStore.HandleStore,
    operation: Operation,
  ) => (...args: Array<unknown>) => Effect.Effect<unknown, unknown, Scope.Scope>,
): HandleStore.HandleStore =>
  Object.fromEntries(
    Object.entries(store).map(([op, member]) => {
      const name = op as keyof HandleStore.HandleStore
      if (typeof member === "function") return [op, around(name, member as Operation)]
      if (name === "now" || !Effect.isEffect(member)) return [op, member]
      // Run like the others: on real time, counted in flight, and never for a dead process.
      const operation: Operation = () => member as Effect.Effect<unknown, unknown, never>
      return [op, Effect.suspend(() => around(name, operation)())]
    }),
  ) as unknown as HandleStore.HandleStore

/**
 * The instance lock lets go in a finalizer of the client's scope (real I/O on Postgres): counted
 * as in flight too, so that closing a client waits for it. Finalizers run last-added first: the
 * count goes up before the lock's own release and down after it.
 */
const countingRelease = <A, E, R>(acquire: Effect.Effect<A, E, R>, inFlight: InFlight) =>
  Effect.gen(function* () {
    let releasing = false
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (releasing) inFlight.count--
      }),
    )
    const held = yield* acquire
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        releasing = true
        inFlight.count++
      }),
    )
    return held
  })

/**
 * Store operations under way: the simulation lets them finish before time moves on.
 *
 * @since 0.1.0
 * @category models
 */
export interface InFlight {
  count: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface OpenedStore {
  readonly store: HandleStore.HandleStore
  readonly inFlight: InFlight
}

/**
 * A fresh, empty store that lives as long as the scope. Failing to open one is a defect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (kind: Kind): Effect.Effect<OpenedStore, never, Scope.Scope> =>
  Effect.map(Effect.withClock(fresh(kind), liveClock), (store) => {
    const inFlight: InFlight = { count: 0 }
    return { store: onRealTime(store, inFlight), inFlight }
  })

const fresh = (kind: Kind): Effect.Effect<HandleStore.HandleStore, never, Scope.Scope> => {
  switch (kind) {
    case "memory":
      return MemoryStore.make
    case "sqlite":
      return Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-handles-chaos-"))),
          (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true })),
        )
        // NORMAL survives a process crash (what is simulated here); FULL only adds power-loss safety.
        return yield* SqliteStore.make({ filename: join(dir, "handles.db"), synchronous: "NORMAL" })
      }).pipe(Effect.orDie)
    case "postgres":
      return Effect.gen(function* () {
        // DATABASE_URL when set, otherwise a throwaway embedded server (one per process).
        const url = yield* TestDatabase.databaseUrl
        const schema = `chaos_${process.pid}_${Date.now().toString(36)}_${(schemaCounter++).toString(36)}`
        const applicationName = `mcp-handles-${schema}`
        const client = yield* PgClient.make({
          url: Redacted.make(url),
          // Each instance id a sequence starts holds a pooled connection for its instance lock
          // (a crash in the simulation never ends that session): room for all of them.
          maxConnections: 32,
          applicationName,
        }).pipe(Effect.provide(Reactivity.layer))
        yield* Effect.acquireRelease(client`CREATE SCHEMA ${client(schema)}`, () =>
          Effect.ignore(client`DROP SCHEMA IF EXISTS ${client(schema)} CASCADE`),
        )
        // A crashed instance's lock session stays checked out of the pool, which closing the pool
        // does not end (a real crash would close its socket): the sequence's end ends every
        // session it opened, or each sequence leaks a few and a long run exhausts the server.
        yield* Effect.addFinalizer(() =>
          Effect.ignore(
            client`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${applicationName} AND pid <> pg_backend_pid()`,
          ),
        )
        return yield* PgStore.make({ schema, clock: "host" }).pipe(
          Effect.provideService(PgClient.PgClient, client),
        )
      }).pipe(Effect.orDie)
  }
}
