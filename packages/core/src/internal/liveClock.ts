/**
 * Effect's own clock, for the few hot paths that wait on a plain timer when nothing else decides
 * time. Racing a fiber against `Effect.sleep` forks two fibers and interrupts one: per poll that
 * cost more than the timer it replaces. Under any other clock (`TestClock` above all) the callers
 * keep Effect's timeouts and sleeps, so tests still move time by hand.
 *
 * @internal
 */
import * as Effect from "effect/Effect"

/** The clock every fiber has unless a test or the application installs another. @internal */
export const liveClock = Effect.runSync(Effect.clock)

/** The longest delay a timer takes (a longer one fires at once). @internal */
export const maxTimerMs = 2 ** 31 - 1

/** Whether `ms` can be waited for on a plain timer. @internal */
export const timerFits = (ms: number): boolean => ms >= 0 && ms <= maxTimerMs
