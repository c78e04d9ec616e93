/**
 * The HandleStore contract suite (vitest and `@effect/vitest`): what every store, ours or a third
 * party's, must do to be used by the engine.
 *
 * @since 0.2.0
 */
import { describe, expect } from "@effect/vitest"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { callContract } from "./CallContract.js"
import { claimContract } from "./ClaimContract.js"
import { consumerContract } from "./ConsumerContract.js"
import { gcContract } from "./GcContract.js"
import { historyContract } from "./HistoryContract.js"
import { instanceContract } from "./InstanceContract.js"
import { storeTest } from "./internal/fixture.js"
import { leaseContract } from "./LeaseContract.js"
import { outcomeContract } from "./OutcomeContract.js"
import { searchContract } from "./SearchContract.js"
import { serverContract } from "./ServerContract.js"

/**
 * Runs the HandleStore contract against `layer`, which must build a fresh, empty store each
 * time it is provided: every test provides it anew.
 *
 * @since 0.1.0
 * @category testing
 */
export const handleStoreContract = <E>(name: string, layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe(`HandleStore contract: ${name}`, () => {
    // Calls: rows, compare-and-set, claims, leases, pages, history.
    callContract(layer)
    claimContract(layer)
    leaseContract(layer)
    historyContract(layer)
    searchContract(layer)

    describe("now", () => {
      test("reads a clock: finite epoch milliseconds that do not run backwards", (store) =>
        Effect.gen(function* () {
          const first = yield* store.now
          const second = yield* store.now
          expect(Number.isFinite(first)).toBe(true)
          expect(second).toBeGreaterThanOrEqual(first)
        }))
    })

    // The outbox: GC, outcomes, consumers.
    gcContract(layer)
    outcomeContract(layer)
    consumerContract(layer)
    // Servers, and the instance lock.
    serverContract(layer)
    instanceContract(layer)
  })
}
