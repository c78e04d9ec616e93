/**
 * The open-calls gauge (issue 15, item 4): calls this process saw open or in doubt, by status.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Telemetry from "@mcp-handles/core/Telemetry"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { makeHarness, runFor, startProcess } from "./support/harness.js"

const gauge = (status: string) =>
  Effect.map(Metric.value(Metric.tagged(Telemetry.openCalls, "status", status)), (state) =>
    Number(state.value),
  )

const counts = Effect.all({
  pending: gauge("pending"),
  working: gauge("working"),
  inDoubt: gauge("in_doubt"),
})

describe("open calls gauge", () => {
  it.effect("counts a call while it works, in doubt while it is, and not once it ends", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [
          { name: "slow", shape: "task", durationMs: 2_000, pollIntervalMs: 200 },
          { name: "lost", shape: "direct", outcome: { kind: "result", text: "ok" } },
        ],
        faults: [{ when: { method: "tools/call", tool: "lost" }, fault: { kind: "drop", phase: "after" } }],
      })
      const before = yield* counts
      const p = yield* startProcess(h, { instanceId: "a", background: false })
      const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      expect(yield* counts).toEqual({ ...before, working: before.working + 1 })
      yield* runFor(handle.outcome, 10_000)
      expect(yield* counts).toEqual(before)
      // A call whose answer was lost rests in doubt: counted there until it is abandoned.
      const lost = yield* runFor(p.client.callTool("fake", "lost", {}, { key: "l" }), 1_000)
      expect(lost.record.status).toBe("in_doubt")
      expect(yield* counts).toEqual({ ...before, inDoubt: before.inDoubt + 1 })
      yield* runFor(p.client.abandon("l"), 1_000)
      expect(yield* counts).toEqual(before)
    }),
  )
})
