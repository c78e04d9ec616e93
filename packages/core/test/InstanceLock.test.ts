/**
 * A client that reconciles in the background takes its instance id on the store for as long as
 * it lives: a store that says another live process holds it stops the client from starting.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Polling from "@mcp-handles/core/Polling"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import { MemoryStore } from "@mcp-handles/store-memory"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"

const clientOn = (store: HandleStore.HandleStore, options: Partial<TaskClient.Options>) =>
  Layer.build(
    TaskClient.layer({ servers: [{ name: "fake", url: "http://fake.test/mcp" }], ...options }).pipe(
      Layer.provide(
        Layer.mergeAll(Layer.succeed(HandleStore.HandleStore, store), HttpWire.layer(), Polling.layer()),
      ),
    ),
  )

describe("instance lock", () => {
  it.scoped("a background client refuses to start under an id another live process holds", () =>
    Effect.gen(function* () {
      const memory = yield* MemoryStore.make
      const asked: Array<string> = []
      const store: HandleStore.HandleStore = {
        ...memory,
        lockInstance: (instanceId) => {
          asked.push(instanceId)
          return instanceId === "busy"
            ? Effect.fail(
                new HandleStore.InstanceIdInUse({ instanceId, holder: "process 4242 on this host" }),
              )
            : Effect.void
        },
      }
      const refused = yield* Effect.either(clientOn(store, { instanceId: "busy" }))
      expect(Either.isLeft(refused) && refused.left._tag).toBe("InstanceIdInUse")
      if (Either.isLeft(refused)) expect(refused.left.message).toContain("process 4242")
      yield* clientOn(store, { instanceId: "free" })
      // A client without the background reconciler (a read-only tool) takes no id.
      yield* clientOn(store, { instanceId: "busy", background: false })
      expect(asked).toEqual(["busy", "free"])
    }),
  )
})
