/**
 * The history part of the HandleStore contract (issue 15, item 2): a row keeps its status
 * changes, stored with it, in every store. Run by `handleStoreContract`.
 *
 * @since 0.3.0
 */
import { describe, expect } from "@effect/vitest"
import { HandleRecord, historyLimit, type Status, withTransition } from "@mcp-handles/core/HandleRecord"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { storeTest, T0 } from "./internal/fixture.js"

/**
 * @since 0.3.0
 * @category testing
 */
export const historyContract = <E>(layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  const begin = (store: HandleStore) =>
    store.insertOrGet({
      scope: "tenant-a",
      key: "k",
      serverId: "srv-1",
      tool: "slow_compute",
      arguments: {},
      argumentsHash: "h",
      owner: "instance-1",
      leaseMs: 30_000,
      now: T0,
    })

  const move = (store: HandleStore, record: HandleRecord, status: Status, at: number) =>
    store.update(
      withTransition(record, new HandleRecord({ ...record, status }), {
        at,
        cause: `to-${status}`,
        instance: "instance-2",
      }),
    )

  describe("history", () => {
    test("a new row's history holds its intent; each status change is stored with the row", (store) =>
      Effect.gen(function* () {
        const { record } = yield* begin(store)
        expect(record.history.map((e) => [e.at, e.from, e.to, e.cause, e.instance])).toEqual([
          [T0, null, "pending", "call", "instance-1"],
        ])
        const working = yield* move(store, record, "working", T0 + 1)
        yield* move(store, working, "completed", T0 + 2)
        const stored = Option.getOrThrow(yield* store.get("tenant-a", "k"))
        expect(stored.history.map((e) => [e.at, e.from, e.to, e.cause, e.instance])).toEqual([
          [T0, null, "pending", "call", "instance-1"],
          [T0 + 1, "pending", "working", "to-working", "instance-2"],
          [T0 + 2, "working", "completed", "to-completed", "instance-2"],
        ])
        const listed = yield* store.list({ scope: "tenant-a", limit: 10 })
        expect(listed.records[0]?.history).toHaveLength(3)
      }))

    test("is bounded: the intent and the latest changes are kept", (store) =>
      Effect.gen(function* () {
        let { record } = yield* begin(store)
        for (let i = 1; i <= historyLimit + 10; i++) {
          record = yield* move(store, record, i % 2 === 1 ? "working" : "input_required", T0 + i)
        }
        const stored = Option.getOrThrow(yield* store.get("tenant-a", "k"))
        expect(stored.history).toHaveLength(historyLimit)
        expect(stored.history[0]?.cause).toBe("call")
        expect(stored.history[historyLimit - 1]?.at).toBe(T0 + historyLimit + 10)
        expect(stored.history[1]?.at).toBe(T0 + 12)
      }))
  })
}
