/**
 * The instance part of the HandleStore contract (issue 28): one live client per instance id, also
 * within one process. Run by `handleStoreContract`.
 *
 * @since 0.3.0
 */
import { describe, expect } from "@effect/vitest"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { storeTest } from "./internal/fixture.js"

/**
 * @since 0.3.0
 * @category testing
 */
export const instanceContract = <E>(layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe("lockInstance", () => {
    test("refuses a second client under a held id, takes another id, and frees it on release", (store) =>
      Effect.gen(function* () {
        const first = yield* Scope.make()
        yield* Scope.extend(store.lockInstance("instance-1"), first)
        const second = yield* Effect.either(Effect.scoped(store.lockInstance("instance-1")))
        expect(Either.isLeft(second) && second.left._tag).toBe("InstanceIdInUse")
        yield* Effect.scoped(store.lockInstance("instance-2"))
        // The refusal took nothing from the holder: still refused while it holds.
        expect(Either.isLeft(yield* Effect.either(Effect.scoped(store.lockInstance("instance-1"))))).toBe(
          true,
        )
        yield* Scope.close(first, Exit.void)
        yield* Effect.scoped(store.lockInstance("instance-1"))
      }))
  })

  describe("listInstances", () => {
    test("lists the ids held now, also those holding no call, until they are released", (store) =>
      Effect.gen(function* () {
        const ids = (listed: ReadonlyArray<{ readonly instanceId: string }>) =>
          listed.map((i) => i.instanceId)
        expect(yield* store.listInstances).toEqual([])
        const first = yield* Scope.make()
        yield* Scope.extend(store.lockInstance("worker-b"), first)
        const second = yield* Scope.make()
        yield* Scope.extend(store.lockInstance("worker-a"), second)
        const listed = yield* store.listInstances
        expect(ids(listed)).toEqual(["worker-a", "worker-b"])
        for (const instance of listed) expect(Number.isFinite(instance.heartbeatAt)).toBe(true)
        yield* Scope.close(first, Exit.void)
        expect(ids(yield* store.listInstances)).toEqual(["worker-a"])
        yield* Scope.close(second, Exit.void)
        expect(yield* store.listInstances).toEqual([])
      }))
  })
}
