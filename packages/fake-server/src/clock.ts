/**
 * The server's only source of time. Every duration, expiry and timestamp is derived from `now()` at
 * the moment a request is handled (never from timers), so a test that drives a virtual clock (for
 * instance Effect's `TestClock`) gets exactly the same answers on every run.
 */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock moved by hand: handy in tests that do not use Effect. */
export interface ManualClock extends Clock {
  set(ms: number): void
  advance(ms: number): void
}

export const manualClock = (startMs = 0): ManualClock => {
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
