/**
 * The consumers part of the HandleStore contract (issue 28): a consumer is known from its first
 * claim, and GC keeps what a known consumer has not acknowledged, until `unacknowledgedBefore`
 * (then it reports it) or until the consumer is forgotten. Run by `handleStoreContract`.
 *
 * @since 0.3.0
 */
import { describe, expect } from "@effect/vitest"
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { storeTest, T0 } from "./internal/fixture.js"
import { claim, keys, rowIn } from "./internal/outcomes.js"

/** Well past the rows' settling (T0 + 1): the row retention has run out for all of them. */
const LATER = T0 + 1_000_000

const exists = (store: HandleStore, key: string, scope = "tenant-a") =>
  Effect.map(store.get(scope, key), Option.isSome)

const ack = (store: HandleStore, key: string, consumer = "app") =>
  store.ackOutcome({ consumer, scope: "tenant-a", key })

/**
 * @since 0.3.0
 * @category testing
 */
export const consumerContract = <E>(layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe("consumers", () => {
    test("a consumer is known, per scope, from its first claim: first and last sighting", (store) =>
      Effect.gen(function* () {
        expect(yield* store.listConsumers()).toEqual([])
        yield* claim(store, { consumer: "app", now: T0 + 10 })
        yield* claim(store, { consumer: "app", now: T0 + 20 })
        // A claim read on a clock that lags does not move the last sighting back.
        yield* claim(store, { consumer: "app", now: T0 + 15 })
        yield* claim(store, { consumer: "audit", scope: "tenant-b", now: T0 + 30 })
        expect(yield* store.listConsumers()).toEqual([
          { consumer: "app", scope: "tenant-a", firstSeenAt: T0 + 10, lastSeenAt: T0 + 20 },
          { consumer: "audit", scope: "tenant-b", firstSeenAt: T0 + 30, lastSeenAt: T0 + 30 },
        ])
        expect((yield* store.listConsumers("tenant-b")).map((c) => c.consumer)).toEqual(["audit"])
      }))

    test("GC keeps a settled row a known consumer has not acknowledged, past the row retention; after the ack it goes", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "done", "completed")
        expect(keys(yield* claim(store))).toEqual(["done"])
        expect(yield* store.deleteSettledBefore({ settledBefore: LATER })).toEqual({
          deleted: 0,
          kept: 1,
          unacknowledged: [],
        })
        expect(yield* exists(store, "done")).toBe(true)
        yield* ack(store, "done")
        expect(yield* store.deleteSettledBefore({ settledBefore: LATER })).toEqual({
          deleted: 1,
          kept: 0,
          unacknowledged: [],
        })
        expect(yield* exists(store, "done")).toBe(false)
      }))

    test("a known consumer holds the rows it was never handed, and only those of its own scopes", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "handed", "completed", { at: T0 })
        yield* rowIn(store, "not-yet", "failed", { at: T0 + 1 })
        yield* rowIn(store, "elsewhere", "completed", { scope: "tenant-b" })
        expect(keys(yield* claim(store, { limit: 1 }))).toEqual(["handed"])
        yield* ack(store, "handed")
        const report = yield* store.deleteSettledBefore({ settledBefore: LATER })
        expect(report).toEqual({ deleted: 2, kept: 1, unacknowledged: [] })
        expect(yield* exists(store, "not-yet")).toBe(true)
        expect(yield* exists(store, "elsewhere", "tenant-b")).toBe(false)
      }))

    test("an acknowledged earlier rest does not release the row's later one", (store) =>
      Effect.gen(function* () {
        const doubt = yield* rowIn(store, "k", "in_doubt")
        yield* claim(store)
        yield* ack(store, "k")
        // Reissued, then completed: a new outcome the consumer has not seen.
        yield* store.update(
          new HandleRecord({
            ...doubt,
            status: "completed",
            launches: 2,
            result: { content: [] },
            settledAt: T0 + 5,
          }),
        )
        expect((yield* store.deleteSettledBefore({ settledBefore: LATER })).kept).toBe(1)
        expect(yield* exists(store, "k")).toBe(true)
      }))

    test("past unacknowledgedBefore GC takes the row and reports it per consumer", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "a", "completed", { at: T0 })
        yield* rowIn(store, "b", "expired", { at: T0 + 100 })
        yield* claim(store, { consumer: "app" })
        yield* claim(store, { consumer: "audit" })
        yield* ack(store, "a", "app")
        // "a" settled at T0 + 1, "b" at T0 + 101: only "a" is past the consumers' retention.
        const report = yield* store.deleteSettledBefore({
          settledBefore: LATER,
          unacknowledgedBefore: T0 + 50,
        })
        expect(report).toEqual({
          deleted: 1,
          kept: 1,
          unacknowledged: [{ consumer: "audit", scope: "tenant-a", outcomes: 1 }],
        })
        expect(yield* exists(store, "a")).toBe(false)
        expect(yield* exists(store, "b")).toBe(true)
        // The row retention still comes first.
        const early = yield* store.deleteSettledBefore({ settledBefore: T0, unacknowledgedBefore: LATER })
        expect(early.deleted).toBe(0)
        const all = yield* store.deleteSettledBefore({ settledBefore: LATER, unacknowledgedBefore: LATER })
        expect(all).toEqual({
          deleted: 1,
          kept: 0,
          unacknowledged: [
            { consumer: "app", scope: "tenant-a", outcomes: 1 },
            { consumer: "audit", scope: "tenant-a", outcomes: 1 },
          ],
        })
      }))

    test("a forgotten consumer no longer holds rows; claiming again, it is a new consumer", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "k", "completed")
        yield* rowIn(store, "other", "completed", { scope: "tenant-b" })
        yield* claim(store)
        yield* claim(store, { scope: "tenant-b" })
        expect(yield* store.forgetConsumer({ consumer: "nobody" })).toBe(0)
        // Forgotten in tenant-b only: it still holds tenant-a's row.
        expect(yield* store.forgetConsumer({ consumer: "app", scope: "tenant-b" })).toBe(1)
        expect((yield* store.listConsumers()).map((c) => [c.consumer, c.scope])).toEqual([
          ["app", "tenant-a"],
        ])
        expect(yield* store.deleteSettledBefore({ settledBefore: LATER })).toEqual({
          deleted: 1,
          kept: 1,
          unacknowledged: [],
        })
        // Back in tenant-a after being forgotten there: what it was handed went with it.
        expect(yield* store.forgetConsumer({ consumer: "app" })).toBe(1)
        expect(yield* store.listConsumers()).toEqual([])
        const again = yield* claim(store, { now: T0 + 20 })
        expect(keys(again)).toEqual(["k"])
        expect(again[0]?.deliveries).toBe(1)
        yield* store.forgetConsumer({ consumer: "app" })
        expect((yield* store.deleteSettledBefore({ settledBefore: LATER })).deleted).toBe(1)
      }))

    test("a sweep of one scope leaves the others, and reports only its own", (store) =>
      Effect.gen(function* () {
        yield* rowIn(store, "a", "completed")
        yield* rowIn(store, "b", "completed", { scope: "tenant-b" })
        yield* claim(store)
        yield* claim(store, { scope: "tenant-b" })
        const report = yield* store.deleteSettledBefore({
          scope: "tenant-b",
          settledBefore: LATER,
          unacknowledgedBefore: LATER,
        })
        expect(report).toEqual({
          deleted: 1,
          kept: 0,
          unacknowledged: [{ consumer: "app", scope: "tenant-b", outcomes: 1 }],
        })
        expect(yield* exists(store, "a")).toBe(true)
      }))
  })
}
