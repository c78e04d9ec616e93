/**
 * Regression tests for issue 12 ("Engine v2"), "Tried against a misbehaving server": each
 * reproduces one misbehaviour through the public TaskClient API, against the fake server (its
 * faults and crash points, or its answers rewritten where it cannot misbehave the needed way),
 * and asserts what the rules demand (rules 6, 8 and 9).
 */
import { describe, expect, it } from "@effect/vitest"
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as Effect from "effect/Effect"
import { elapse, type Harness, makeHarness, rewriteAnswers, runFor, startProcess } from "./support/harness.js"

type Tool = Config.Config["tools"][number]

const slow = (over: Partial<Tool> = {}): Tool => ({
  name: "slow",
  shape: "task",
  durationMs: 3_000,
  pollIntervalMs: 1_000,
  ...over,
})

const row = (h: Harness, key: string) =>
  Effect.map(h.store.get("default", key), (found) => (found._tag === "Some" ? found.value : undefined))

/** The reason of a local outcome (`localError` in the engine): `error.data["mcp-handles/local"]`. */
const localReason = (record: HandleRecord.HandleRecord | undefined): unknown => {
  const data = record?.error?.data
  return typeof data === "object" && data !== null && !Array.isArray(data)
    ? (data as Record<string, unknown>)["mcp-handles/local"]
    : undefined
}

type Message = { readonly result?: Record<string, unknown> }
const resultOf = (answer: unknown): Record<string, unknown> | undefined => {
  const result = (answer as Message | null)?.result
  return typeof result === "object" && result !== null ? result : undefined
}

describe("issue 12: a misbehaving server", () => {
  it.effect("input answered before a kill is not sent again after the restart (poll first)", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [
          slow({
            durationMs: 4_000,
            inputSteps: [
              {
                atMs: 1_000,
                requests: { name: { method: "elicitation/create", params: { message: "Name?" } } },
              },
            ],
            outcome: { kind: "result", text: "Hello {{inputs.name.content.name|nobody}}" },
          }),
        ],
      })
      // Killed after the server took the answer, before its acknowledgement was stored.
      const first = yield* startProcess(
        h,
        {
          background: false,
          onInputRequired: () => Effect.succeed({ action: "accept", content: { name: "Ada" } }),
        },
        { at: "fetch", method: "tasks/update", phase: "after-answer" },
      )
      yield* runFor(first.client.callTool("fake", "slow", {}, { key: "ask" }), 1_000)
      yield* elapse(3_000)
      expect(first.crashed()).toBe(true)
      const [task] = h.server.ledger.tasks
      expect(task?.updates.flatMap((update) => update.accepted)).toEqual(["name"])

      const second = yield* startProcess(h, {
        background: false,
        onInputRequired: () => Effect.die("asked twice"),
      })
      yield* runFor(second.client.reconcile, 1_000)
      const outcome = yield* runFor(second.client.settle("ask"), 30_000)
      expect(outcome._tag === "Completed" && outcome.result.content).toEqual([
        { type: "text", text: "Hello Ada" },
      ])
      expect(
        task?.updates.flatMap((update) => update.keys),
        "keys the server received in tasks/update",
      ).toEqual(["name"])
    }),
  )

  it.effect("two calls given the same task id: the second row fails with duplicate_task_id", () =>
    Effect.gen(function* () {
      const base = yield* makeHarness({ tools: [slow()] })
      // The server hands the first call's task id to the second call too.
      let held: string | undefined
      const h = rewriteAnswers(base, (method, _request, answer) => {
        const result = resultOf(answer)
        if (method !== "tools/call" || typeof result?.taskId !== "string") return undefined
        if (held === undefined) {
          held = result.taskId
          return undefined
        }
        return { ...(answer as object), result: { ...result, taskId: held } }
      })
      const p = yield* startProcess(h, { background: false })
      const first = yield* runFor(p.client.callTool("fake", "slow", { n: 1 }, { key: "k1" }), 1_000)
      const second = yield* runFor(p.client.callTool("fake", "slow", { n: 2 }, { key: "k2" }), 1_000)
      expect(held).toBeDefined()
      yield* runFor(second.outcome, 10_000)
      const outcome = yield* runFor(first.outcome, 10_000)
      expect(outcome._tag).toBe("Completed")
      const one = yield* row(h, "k1")
      const two = yield* row(h, "k2")
      expect(one?.taskId, "the first row keeps its task").toBe(held)
      expect(one?.status).toBe("completed")
      expect(two?.status, "the second row is not merged into the first").toBe("failed")
      expect(localReason(two)).toBe("duplicate_task_id")
      // One row per task id.
      const rows = (yield* h.store.list({ scope: "default", limit: 100 })).records
      expect(rows.filter((record) => record.taskId === held).map((record) => record.key)).toEqual(["k1"])
    }),
  )

  it.effect("pollIntervalMs as a string does not reject the status answer: the call ends", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [slow()],
        faults: [
          {
            when: { method: "tasks/get", times: 1_000 },
            fault: { kind: "wrong-shape", shape: "string-poll-interval" },
          },
        ],
      })
      const p = yield* startProcess(h, { background: false })
      const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      const outcome = yield* runFor(handle.outcome, 15_000)
      expect(outcome._tag).toBe("Completed")
      const [task] = h.server.ledger.tasks
      expect(task?.terminalStatus).toBe("completed")
      // The bad field is ignored and the default schedule used: never sooner than 1 s.
      expect(task?.earlyPolls).toBe(0)
    }),
  )

  describe("a completed answer whose result is refused ends the call at once, failed with result_rejected", () => {
    const deep = (levels: number): Record<string, unknown> =>
      levels === 0 ? { leaf: true } : { nested: deep(levels - 1) }
    const cases: ReadonlyArray<readonly [string, () => Record<string, unknown>]> = [
      // Over the default result limit (16 MiB).
      ["over the result limit", () => ({ content: [{ type: "text", text: "x".repeat(17 * 1024 * 1024) }] })],
      ["nested too deep", () => ({ content: [], structuredContent: deep(200) })],
      [
        "with a __proto__ key",
        () => ({ content: [], structuredContent: JSON.parse('{"__proto__": {"polluted": true}}') }),
      ],
    ]
    for (const [name, refused] of cases) {
      it.effect(name, () =>
        Effect.gen(function* () {
          const base = yield* makeHarness({ tools: [slow({ durationMs: 2_000 })] })
          const h = rewriteAnswers(base, (method, _request, answer) => {
            const result = resultOf(answer)
            if (method !== "tasks/get" || result?.status !== "completed") return undefined
            return { ...(answer as object), result: { ...result, result: refused() } }
          })
          // The answer a poll gets is rewritten: no stream brings the task's end instead.
          const p = yield* startProcess(h, { background: false, push: false })
          const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
          const outcome = yield* runFor(handle.outcome, 8_000)
          expect(outcome._tag).toBe("Failed")
          const record = yield* row(h, "k")
          expect(record?.status).toBe("failed")
          expect(localReason(record)).toBe("result_rejected")
          const [task] = h.server.ledger.tasks
          expect(record?.taskId, "the task id is kept").toBe(task?.taskId)
          expect(record?.result).toBeNull()
          // At once: no poll after the first `completed` answer.
          const completedAt = task?.terminalSeenAt ?? Number.NaN
          expect(task?.polls.filter((at) => at > completedAt)).toEqual([])
        }),
      )
    }
  })
})
