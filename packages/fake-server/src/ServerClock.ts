/**
 * The server's only source of time. Every duration, expiry and timestamp is derived from `now()` at
 * the moment a request is handled (never from timers), so a test that drives a virtual clock (for
 * instance Effect's `TestClock`) gets exactly the same answers on every run.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category models
 */
export interface ServerClock {
  now(): number
}

/**
 * Real time (`Date.now`): the default.
 *
 * @since 0.1.0
 * @category constructors
 */
export const system: ServerClock = { now: () => Date.now() }

/**
 * A clock moved by hand: handy in tests that do not use Effect.
 *
 * @since 0.1.0
 * @category models
 */
export interface ManualClock extends ServerClock {
  set(ms: number): void
  advance(ms: number): void
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const manual = (startMs = 0): ManualClock => {
  let current = startMs
  return {
    now: () => current,
    set: (ms) => {
      current = ms
    },
    advance: (ms) => {
      current += ms
    },
  }
}
