/**
 * A history per call (issue 15, item 2): the engine records each status change of a row, with
 * its cause and the instance that wrote it, and `get` returns it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { elapse, makeHarness, runFor, startProcess } from "./support/harness.js"

const slow = { name: "slow", shape: "task" as const, durationMs: 2_000, pollIntervalMs: 500 }

describe("history", () => {
  it.effect("a call's status changes, in order, with their causes and instances", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slow] })
      const p = yield* startProcess(h, { instanceId: "a" })
      const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      yield* runFor(handle.outcome, 10_000)
      const record = yield* p.client.get("k")
      expect(record.history.map((e) => [e.from, e.to, e.cause, e.instance])).toEqual([
        [null, "pending", "call", "a"],
        ["pending", "working", "TaskCreated", "a"],
        ["working", "completed", "Polled", "a"],
      ])
      const times = record.history.map((e) => e.at)
      expect([...times].sort((x, y) => x - y)).toEqual(times)
      expect(times[2]).toBe(record.settledAt)
    }),
  )

  it.effect("an interrupted call, found in doubt by the next instance and abandoned", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slow] })
      const a = yield* startProcess(
        h,
        { instanceId: "a", leaseMs: 1_000 },
        {
          at: "fetch",
          method: "tools/call",
          phase: "before-send",
        },
      )
      yield* Effect.fork(a.client.callTool("fake", "slow", {}, { key: "k" }))
      yield* elapse(500)
      expect(a.crashed()).toBe(true)
      const b = yield* startProcess(h, { instanceId: "b", leaseMs: 1_000 })
      yield* runFor(b.client.reconcile, 10_000)
      const doubt = yield* runFor(b.client.settle("k"), 10_000)
      expect(doubt._tag).toBe("InDoubt")
      yield* runFor(b.client.abandon("k"), 1_000)
      const record = yield* b.client.get("k")
      expect(record.history.map((e) => [e.from, e.to, e.instance])).toEqual([
        [null, "pending", "a"],
        ["pending", "in_doubt", "b"],
        ["in_doubt", "cancelled", "b"],
      ])
      expect(record.history[2]?.cause).toBe("Abandoned")
    }),
  )
})
