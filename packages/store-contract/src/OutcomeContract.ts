/**
 * The outcome-delivery part of the HandleStore contract (issue 15): `claimOutcomes`,
 * `ackOutcome`, `releaseOutcomes`. Run by `handleStoreContract`.
 *
 * @since 0.3.0
 */
import { describe, expect } from "@effect/vitest"
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { storeTest, T0 } from "./internal/fixture.js"
import { CLAIM, claim, keys, rowIn } from "./internal/outcomes.js"

/**
 * @since 0.3.0
 * @category testing
 */
export const outcomeContract = <E>(layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe("outcome delivery", () => {
    test("hands out the resting rows of the scope, oldest first, each once while claimed", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "done", "completed", { at: T0 })
        yield* rowIn(store, "open", "working", { at: T0 + 1 })
        yield* rowIn(store, "doubt", "in_doubt", { at: T0 + 2 })
        yield* rowIn(store, "gone", "expired", { at: T0 + 3 })
        yield* rowIn(store, "other-scope", "failed", { scope: "tenant-b" })
        const first = yield* claim(store)
        expect(keys(first)).toEqual(["done", "doubt", "gone"])
        expect(first.map((d) => d.deliveries)).toEqual([1, 1, 1])
        expect(first[0]?.record.status).toBe("completed")
        expect(first[0]?.consumer).toBe("app")
        // Claimed: neither the same member nor another gets them again while the claim lives.
        expect(yield* claim(store)).toEqual([])
        expect(yield* claim(store, { member: "m2" })).toEqual([])
      }))

    test("honours the limit", (store) =>
      Effect.gen(function* () {
        for (let i = 0; i < 5; i++) yield* rowIn(store, `k${i}`, "completed", { at: T0 + i })
        expect(keys(yield* claim(store, { limit: 2 }))).toEqual(["k0", "k1"])
        expect(keys(yield* claim(store, { limit: 2 }))).toEqual(["k2", "k3"])
        expect(keys(yield* claim(store, { limit: 0 }))).toEqual([])
      }))

    test("an acknowledged outcome is not handed out again; an unacknowledged one is, once its claim runs out", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "acked", "completed", { at: T0 })
        yield* rowIn(store, "dropped", "failed", { at: T0 + 1 })
        expect(keys(yield* claim(store))).toEqual(["acked", "dropped"])
        expect(yield* store.ackOutcome({ consumer: "app", scope: "tenant-a", key: "acked" })).toBe(true)
        // Acknowledging twice is harmless.
        expect(yield* store.ackOutcome({ consumer: "app", scope: "tenant-a", key: "acked" })).toBe(true)
        expect(yield* claim(store, { now: T0 + 10 + CLAIM - 1 })).toEqual([])
        const again = yield* claim(store, { member: "m2", now: T0 + 10 + CLAIM })
        expect(keys(again)).toEqual(["dropped"])
        expect(again[0]?.deliveries).toBe(2)
      }))

    test("every consumer gets every outcome", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "done", "completed")
        expect(keys(yield* claim(store, { consumer: "app" }))).toEqual(["done"])
        yield* store.ackOutcome({ consumer: "app", scope: "tenant-a", key: "done" })
        expect(keys(yield* claim(store, { consumer: "audit" }))).toEqual(["done"])
        expect(yield* claim(store, { consumer: "app" })).toEqual([])
      }))

    test("a new rest of an acknowledged row is a new outcome", (store) =>
      Effect.gen(function* () {
        const doubt = yield* rowIn(store, "k", "in_doubt")
        expect(keys(yield* claim(store))).toEqual(["k"])
        yield* store.ackOutcome({ consumer: "app", scope: "tenant-a", key: "k" })
        // Reissued (a second launch), then completed.
        yield* store.update(
          new HandleRecord({
            ...doubt,
            status: "completed",
            launches: 2,
            result: { content: [], ok: true },
            settledAt: T0 + 5,
          }),
        )
        const next = yield* claim(store)
        expect(keys(next)).toEqual(["k"])
        expect(next[0]?.record.status).toBe("completed")
        expect(next[0]?.deliveries).toBe(1)
      }))

    test("an acknowledgement naming a rest acknowledges only that rest", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "k", "in_doubt")
        yield* claim(store)
        const other = {
          consumer: "app",
          scope: "tenant-a",
          key: "k",
          rest: { status: "completed", launches: 2 },
        } as const
        expect(yield* store.ackOutcome(other)).toBe(false)
        expect(yield* store.ackOutcome({ ...other, rest: { status: "in_doubt", launches: 1 } })).toBe(true)
        expect(yield* claim(store, { now: T0 + 10 + CLAIM })).toEqual([])
      }))

    test("an acknowledgement of nothing delivered is false and writes nothing", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "k", "completed")
        expect(yield* store.ackOutcome({ consumer: "app", scope: "tenant-a", key: "k" })).toBe(false)
        expect(yield* store.ackOutcome({ consumer: "app", scope: "tenant-a", key: "missing" })).toBe(false)
        expect(keys(yield* claim(store))).toEqual(["k"])
      }))

    test("releaseOutcomes makes a member's unacknowledged claims due at once", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "a", "completed", { at: T0 })
        yield* rowIn(store, "b", "completed", { at: T0 + 1 })
        yield* rowIn(store, "c", "completed", { at: T0 + 2 })
        expect(keys(yield* claim(store, { member: "m1", limit: 2 }))).toEqual(["a", "b"])
        expect(keys(yield* claim(store, { member: "m2", limit: 1 }))).toEqual(["c"])
        yield* store.ackOutcome({ consumer: "app", scope: "tenant-a", key: "a" })
        expect(yield* store.releaseOutcomes({ consumer: "app", member: "m1" })).toBe(1)
        // m2's claim and the acknowledged row stay out.
        const back = yield* claim(store, { member: "m1" })
        expect(keys(back)).toEqual(["b"])
        expect(back[0]?.deliveries).toBe(2)
        expect(yield* store.releaseOutcomes({ consumer: "other", member: "m2" })).toBe(0)
      }))

    test("members claiming at once never get the same outcome", (store) =>
      Effect.gen(function* () {
        for (let i = 0; i < 40; i++)
          yield* rowIn(store, `k${String(i).padStart(2, "0")}`, "completed", { at: T0 + i })
        const batches = yield* Effect.all(
          ["m1", "m2", "m3", "m4", "m1", "m2", "m3", "m4"].map((member) =>
            claim(store, { member, limit: 7 }),
          ),
          { concurrency: "unbounded" },
        )
        const handed = batches.flatMap(keys)
        expect(new Set(handed).size).toBe(handed.length)
        // Whatever the race left over is still there for the next claim.
        const rest = keys(yield* claim(store, { member: "m5" }))
        expect([...handed, ...rest].sort()).toHaveLength(40)
        expect(new Set([...handed, ...rest]).size).toBe(40)
      }))

    test("GC takes a row's deliveries with it: the key used again is a new outcome", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "k", "completed")
        yield* claim(store)
        yield* store.ackOutcome({ consumer: "app", scope: "tenant-a", key: "k" })
        expect((yield* store.deleteSettledBefore({ settledBefore: T0 + 1_000 })).deleted).toBe(1)
        yield* rowIn(store, "k", "failed", { at: T0 + 2_000 })
        const again = yield* claim(store, { now: T0 + 3_000 })
        expect(keys(again)).toEqual(["k"])
        expect(again[0]?.deliveries).toBe(1)
      }))
  })
}
