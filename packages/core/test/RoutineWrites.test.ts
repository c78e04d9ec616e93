/**
 * Which writes the engine marks routine (`HandleStore.UpdateOptions`): a store may hold those a
 * moment to share a commit, so only a poll that found a working task still working may be one.
 * A write anything waits on (the task id, an outcome, an answer, a cancel) must never be.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Effect from "effect/Effect"
import { elapse, makeHarness, runFor, startProcess, withStore } from "./support/harness.js"

interface Write {
  readonly before: HandleRecord.Status | undefined
  readonly after: HandleRecord.Status
  readonly pollsBefore: number
  readonly pollsAfter: number
  readonly routine: boolean
}

describe("routine writes", () => {
  it.effect("only a poll that finds a working task still working is routine", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [{ name: "job", shape: "task", durationMs: 6_000, pollIntervalMs: 1_000 }],
      })
      const writes: Array<Write> = []
      const recording = withStore(h, {
        ...h.store,
        update: (record, options) =>
          Effect.flatMap(h.store.get(record.scope, record.key), (stored) =>
            Effect.tap(h.store.update(record, options), () =>
              Effect.sync(() => {
                const before = stored._tag === "Some" ? stored.value : undefined
                writes.push({
                  before: before?.status,
                  after: record.status,
                  pollsBefore: before?.polls ?? 0,
                  pollsAfter: record.polls,
                  routine: options?.routine === true,
                })
              }),
            ),
          ),
      })
      const client = (yield* startProcess(recording, { instanceId: "a" })).client
      yield* runFor(client.callTool("fake", "job", {}, { key: "k" }), 1_000)
      yield* elapse(3_500)
      yield* runFor(client.cancel("k"), 1_000)
      const outcome = yield* runFor(client.settle("k"), 10_000)
      expect(outcome._tag).toBe("Cancelled")

      const routine = writes.filter((write) => write.routine)
      expect(routine.length, "the polls while the task ran were routine").toBeGreaterThanOrEqual(2)
      for (const write of writes) {
        const pollStillWorking =
          write.before === "working" && write.after === "working" && write.pollsAfter > write.pollsBefore
        expect(write.routine, JSON.stringify(write)).toBe(pollStillWorking)
      }
      expect(writes.some((write) => write.after === "cancelled" && !write.routine)).toBe(true)
    }),
  )
})
