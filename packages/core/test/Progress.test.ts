/**
 * Progress (issue 31, item 5): `notifications/progress` of a direct call becomes the row's
 * progress and `Progress` events, kept only when it changes materially.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { makeHarness, runFor, startProcess } from "./support/harness.js"

const steps = Array.from({ length: 41 }, (_, i) => i * 2.5)

const tools = [
  {
    name: "render",
    shape: "direct" as const,
    durationMs: 2_000,
    progress: { steps, total: 100, intervalMs: 50, message: "rendering" },
    outcome: { kind: "result" as const, text: "rendered" },
  },
]

describe("progress", () => {
  it.effect("each tenth of a direct call's progress is kept on the row and reported once", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h)
      const events = yield* Effect.fork(
        Stream.runCollect(p.client.events("r", { pollIntervalMs: 50 })).pipe(
          Effect.map((chunk) =>
            Chunk.toArray(chunk).flatMap((e) =>
              e._tag === "Progress" ? [`${e.progress}/${e.total} ${e.message}`] : [],
            ),
          ),
        ),
      )
      const handle = yield* runFor(p.client.callTool("fake", "render", {}, { key: "r" }), 10_000)
      const outcome = yield* runFor(handle.outcome, 1_000)
      expect(outcome._tag).toBe("Completed")
      const row = yield* p.client.get("r")
      expect(row.progress).toMatchObject({ progress: 100, total: 100, message: "rendering" })
      const seen = yield* runFor(events.await.pipe(Effect.flatten), 1_000)
      // 41 notices; one write per tenth: the events read from the store see no more than those.
      expect(seen.length).toBeGreaterThanOrEqual(2)
      expect(seen.length).toBeLessThanOrEqual(11)
      expect(seen.at(-1)).toBe("100/100 rendering")
    }),
  )

  it("a change is material at a new tenth, message or total, or at the end", () => {
    const at = (progress: number, total?: number, message?: string) =>
      HandleRecord.Progress.make({
        progress,
        at: 0,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message }),
      })
    expect(HandleRecord.progressChanged(null, at(0, 100))).toBe(true)
    expect(HandleRecord.progressChanged(at(10, 100), at(19, 100))).toBe(false)
    expect(HandleRecord.progressChanged(at(10, 100), at(20, 100))).toBe(true)
    expect(HandleRecord.progressChanged(at(10, 100), at(11, 100, "now saving"))).toBe(true)
    expect(HandleRecord.progressChanged(at(99, 100), at(100, 100))).toBe(true)
    expect(HandleRecord.progressChanged(at(10), at(10.5))).toBe(false)
    expect(HandleRecord.progressChanged(at(10), at(11))).toBe(true)
  })
})
