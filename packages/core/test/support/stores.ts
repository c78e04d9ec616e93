/**
 * The three stores a promise is proved on, for tests on the TestClock: memory, a SQLite file and a
 * fresh PostgreSQL schema (DATABASE_URL, or a throwaway embedded server). Judged by the host's
 * clock (the TestClock), while each store's own timing (connection timeouts, retry backoff) runs
 * on real time: the TestClock jumps ahead while a query is on the wire, which would fire those
 * timeouts spuriously. Store operations under way are counted so the harness's `flush` can let
 * them finish before time moves on.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import { MemoryStore } from "@mcp-handles/store-memory"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

export type Kind = "memory" | "sqlite" | "postgres"

export const kinds: ReadonlyArray<Kind> = ["memory", "sqlite", "postgres"]

/** Store operations under way now, in every store this module opened. */
export const inFlight = { count: 0 }

const realTime = Clock.make()

type Operation = (...args: Array<unknown>) => Effect.Effect<unknown, unknown, Scope.Scope>

/** Each operation on real time and counted while under way; `now` (the store's clock) as it is. */
const onRealTime = (store: HandleStore.HandleStore): HandleStore.HandleStore => {
  const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.suspend(() => {
      inFlight.count++
      return Effect.withClock(effect, realTime).pipe(Effect.ensuring(Effect.sync(() => inFlight.count--)))
    })
  return Object.fromEntries(
    Object.entries(store).map(([op, member]) => {
      if (typeof member === "function")
        return [op, (...args: Array<unknown>) => counted((member as Operation)(...args))]
      if (op === "now" || !Effect.isEffect(member)) return [op, member]
      return [op, Effect.suspend(() => counted(member as Effect.Effect<unknown, unknown>))]
    }),
  ) as unknown as HandleStore.HandleStore
}

const sqlite = Effect.gen(function* () {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-stores-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
  )
  // Routine writes commit at once: the store's commit delay would run on a real timer.
  return yield* SqliteStore.make({ filename: path.join(dir, "tasks.db"), commitDelay: 0 })
})

const postgres = Effect.flatMap(Layer.build(TestDatabase.layerStore({ clock: "host" })), (context) =>
  Effect.succeed(Context.get(context, HandleStore.HandleStore)),
)

/** A fresh, empty store of `kind` that lives as long as the scope. */
export const open = (kind: Kind): Effect.Effect<HandleStore.HandleStore, never, Scope.Scope> => {
  const opened =
    kind === "memory" ? MemoryStore.make : kind === "sqlite" ? sqlite : (postgres as typeof sqlite)
  return Effect.map(Effect.withClock(Effect.orDie(opened), realTime), onRealTime)
}
