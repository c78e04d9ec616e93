/**
 * The simulation's own parts, where a bug would pass for the engine's: the virtual clock's time
 * in nanoseconds, and the store wrapper every simulated process goes through.
 */
import { MemoryStore } from "@mcp-handles/store-memory"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import * as Stores from "../src/Stores.js"
import { VirtualClock } from "../src/VirtualClock.js"

describe("the simulation", () => {
  // Found by a long push run on PostgreSQL (seed 2813): a span opened between two milliseconds
  // (after a jittered sleep) died, and with it every sweep of the client that opened it.
  it("the virtual clock tells time in nanoseconds between two milliseconds too", async () => {
    const clock = new VirtualClock()
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* Effect.fork(clock.sleep(Duration.millis(0.5)))
        yield* Effect.yieldNow()
        yield* clock.advance(0.5, Effect.void)
      }),
    )
    expect(clock.unsafeCurrentTimeMillis()).toBe(0.5)
    expect(clock.unsafeCurrentTimeNanos()).toBe(500_000n)
  })

  // listServers is an Effect, not a function: it went around the wrapper, so on the virtual
  // clock instead of real time, uncounted, and answered for a process already dead.
  it("the store wrapper wraps every operation, those that are an Effect included, but not the clock", async () => {
    const store = await Effect.runPromise(Effect.scoped(MemoryStore.make))
    const seen: Array<string> = []
    const wrapped = Stores.wrap(store, (op, operation) => (...args) => {
      seen.push(op)
      return operation(...args)
    })
    await Effect.runPromise(wrapped.listServers)
    await Effect.runPromise(wrapped.listServers)
    await Effect.runPromise(wrapped.now)
    expect(seen).toEqual(["listServers", "listServers"])
  })
})
