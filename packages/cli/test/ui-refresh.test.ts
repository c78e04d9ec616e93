/**
 * The ui's one refresh (issue 33): tabs watching one view share one read a tick, a view nobody
 * watches any more is not read, and a watcher sees a view's text at once and then its changes.
 * Virtual time (TestClock): nothing here depends on the machine's speed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Refresh from "../src/ui/Refresh.js"

/** A view whose text is its read count: each read is seen. */
const counted = () => {
  const state = { reads: 0 }
  return { state, render: Effect.sync(() => `read ${++state.reads}`) }
}

/** Lets the refresh loop and the watchers run, one virtual second at a time. */
const seconds = (n: number) =>
  Effect.forEach(
    Array.from({ length: n }),
    () => Effect.zipRight(TestClock.adjust("1 second"), Effect.yieldNow()),
    {
      discard: true,
    },
  )

describe("ui Refresh", () => {
  it.scoped("three tabs on one view cost one read a tick, and each gets every change", () =>
    Effect.gen(function* () {
      const refresh = yield* Refresh.make("1 second")
      const calls = counted()
      const other = counted()
      const tabs = yield* Effect.forEach([1, 2, 3], () =>
        Effect.forkScoped(Stream.runCollect(Stream.take(refresh.watch("/calls/events", calls.render), 4))),
      )
      const fleet = yield* Effect.forkScoped(
        Stream.runCollect(Stream.take(refresh.watch("/fleet/events", other.render), 4)),
      )
      yield* Effect.yieldNow()
      yield* seconds(3)
      const seen = yield* Effect.forEach(tabs, Fiber.join)
      for (const texts of seen)
        expect(Chunk.toReadonlyArray(texts)).toEqual(["read 1", "read 2", "read 3", "read 4"])
      expect(Chunk.toReadonlyArray(yield* Fiber.join(fleet))).toEqual([
        "read 1",
        "read 2",
        "read 3",
        "read 4",
      ])
      // One read when the view opened, then one a tick: not one a tab.
      expect(calls.state.reads).toBe(4)
      expect(other.state.reads).toBe(4)
    }),
  )

  it.scoped("a view is read only while a tab watches it, and a text that did not change is not sent", () =>
    Effect.gen(function* () {
      const refresh = yield* Refresh.make("1 second")
      const state = { reads: 0 }
      const same = Effect.sync(() => {
        state.reads++
        return "unchanged"
      })
      const tab = yield* Effect.forkScoped(Stream.runCollect(refresh.watch("/call/events?key=a", same)))
      yield* Effect.yieldNow()
      yield* seconds(2)
      expect(state.reads).toBe(3)
      yield* Fiber.interrupt(tab)
      yield* seconds(5)
      expect(state.reads).toBe(3)
      // A tab opened later starts the view again, with its text at once.
      const later = yield* refresh.watch("/call/events?key=a", same).pipe(Stream.take(1), Stream.runCollect)
      expect(Chunk.toReadonlyArray(later)).toEqual(["unchanged"])
    }),
  )
})
