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
  /**
   * Resolves once this clock has moved `ms` on: how the server waits (held answers, latency
   * faults) when it is given no `sleep` of its own. Without it, the server waits real time.
   *
   * @since 0.5.0
   */
  sleep?(ms: number): Promise<void>
}

/**
 * Real time (`Date.now`): the default.
 *
 * @since 0.1.0
 * @category constructors
 */
export const system: ServerClock = { now: () => Date.now() }

/**
 * A clock moved by hand: handy in tests that do not use Effect. Held answers and latency faults
 * wait on its `sleep` (the server's when it is given no other): they resolve once the clock is
 * moved past their deadline.
 *
 * @since 0.1.0
 * @category models
 */
export interface ManualClock extends ServerClock {
  set(ms: number): void
  advance(ms: number): void
  /** Resolves once the clock has been moved `ms` past the time it was called at. @since 0.2.0 */
  sleep(ms: number): Promise<void>
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const manual = (startMs = 0): ManualClock => {
  let current = startMs
  let sleepers: Array<{ readonly at: number; readonly wake: () => void }> = []
  const moved = () => {
    const due = sleepers.filter((sleeper) => sleeper.at <= current)
    sleepers = sleepers.filter((sleeper) => sleeper.at > current)
    for (const sleeper of due) sleeper.wake()
  }
  return {
    now: () => current,
    set: (ms) => {
      current = ms
      moved()
    },
    advance: (ms) => {
      current += ms
      moved()
    },
    sleep: (ms) =>
      ms <= 0
        ? Promise.resolve()
        : new Promise<void>((wake) => {
            sleepers.push({ at: current + ms, wake })
          }),
  }
}
