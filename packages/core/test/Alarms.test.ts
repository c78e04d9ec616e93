import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as Alarms from "../src/internal/engine/alarms.js"

interface Rang {
  readonly id: string
  readonly at: number
}

/** Runs `alarms` in a fiber that records each ring with the clock's time. */
const recording = (alarms: Alarms.Alarms) =>
  Effect.gen(function* () {
    const rang: Array<Rang> = []
    const runner = yield* Effect.fork(
      alarms.run((id) => Effect.map(Clock.currentTimeMillis, (at) => void rang.push({ id, at }))),
    )
    return { rang, runner }
  })

const ids = fc.constantFrom("a", "b", "c", "d", "e")
/** A schedule: each step sets an alarm or clears one. */
const steps = fc.array(
  fc.oneof(fc.record({ set: ids, at: fc.integer({ min: 1, max: 5_000 }) }), fc.record({ clear: ids })),
  { maxLength: 30 },
)

describe("alarms", () => {
  it.effect.prop(
    "under a test clock, every alarm left set rings once, at its time, in time order",
    [steps, fc.integer({ min: 0, max: 4_000 })],
    ([schedule, setLateAt]) =>
      Effect.gen(function* () {
        const alarms = Alarms.make()
        const { rang, runner } = yield* recording(alarms)
        const expected = new Map<string, number>()
        for (const step of schedule) {
          if ("set" in step) {
            alarms.set(step.set, step.at)
            expected.set(step.set, step.at)
          } else {
            alarms.clear(step.clear)
            expected.delete(step.clear)
          }
        }
        // One more, set while the runner already sleeps towards a later alarm (or none).
        yield* TestClock.adjust(setLateAt)
        alarms.set("late", setLateAt + 100)
        expected.set("late", setLateAt + 100)
        yield* TestClock.adjust(6_000 - setLateAt)
        yield* Fiber.interrupt(runner)

        expect(rang.map((r) => r.id).sort()).toEqual([...expected.keys()].sort())
        for (const [id, at] of expected) {
          // Never early, never late: the test clock passes through every alarm's time.
          expect(rang.find((r) => r.id === id)?.at).toBe(at)
        }
        const times = rang.map((r) => r.at)
        expect(times).toEqual([...times].sort((x, y) => x - y))
      }),
    { fastCheck: { numRuns: 60 } },
  )

  it.live(
    "on the live clock, an alarm set sooner wakes a runner that sleeps towards a later one, and none rings early",
    () =>
      Effect.gen(function* () {
        const alarms = Alarms.make()
        const { rang, runner } = yield* recording(alarms)
        const start = yield* Clock.currentTimeMillis
        alarms.set("far", start + 60_000)
        yield* Effect.sleep("20 millis")
        // The runner now sleeps towards "far", a minute away.
        const now = yield* Clock.currentTimeMillis
        alarms.set("sooner", now + 5)
        alarms.set("later", now + 80)
        alarms.set("cleared", now + 10)
        alarms.clear("cleared")
        // Generous for a loaded machine; without the wake nothing would ring for a minute.
        for (let waited = 0; rang.length < 2 && waited < 10_000; waited += 20)
          yield* Effect.sleep("20 millis")
        yield* Fiber.interrupt(runner)
        expect(rang.map((r) => r.id)).toEqual(["sooner", "later"])
        expect(rang[0]?.at).toBeGreaterThanOrEqual(now + 5)
        expect(rang[1]?.at).toBeGreaterThanOrEqual(now + 80)
      }),
  )
  it.effect("an alarm due less than a nanosecond from now rings: the runner's wait is never zero", () =>
    Effect.gen(function* () {
      // Times become fractional (jittered backoffs, a listener's batching); Effect rounds a
      // fractional wait to whole nanoseconds, so this one was a zero wait that the runner took
      // over and over without the clock ever reaching the alarm (the chaos model hung on it).
      const alarms = Alarms.make()
      const { rang, runner } = yield* recording(alarms)
      yield* TestClock.adjust(2683.1)
      const now = yield* Clock.currentTimeMillis
      alarms.set("a", now + 1e-10)
      yield* TestClock.adjust(1)
      yield* Fiber.interrupt(runner)
      expect(rang.map((r) => r.id)).toEqual(["a"])
    }),
  )
})
