/**
 * `TaskClient.gc` takes durations as people write them (issue 15, item 6/4): `"7d"` means the
 * same as in the CLI, and a retention it cannot read is a typed `InvalidDuration`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { makeHarness, runFor, startProcess } from "./support/harness.js"

const tools = [{ name: "quick", shape: "direct" as const, outcome: { kind: "result" as const, text: "ok" } }]

describe("gc", () => {
  it.effect('"7d" keeps what settled within a week and deletes what is older', () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { instanceId: "a", background: false })
      const now = yield* Clock.currentTimeMillis
      const day = 86_400_000
      // Rows settled 8 and 6 days ago, written straight into the store.
      for (const [key, daysAgo] of [
        ["old", 8],
        ["new", 6],
      ] as const) {
        const at = now - daysAgo * day
        const { record } = yield* h.store.insertOrGet({
          scope: "default",
          key,
          serverId: "srv",
          tool: "quick",
          arguments: {},
          argumentsHash: "h",
          owner: "a",
          leaseMs: 0,
          now: at,
        })
        yield* h.store.update(
          // As the transition leaves a settled row: nothing due.
          new HandleRecord.HandleRecord({
            ...record,
            status: "completed",
            result: { content: [] },
            settledAt: at,
            nextPollAt: null,
          }),
        )
      }
      expect((yield* p.client.gc("7d")).deleted).toBe(1)
      const left = yield* p.client.list()
      expect(left.records.map((r) => r.key)).toEqual(["new"])
      expect((yield* p.client.gc("5d")).deleted).toBe(1)
    }),
  )

  it.effect("a retention it cannot read is InvalidDuration, and nothing is deleted", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { instanceId: "a", background: false })
      yield* runFor(p.client.callTool("fake", "quick", {}, { key: "k" }), 1_000)
      const error = yield* Effect.flip(p.client.gc("a week" as never))
      expect(error._tag).toBe("InvalidDuration")
      expect(yield* Effect.flip(p.client.gc(-5))).toMatchObject({ _tag: "InvalidDuration" })
      expect((yield* p.client.list()).records).toHaveLength(1)
    }),
  )
})
