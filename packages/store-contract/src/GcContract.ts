/**
 * The GC part of the HandleStore contract: which rows `deleteSettledBefore` takes, consumers
 * aside (see `ConsumerContract`). Run by `handleStoreContract`.
 *
 * @since 0.4.0
 */
import { describe, expect } from "@effect/vitest"
import type { Status } from "@mcp-handles/core/HandleRecord"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { newHandle, storeTest, T0, withState } from "./internal/fixture.js"

/**
 * @since 0.4.0
 * @category testing
 */
export const gcContract = <E>(layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe("deleteSettledBefore", () => {
    test("deletes only terminal rows settled before the cutoff, within the scope asked", (store) =>
      Effect.gen(function* () {
        const settle = (scope: string, key: string, status: Status, settledAt: number | null) =>
          Effect.flatMap(store.insertOrGet(newHandle({ scope, key })), ({ record }) =>
            // As the transition leaves a row that rests: nothing due.
            store.update(withState(record, { status, settledAt, nextPollAt: null })),
          )
        yield* settle("tenant-a", "old-done", "completed", T0)
        yield* settle("tenant-a", "old-expired", "expired", T0 + 1)
        yield* settle("tenant-a", "new-done", "failed", T0 + 10_000)
        yield* settle("tenant-a", "doubt", "in_doubt", null)
        yield* settle("tenant-a", "open", "working", null)
        yield* settle("tenant-b", "other-old", "cancelled", T0)
        // A settled row with a due time still has a stray task to cancel: its only record.
        yield* Effect.flatMap(
          store.insertOrGet(newHandle({ scope: "tenant-a", key: "stray" })),
          ({ record }) =>
            store.update(withState(record, { status: "completed", settledAt: T0, nextPollAt: T0 })),
        )
        const deleted = yield* store.deleteSettledBefore({ scope: "tenant-a", settledBefore: T0 + 5_000 })
        expect(deleted).toEqual({ deleted: 2, kept: 0, unacknowledged: [] })
        const left = yield* store.list({ scope: "tenant-a", limit: 10 })
        expect(left.records.map((r) => r.key).sort()).toEqual(["doubt", "new-done", "open", "stray"])
        expect(Option.isSome(yield* store.get("tenant-b", "other-old"))).toBe(true)
        expect((yield* store.deleteSettledBefore({ settledBefore: T0 + 5_000 })).deleted).toBe(1)
      }))
  })
}
