import { describe, expect, it } from "@effect/vitest"
import * as Polling from "@mcp-handles/core/Polling"
import * as Effect from "effect/Effect"
import fc from "fast-check"

const options = Polling.defaults

describe("Polling", () => {
  it.effect("any server interval, however odd, is clamped into the configured range", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(
          fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, -1, 0.5, 1e12, Number.NaN)),
          (raw) => {
            const ms = Effect.runSync(Polling.interval(options, raw, 0))
            expect(ms).toBeGreaterThanOrEqual(options.minIntervalMs)
            expect(ms).toBeLessThanOrEqual(Math.max(options.maxIntervalMs, options.defaultMaxMs))
            if (Number.isFinite(raw) && raw >= options.minIntervalMs && raw <= options.maxIntervalMs) {
              expect(ms).toBe(Math.ceil(raw))
            }
          },
        ),
      ),
    ),
  )

  it.effect("without a server interval: 1 s, growing by 1.6, capped at 30 s", () =>
    Effect.gen(function* () {
      const delays = yield* Effect.forEach([1, 2, 3, 4, 9, 20, 200], (n) =>
        Polling.interval(options, undefined, n),
      )
      expect(delays.slice(0, 4)).toEqual([1000, 1600, 2560, 4096])
      expect(delays.slice(4)).toEqual([30_000, 30_000, 30_000])
    }),
  )

  it.effect("retry backoff grows, stays under its cap, and never undercuts Retry-After", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 500 }),
          fc.option(fc.nat(100_000), { nil: undefined }),
          (n, after) => {
            const ms = Effect.runSync(Polling.retryDelay(options, n, after))
            expect(ms).toBeGreaterThan(0)
            expect(ms).toBeLessThanOrEqual(Math.max(options.retryMaxMs, after ?? 0))
            if (after !== undefined) expect(ms).toBeGreaterThanOrEqual(after)
          },
        ),
      ),
    ),
  )
})
