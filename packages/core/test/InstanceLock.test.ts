/**
 * A client takes its instance id on the store for as long as it lives: a store that says another
 * live client holds it stops the client from starting. Two clients under one id would each take
 * the other's live leases for a dead predecessor's (issue 28, finding 2).
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
import * as Option from "effect/Option"
import { elapse, makeHarness, slowTool, startProcess } from "./support/harness.js"

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
      // Without the background reconciler a client still drives the calls it makes: it takes its id.
      const driving = yield* Effect.either(clientOn(store, { instanceId: "busy", background: false }))
      expect(Either.isLeft(driving) && driving.left._tag).toBe("InstanceIdInUse")
      // Only a client that never drives a row (a listing) goes without.
      yield* clientOn(store, { instanceId: "busy", background: false, claimInstance: false })
      expect(asked).toEqual(["busy", "free", "busy"])
    }),
  )

  it.effect("a second client under a live client's id is refused: the call in flight is launched once", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [slowTool({ annotations: { idempotentHint: true } })],
        faults: [{ when: { method: "tools/call", nth: 1 }, fault: { kind: "latency", ms: 3_000 } }],
      })
      const options = { instanceId: "app", inDoubtPolicy: "reissue-if-idempotent" } as const
      const app = yield* startProcess(h, options)
      yield* Effect.fork(app.client.callTool("fake", "slow", {}, { key: "k" }))
      yield* elapse(500)
      // Another client of the same process (the harness's store is one process's memory).
      const second = yield* Effect.either(
        startProcess(h, options).pipe(Effect.catchAllDefect((defect) => Effect.fail(defect))),
      )
      yield* elapse(8_000)
      expect(h.server.ledger.launchesForKey("k"), "launches of k").toHaveLength(1)
      const record = yield* h.store.get("default", "k")
      expect(Option.map(record, (r) => r.status)).toEqual(Option.some("completed"))
      expect(Either.isLeft(second) && second.left).toBeInstanceOf(HandleStore.InstanceIdInUse)
      if (Either.isLeft(second)) expect(String(second.left)).toContain("another client in this process")
    }),
  )

  it.effect("a crashed client's id is free at once for the next one, as a killed process's is", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool()] })
      const first = yield* startProcess(h, { instanceId: "app" })
      first.crash()
      yield* startProcess(h, { instanceId: "app" })
    }),
  )
})
