/**
 * The operator's reads of the HandleStore contract (`mcp-handles ui`): text in the key as a list
 * filter, paged in list order in one scope and across every scope, and exact counts by status.
 * Run by `handleStoreContract`.
 *
 * @since 0.6.0
 */
import { describe, expect } from "@effect/vitest"
import type { HandleStore, ListFilter } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import fc from "fast-check"
import { newHandle, storeTest, T0, withState } from "./internal/fixture.js"

/** Every key of `filter`, page by page (`limit` rows a page). */
const allKeys = (store: HandleStore, filter: Omit<ListFilter, "limit" | "cursor">, limit: number) =>
  Effect.gen(function* () {
    const seen: Array<string> = []
    let cursor: string | undefined
    for (;;) {
      const page = yield* store.list({ ...filter, limit, ...(cursor === undefined ? {} : { cursor }) })
      expect(page.records.length).toBeLessThanOrEqual(limit)
      seen.push(...page.records.map((r) => `${r.scope}/${r.key}`))
      if (page.nextCursor === null) return seen
      cursor = page.nextCursor
    }
  })

/**
 * @since 0.6.0
 * @category testing
 */
export const searchContract = <E>(layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe("list by text in the key", () => {
    test("matches ASCII letters in either case, everything else as itself (é, %, _)", (store) =>
      Effect.gen(function* () {
        for (const key of ["order-100", "ORDER-200", "a%b", "a_b", "axb", "x-order", "é-order", "É-order"]) {
          yield* store.insertOrGet(newHandle({ key }))
        }
        yield* store.insertOrGet(newHandle({ scope: "tenant-b", key: "order-9" }))
        const keys = (filter: Omit<ListFilter, "limit">) =>
          Effect.map(store.list({ ...filter, limit: 100 }), (page) => page.records.map((r) => r.key))
        expect(yield* keys({ scope: "tenant-a", keyContains: "Order" })).toEqual([
          "ORDER-200",
          "order-100",
          "x-order",
          "É-order",
          "é-order",
        ])
        expect(yield* keys({ keyContains: "order-" })).toEqual(["ORDER-200", "order-100", "order-9"])
        expect(yield* keys({ scope: "tenant-a", keyContains: "%" })).toEqual(["a%b"])
        expect(yield* keys({ scope: "tenant-a", keyContains: "_" })).toEqual(["a_b"])
        expect(yield* keys({ scope: "tenant-a", keyContains: "é-" })).toEqual(["é-order"])
        expect(yield* keys({ scope: "tenant-a", keyContains: "" })).toHaveLength(8)
      }))

    test("combines with status and server, and pages each match once, in one scope and in all", (store) =>
      Effect.gen(function* () {
        for (let i = 0; i < 30; i++) {
          const { record } = yield* store.insertOrGet(
            newHandle({
              scope: i % 3 === 0 ? "tenant-b" : "tenant-a",
              key: `${i % 2 === 0 ? "even" : "odd"}-${String(i).padStart(2, "0")}`,
              serverId: i % 5 === 0 ? "srv-2" : "srv-1",
              now: T0 + Math.floor(i / 4),
            }),
          )
          if (i % 4 === 0) yield* store.update(withState(record, { status: "failed", settledAt: T0 }))
        }
        const expected = (take: (i: number) => boolean, scope?: string) =>
          Array.from({ length: 30 }, (_, i) => i)
            .filter(
              (i) => (scope === undefined || (i % 3 === 0 ? "tenant-b" : "tenant-a") === scope) && take(i),
            )
            .map(
              (i) =>
                `${i % 3 === 0 ? "tenant-b" : "tenant-a"}/${i % 2 === 0 ? "even" : "odd"}-${String(i).padStart(2, "0")}`,
            )
        // Across scopes, a page ties on creation time and key, then scope: the same as sorting
        // (creation time is i/4, and keys sort as i does within it).
        expect(yield* allKeys(store, { keyContains: "even" }, 4)).toEqual(expected((i) => i % 2 === 0))
        expect(yield* allKeys(store, { scope: "tenant-a", keyContains: "odd" }, 3)).toEqual(
          expected((i) => i % 2 === 1, "tenant-a"),
        )
        expect(
          yield* allKeys(store, { keyContains: "even", statuses: ["failed"], serverId: "srv-1" }, 2),
        ).toEqual(expected((i) => i % 2 === 0 && i % 4 === 0 && i % 5 !== 0))
      }))

    test("finds what a scan of every row finds, for any keys and text", (store) =>
      Effect.gen(function* () {
        const alphabet = fc.constantFrom("a", "A", "b", "%", "_", "é", "É", "😀", "-")
        const [keys = []] = fc.sample(
          fc.uniqueArray(fc.string({ unit: alphabet, minLength: 1, maxLength: 5 }), { maxLength: 40 }),
          { numRuns: 1, seed: 33 },
        )
        for (const key of keys) yield* store.insertOrGet(newHandle({ key }))
        const needles = fc.sample(fc.string({ unit: alphabet, minLength: 1, maxLength: 2 }), {
          numRuns: 25,
          seed: 34,
        })
        // The rule: ASCII capitals match small letters, nothing else is folded (É is not é).
        const fold = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase())
        for (const needle of needles) {
          const found = yield* allKeys(store, { scope: "tenant-a", keyContains: needle }, 7)
          expect(new Set(found)).toEqual(
            new Set(keys.filter((k) => fold(k).includes(fold(needle))).map((k) => `tenant-a/${k}`)),
          )
          const counted = yield* store.count({ scope: "tenant-a", keyContains: needle })
          expect(counted.pending).toBe(found.length)
        }
      }))
  })

  describe("count", () => {
    test("counts every row of each status exactly, by scope, server and text in the key", (store) =>
      Effect.gen(function* () {
        const statuses = ["completed", "failed", "in_doubt"] as const
        for (let i = 0; i < 60; i++) {
          const { record } = yield* store.insertOrGet(
            newHandle({
              scope: i < 45 ? "tenant-a" : "tenant-b",
              key: `k-${i}`,
              serverId: i % 2 === 0 ? "srv-1" : "srv-2",
            }),
          )
          const status = statuses[i % 4]
          if (status !== undefined) yield* store.update(withState(record, { status, settledAt: T0 }))
        }
        const zero = {
          pending: 0,
          working: 0,
          input_required: 0,
          completed: 0,
          failed: 0,
          cancelled: 0,
          expired: 0,
          in_doubt: 0,
        }
        expect(yield* store.count({})).toEqual({
          ...zero,
          completed: 15,
          failed: 15,
          in_doubt: 15,
          pending: 15,
        })
        expect(yield* store.count({ scope: "tenant-a" })).toEqual({
          ...zero,
          completed: 12,
          failed: 11,
          in_doubt: 11,
          pending: 11,
        })
        // Even i: srv-1, and i % 4 is 0 or 2 (completed, in_doubt).
        expect(yield* store.count({ serverId: "srv-1" })).toEqual({ ...zero, completed: 15, in_doubt: 15 })
        expect(yield* store.count({ scope: "tenant-b", keyContains: "k-5" })).toEqual({
          ...zero,
          completed: 2,
          failed: 2,
          in_doubt: 3,
          pending: 3,
        })
        expect(yield* store.count({ scope: "nobody" })).toEqual(zero)
      }))
  })
}
