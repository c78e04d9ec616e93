/**
 * What every simulated chaos run shares: the simulation a sequence runs in (virtual time, seeded
 * randomness, a scheduler of its own), the failure it dies with, and the store read the checks
 * make.
 *
 * @since 0.1.0
 */
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Random from "effect/Random"
import * as Scheduler from "effect/Scheduler"
import * as Schema from "effect/Schema"
import { seedMathRandom } from "./Determinism.js"
import type { VirtualClock } from "./VirtualClock.js"

/**
 * An invariant did not hold: the message says which, and ends with the trace of the run.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvariantViolation extends Schema.TaggedError<InvariantViolation>()("InvariantViolation", {
  message: Schema.String,
}) {}

/**
 * Dies with an InvariantViolation that ends with the last `lines` of the run's trace.
 *
 * @since 0.2.0
 */
export const violated = (
  trace: ReadonlyArray<string>,
  lines: number,
  message: string,
): Effect.Effect<never> =>
  Effect.die(
    new InvariantViolation({
      message: `${message}\n--- trace (last ${lines} lines) ---\n${trace.slice(-lines).join("\n")}`,
    }),
  )

/**
 * JSON with sorted keys, so stores that reorder keys (jsonb) compare equal.
 *
 * @since 0.1.0
 */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  )

/**
 * Every row of one scope, page by page.
 *
 * @since 0.1.0
 */
export const allRows = (store: HandleStore.HandleStore, scope = "default") =>
  Effect.gen(function* () {
    const rows: Array<HandleRecord.HandleRecord> = []
    let cursor: string | undefined
    for (;;) {
      const page = yield* store.list({ scope, limit: 1000, ...(cursor === undefined ? {} : { cursor }) })
      rows.push(...page.records)
      if (page.nextCursor === null) return rows
      cursor = page.nextCursor
    }
  })

/**
 * Runs a sequence in its simulation: virtual time, seeded randomness, a replayable schedule.
 *
 * @since 0.1.0
 */
export const simulated =
  (clock: VirtualClock, seed: number) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      seedMathRandom(seed)
      // Effect's default scheduler yields to a real setTimeout every 2048 ticks, which makes the
      // interleaving with the in-process server depend on real time. Microtasks only, and a
      // scheduler of its own: one shared across sequences carried queued work (and its place
      // in the event loop) from one sequence into the next, so a shrunk case did not replay alone.
      return Effect.withScheduler(effect, new Scheduler.MixedScheduler(Number.MAX_SAFE_INTEGER))
    }).pipe(
      Effect.withClock(clock),
      Effect.withRandom(Random.make(seed)),
      // The engine logs what it copes with (failed polls, stopped processes); CHAOS_LOG=1 shows it.
      Logger.withMinimumLogLevel(process.env.CHAOS_LOG === "1" ? LogLevel.Debug : LogLevel.None),
    )
