/**
 * Virtual time for the simulated world: an Effect `Clock` whose sleeps wake only when the
 * test advances it, in time order, with the I/O they start (the in-process server, the SQLite
 * writer, Postgres sockets) allowed to finish before the next sleeper wakes.
 *
 * It plays the role of Effect's `TestClock`, which checks at every wake-up that all fibers
 * are suspended by polling with real `setTimeout`s (several milliseconds per wake-up): too slow
 * for thousands of wake-ups per sequence. Like `TestClock`, time starts at 0 and never moves on
 * its own.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

interface Sleeper {
  readonly at: number
  readonly seq: number
  readonly wake: () => void
}

// A class, as Effect's own clocks are: the runtime calls these methods on the clock object itself.
/** @since 0.1.0 */
export class VirtualClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  private now = 0
  private seq = 0
  private sleepers: Array<Sleeper> = []

  unsafeCurrentTimeMillis(): number {
    return this.now
  }
  readonly currentTimeMillis: Effect.Effect<number> = Effect.sync(() => this.now)
  unsafeCurrentTimeNanos(): bigint {
    // Time may stand between two milliseconds (a jittered sleep): BigInt takes only integers.
    return BigInt(Math.round(this.now * 1_000_000))
  }
  readonly currentTimeNanos: Effect.Effect<bigint> = Effect.sync(() => this.unsafeCurrentTimeNanos())

  sleep(duration: Duration.Duration): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      const millis = Duration.toMillis(duration)
      const sleeper: Sleeper = {
        at: this.now + (Number.isFinite(millis) ? Math.max(0, millis) : Number.MAX_SAFE_INTEGER),
        seq: this.seq++,
        wake: () => resume(Effect.void),
      }
      this.sleepers.push(sleeper)
      return Effect.sync(() => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper)
      })
    })
  }

  /**
   * A sleep for promise-based code (the in-process server's latency): woken in the same order as
   * the fibers' sleeps, without going through a runtime whose scheduler may yield to real time.
   */
  sleepPromise(millis: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.sleepers.push({ at: this.now + Math.max(0, millis), seq: this.seq++, wake: resolve })
    })
  }

  /** Sleepers still waiting (for diagnostics). */
  get pending(): number {
    return this.sleepers.length
  }

  /**
   * Moves time to `target`, waking sleepers in time order; `settle` runs after each instant at
   * which something woke (let their I/O finish), and once at the end.
   */
  advanceTo(target: number, settle: Effect.Effect<void>): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      for (;;) {
        let next: Sleeper | undefined
        for (const sleeper of this.sleepers) {
          if (
            sleeper.at <= target &&
            (next === undefined || sleeper.at < next.at || (sleeper.at === next.at && sleeper.seq < next.seq))
          )
            next = sleeper
        }
        if (next === undefined) break
        this.now = Math.max(this.now, next.at)
        const due = this.sleepers.filter((s) => s.at <= this.now).sort((a, b) => a.at - b.at || a.seq - b.seq)
        this.sleepers = this.sleepers.filter((s) => s.at > this.now)
        for (const sleeper of due) sleeper.wake()
        yield* settle
      }
      this.now = Math.max(this.now, target)
      yield* settle
    })
  }

  advance(millis: number, settle: Effect.Effect<void>): Effect.Effect<void> {
    return Effect.suspend(() => this.advanceTo(this.now + millis, settle))
  }
}
