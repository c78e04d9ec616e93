/**
 * The promise at the edges (issue 28): a store that fails one write, a stray whose cancel fails,
 * a row whose server this instance does not have. Each scenario lost a task id, orphaned a task
 * or held a row forever before its fix.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { elapse, makeHarness, runFor, slowTool, startProcess, withStore } from "./support/harness.js"

const row = (store: HandleStore.HandleStore, key: string) =>
  Effect.map(store.get("default", key), Option.getOrUndefined)

describe("a received task id survives one failed write", () => {
  it.effect("the task id write fails once: it is written on a retry, never re-launched", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ idempotentHint: true })] })
      let failed = 0
      // The store refuses the first write that records a task id (busy past its timeout, a
      // Postgres retry budget spent), and answers every write after it.
      const blip = withStore(h, {
        ...h.store,
        update: (record, options) =>
          record.taskId !== null && failed === 0
            ? Effect.suspend(() => {
                failed++
                return Effect.fail(
                  new HandleStore.StoreError({ operation: "update", message: "database is locked" }),
                )
              })
            : h.store.update(record, options),
      })
      const p = yield* startProcess(blip, {
        instanceId: "a",
        inDoubtPolicy: "reissue-if-idempotent",
        background: { tickMs: 100, batchSize: 100, concurrency: 4 },
        leaseMs: 2_000,
      })
      const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 2_000)
      const outcome = yield* runFor(handle.outcome, 30_000)
      expect(failed).toBe(1)
      expect(outcome._tag).toBe("Completed")
      expect(h.server.ledger.launchesForKey("k")).toHaveLength(1)
      const [task] = h.server.ledger.tasks
      expect((yield* row(h.store, "k"))?.taskId).toBe(task?.taskId)
      yield* p.close
    }),
  )

  it.effect("the store stays down for a minute: the id is written once it answers", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 120_000 })] })
      let down = true
      const outage = withStore(h, {
        ...h.store,
        update: (record, options) =>
          down && record.taskId !== null
            ? Effect.fail(new HandleStore.StoreError({ operation: "update", message: "connection refused" }))
            : h.store.update(record, options),
      })
      const p = yield* startProcess(outage, { instanceId: "a", background: false })
      yield* Effect.fork(p.client.callTool("fake", "slow", {}, { key: "k" }))
      yield* elapse(60_000, 500)
      expect((yield* row(h.store, "k"))?.taskId).toBeNull()
      down = false
      yield* elapse(60_000, 500)
      const [task] = h.server.ledger.tasks
      const written = yield* row(h.store, "k")
      expect(written?.taskId).toBe(task?.taskId)
      expect(written?.status).toBe("working")
      expect(h.server.ledger.launchesForKey("k")).toHaveLength(1)
      yield* p.close
    }),
  )
})
