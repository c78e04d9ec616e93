/**
 * The database's clock, for a store whose instances run on hosts whose clocks may disagree.
 *
 * @internal
 */
import type { PgClient } from "@effect/sql-pg/PgClient"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type { StatementRunner } from "./statement-runner.js"

/** How long a measured offset to the database clock is trusted before it is measured again. */
const clockRefreshMs = 60_000

/**
 * The database's clock, read as the host's plus a measured offset: no round trip per reading.
 * The offset is taken at the midpoint of a query's round trip, so it is off by at most half of
 * one; a failed re-measurement keeps the last offset.
 */
export const make = (
  run: StatementRunner,
  sql: PgClient,
): Effect.Effect<Effect.Effect<number>, HandleStore.StoreError> =>
  Effect.gen(function* () {
    const measure = Effect.gen(function* () {
      const before = Date.now()
      const rows = yield* run(
        "clock",
        sql<{ readonly now: number }>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now`
          .withoutTransform,
      )
      const after = Date.now()
      return { offset: Number(rows[0]?.now ?? after) - (before + after) / 2, at: after }
    })
    let last = yield* measure
    return Effect.suspend(() => {
      const host = Date.now()
      if (host - last.at < clockRefreshMs) return Effect.succeed(Math.round(host + last.offset))
      return measure.pipe(
        Effect.tap((fresh) => Effect.sync(() => (last = fresh))),
        Effect.orElseSucceed(() => ({ ...last, at: host })),
        Effect.map(({ offset }) => Math.round(host + offset)),
      )
    })
  })
