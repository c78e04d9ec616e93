/** The test files' shared way of opening a store on a file and beginning a call in it. */
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"

export const T0 = 1_700_000_000_000

/** A new call `key` in scope "s", as `insertOrGet` takes it. */
export const handle = (key: string, serverId = "srv") => ({
  scope: "s",
  key,
  serverId,
  tool: "t",
  arguments: { n: 1 },
  argumentsHash: "h",
  owner: "me",
  leaseMs: 1000,
  now: T0,
})

/** Runs `body` against a store on `filename`, closing it afterwards. */
export const withStore = <A, E>(
  filename: string,
  body: (store: HandleStore) => Effect.Effect<A, E>,
  options: Partial<SqliteStore.Options> = {},
) => Effect.scoped(Effect.flatMap(SqliteStore.make({ filename, ...options }), body))
