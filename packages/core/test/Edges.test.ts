/**
 * The promise at the edges (issue 28): a store that fails one write, a stray whose cancel fails,
 * a row whose server this instance does not have. Each scenario lost a task id, orphaned a task
 * or held a row forever before its fix.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import {
  elapse,
  flush,
  type Harness,
  makeHarness,
  rewriteAnswers,
  runFor,
  slowTool,
  startProcess,
  withStore,
} from "./support/harness.js"

const row = (store: HandleStore.HandleStore, key: string) =>
  Effect.map(store.get("default", key), Option.getOrUndefined)

describe("a received task id survives one failed write", () => {
  it.effect("the task id write fails once: it is written on a retry, never re-launched", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ annotations: { idempotentHint: true } })] })
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
      // The task outlasts the test: with push on, a task ending at 120 s is seen ending at once.
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 600_000 })] })
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

describe("closing while a received task id is held only in memory", () => {
  /** A store that refuses every write that records a task id while `down()` says so. */
  const refusingTaskIds = (h: Harness, down: () => boolean) =>
    withStore(h, {
      ...h.store,
      update: (record, options) =>
        down() && record.taskId !== null
          ? Effect.fail(new HandleStore.StoreError({ operation: "update", message: "connection refused" }))
          : h.store.update(record, options),
    })

  it.effect(
    "the store still refuses the id at close: the task is cancelled, not left running unrecorded",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 600_000 })] })
        const p = yield* startProcess(
          refusingTaskIds(h, () => true),
          { instanceId: "a", background: false },
        )
        yield* Effect.fork(p.client.callTool("fake", "slow", {}, { key: "k" }))
        yield* elapse(10_000, 500)
        const [task] = h.server.ledger.tasks
        expect(task).toBeDefined()
        expect((yield* row(h.store, "k"))?.taskId).toBeNull()
        yield* runFor(p.close, 10_000)
        // Nothing records the task: the only way it is not orphaned is that we cancelled it.
        expect(task?.cancels.length).toBeGreaterThanOrEqual(1)
        expect(h.server.ledger.launchesForKey("k")).toHaveLength(1)
        // The next process finds the call it cannot know launched: in doubt, never silently lost.
        const b = yield* startProcess(h, { instanceId: "b", background: false, leaseMs: 1_000 })
        yield* elapse(2_000)
        yield* runFor(b.client.reconcile, 5_000)
        expect((yield* row(h.store, "k"))?.status).toBe("in_doubt")
        yield* b.close
      }),
  )

  it.effect("the store answers again by close: the id is written and handed off, not cancelled", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 600_000 })] })
      let down = true
      const p = yield* startProcess(
        refusingTaskIds(h, () => down),
        { instanceId: "a", background: false },
      )
      yield* Effect.fork(p.client.callTool("fake", "slow", {}, { key: "k" }))
      // The retries are spaced out to half a minute by now: the next one is still far off.
      yield* elapse(120_000, 500)
      // The store is back; the clock does not move, so no retry runs before close.
      down = false
      yield* flush
      expect((yield* row(h.store, "k"))?.taskId).toBeNull()
      yield* runFor(p.close, 10_000)
      const [task] = h.server.ledger.tasks
      const written = yield* row(h.store, "k")
      expect(written?.taskId).toBe(task?.taskId)
      expect(written?.status).toBe("working")
      expect(task?.cancels).toHaveLength(0)
    }),
  )
})

/**
 * A server whose answer to the first `tools/call` (carrying the task id) arrives 5 s late, after
 * the call was given up on, and whose first `failedCancels` cancels answer 503.
 */
const strayHarness = (failedCancels: number) =>
  makeHarness({
    tools: [slowTool({ durationMs: 600_000 })],
    faults: [
      { when: { method: "tools/call", nth: 1 }, fault: { kind: "latency", ms: 5_000, phase: "after" } },
      { when: { method: "tasks/cancel", times: failedCancels }, fault: { kind: "status", status: 503 } },
    ],
  })

describe("a stray task is cancelled, and kept on record until it is", () => {
  it.effect(
    "an abandoned call's late task id, whose cancel fails, is cancelled; gc keeps the row until then",
    () =>
      Effect.gen(function* () {
        const h = yield* strayHarness(4)
        const p = yield* startProcess(h, {
          instanceId: "a",
          callTimeout: "1 second",
          background: { tickMs: 200, batchSize: 100, concurrency: 4 },
        })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 3_000)
        expect(handle.record.status).toBe("in_doubt")
        yield* runFor(p.client.abandon("k"), 1_000)
        yield* elapse(5_000)
        const [task] = h.server.ledger.tasks
        const afterLate = yield* row(h.store, "k")
        expect(afterLate?.status).toBe("cancelled")
        expect(afterLate?.strayTasks.map((stray) => stray.taskId)).toEqual([task?.taskId])
        // Before its cancel went through, the row is the stray's only record: gc keeps it.
        expect(task?.cancels).toHaveLength(0)
        expect((yield* p.client.gc("0 seconds")).deleted).toBe(0)
        yield* elapse(60_000, 200)
        expect(task?.cancels.length).toBeGreaterThanOrEqual(1)
        const done = yield* row(h.store, "k")
        expect(done?.strayTasks[0]?.cancelSent).toBe(true)
        expect(done?.nextPollAt).toBeNull()
        expect(done?.leaseOwner).toBeNull()
        expect((yield* p.client.gc("0 seconds")).deleted).toBe(1)
        yield* p.close
      }),
  )

  it.effect("a process that dies before the stray's cancel went through leaves it to the next one", () =>
    Effect.gen(function* () {
      const h = yield* strayHarness(1)
      const a = yield* startProcess(h, { instanceId: "a", callTimeout: "1 second", background: false })
      yield* runFor(a.client.callTool("fake", "slow", {}, { key: "k" }), 3_000)
      yield* runFor(a.client.abandon("k"), 1_000)
      yield* elapse(5_000)
      a.crash()
      const [task] = h.server.ledger.tasks
      expect(task?.cancels).toHaveLength(0)
      yield* elapse(60_000, 1_000)
      const b = yield* startProcess(h, {
        instanceId: "b",
        background: { tickMs: 200, batchSize: 100, concurrency: 4 },
      })
      yield* elapse(5_000, 200)
      expect(task?.cancels.length).toBeGreaterThanOrEqual(1)
      expect((yield* row(h.store, "k"))?.strayTasks[0]?.cancelSent).toBe(true)
      yield* b.close
    }),
  )
})

describe("no row is held by an instance that cannot drive it", () => {
  it.effect("an instance without the row's server never claims it; one with it settles the call", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 20_000 })] })
      const a = yield* startProcess(h, { instanceId: "a", background: false, leaseMs: 5_000 })
      yield* runFor(a.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      a.crash()
      const background = { tickMs: 200, batchSize: 100, concurrency: 4 }
      // Instances with other server lists share the store.
      const b = yield* startProcess(h, {
        instanceId: "b",
        background,
        servers: [{ name: "other", url: "http://other.test/mcp" }],
      })
      yield* elapse(60_000, 500)
      const waiting = yield* row(h.store, "k")
      expect(waiting?.status).toBe("working")
      expect(waiting?.leaseOwner === null || waiting?.leaseOwner?.startsWith("a")).toBe(true)
      expect(waiting?.attempts).toBe(0)
      const c = yield* startProcess(h, { instanceId: "c", background, leaseMs: 5_000 })
      const outcome = yield* runFor(c.client.settle("k"), 30_000, 200)
      expect(outcome._tag).toBe("Completed")
      yield* Effect.all([b.close, c.close])
    }),
  )

  it.effect("a name this instance has at another URL than the store's is another endpoint", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 20_000 })] })
      // Another app's server answers at another URL: it never created the first app's task.
      const elsewhere = yield* makeHarness({ tools: [slowTool({ durationMs: 20_000 })] })
      const a = yield* startProcess(h, { instanceId: "a", background: false, leaseMs: 5_000 })
      yield* runFor(a.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      a.crash()
      const b = yield* startProcess(
        { server: elsewhere.server, store: h.store },
        {
          instanceId: "b",
          background: { tickMs: 200, batchSize: 100, concurrency: 4 },
          servers: [{ name: "fake", url: "http://moved.test/mcp" }],
        },
      )
      yield* elapse(30_000, 500)
      // Before: polled at b's URL, "unknown task", marked expired while the task ran on.
      expect((yield* row(h.store, "k"))?.status).toBe("working")
      expect(elsewhere.server.ledger.requests.filter((r) => r.method === "tasks/get")).toHaveLength(0)
      // The store still binds the name where the first app wrote it.
      const [bound] = yield* h.store.listServers
      expect(bound?.url).toBe("http://fake.test/mcp")
      yield* b.close
    }),
  )
})

describe("an answer the client cannot read keeps the task id it names", () => {
  it.effect("an unknown resultType naming a task id: in doubt, the id kept on the row and cancelled", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 600_000 })] })
      // A server of some later revision answers with a shape this client cannot read.
      const unreadable = rewriteAnswers(h, (method, _request, answer) => {
        if (method !== "tools/call") return undefined
        const { result } = answer as { result: Record<string, unknown> }
        return { ...(answer as object), result: { ...result, resultType: "deferred" } }
      })
      const p = yield* startProcess(unreadable, { instanceId: "a", background: false })
      const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 2_000)
      expect(handle.record.status).toBe("in_doubt")
      yield* elapse(2_000)
      const [task] = h.server.ledger.tasks
      const record = yield* row(h.store, "k")
      expect(record?.status).toBe("in_doubt")
      expect(record?.strayTasks.map((stray) => stray.taskId)).toEqual([task?.taskId])
      expect(task?.cancels).toHaveLength(1)
      expect(record?.strayTasks[0]?.cancelSent).toBe(true)
      yield* p.close
    }),
  )
})
