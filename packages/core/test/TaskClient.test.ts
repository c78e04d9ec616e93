import { describe, expect, it } from "@effect/vitest"
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as Config from "@mcp-handles/fake-server/Config"
import type * as Ledger from "@mcp-handles/fake-server/Ledger"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import {
  type CrashPoint,
  elapse,
  type Harness,
  makeHarness,
  runFor,
  slowTool,
  startProcess,
} from "./support/harness.js"

const allRows = (h: Harness, scope = "default") =>
  Effect.map(h.store.list({ scope, limit: 1000 }), (page) => page.records)

/**
 * No orphan: every task the server created is recorded with its id, or covered by an in-doubt
 * row of the call that created it. No double launch: at most one launch per key.
 */
const checkInvariants = (ledger: Ledger.Snapshot, rows: ReadonlyArray<HandleRecord.HandleRecord>) => {
  const byKey = new Map(rows.map((r) => [r.key, r]))
  for (const task of ledger.tasks) {
    const row = task.idempotencyKey === null ? undefined : byKey.get(task.idempotencyKey)
    expect(row, `task ${task.taskId} has a row`).toBeDefined()
    if (row?.status !== "in_doubt") expect(row?.taskId).toBe(task.taskId)
  }
  const launches = new Map<string, number>()
  for (const launch of ledger.launches) {
    if (launch.idempotencyKey !== null)
      launches.set(launch.idempotencyKey, (launches.get(launch.idempotencyKey) ?? 0) + 1)
  }
  for (const [key, count] of launches)
    expect(count, `launches of ${key}`).toBeLessThanOrEqual(byKey.get(key)?.launches ?? 1)
}

const pollGaps = (polls: ReadonlyArray<number>) => polls.slice(1).map((t, i) => t - (polls[i] as number))

describe("TaskClient", () => {
  describe("calls", () => {
    it.effect("a direct result completes the call at once, with one launch", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [{ name: "echo", shape: "direct", outcome: { kind: "result", text: "hi" } }],
        })
        const p = yield* startProcess(h, { background: false })
        const handle = yield* runFor(p.client.callTool("fake", "echo", { a: 1 }, { key: "k1" }), 1_000)
        expect(handle.record.status).toBe("completed")
        const outcome = yield* runFor(handle.outcome, 1_000)
        expect(outcome._tag === "Completed" && outcome.result.content).toEqual([{ type: "text", text: "hi" }])
        const ledger = h.server.ledger.snapshot()
        expect(ledger.launches.map((l) => l.idempotencyKey)).toEqual(["k1"])
      }),
    )

    it.effect("a JSON-RPC error answer fails the call and records the error", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [
            { name: "bad", shape: "direct", outcome: { kind: "error", code: -32042, message: "nope" } },
          ],
        })
        const p = yield* startProcess(h, { background: false })
        const handle = yield* runFor(p.client.callTool("fake", "bad", {}), 1_000)
        const outcome = yield* runFor(handle.outcome, 1_000)
        expect(outcome._tag === "Failed" && outcome.error.code).toBe(-32042)
        expect(handle.record.taskId).toBeNull()
      }),
    )

    it.effect("the task id is durable when callTool returns, before any poll", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool()] })
        const p = yield* startProcess(h, { background: false })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
        const [task] = h.server.ledger.snapshot().tasks
        expect(task?.polls).toEqual([])
        const stored = yield* p.client.get("k")
        expect(stored.status).toBe("working")
        expect(stored.taskId).toBe(task?.taskId)
        expect(handle.record.taskId).toBe(task?.taskId)
      }),
    )

    it.effect("bad arguments are a typed error and write nothing", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool()] })
        const p = yield* startProcess(h, {
          background: false,
          argumentLimits: { maxBytes: 100, maxDepth: 4 },
        })
        for (const args of [{ f: () => 1 }, [1, 2], "text", { big: "x".repeat(200) }, { d: new Date() }]) {
          const result = yield* Effect.either(p.client.callTool("fake", "slow", args))
          expect(Either.isLeft(result) && result.left._tag).toBe("InvalidJson")
        }
        for (const key of ["", "x".repeat(513), "nul\u0000key", "line\nbreak"]) {
          const result = yield* Effect.either(p.client.callTool("fake", "slow", {}, { key }))
          expect(Either.isLeft(result) && result.left._tag).toBe("InvalidKey")
        }
        const badScope = yield* Effect.either(p.client.callTool("fake", "slow", {}, { scope: "" }))
        expect(Either.isLeft(badScope) && badScope.left._tag).toBe("InvalidKey")
        const unknown = yield* Effect.either(p.client.callTool("nowhere", "slow", {}))
        expect(Either.isLeft(unknown) && unknown.left._tag).toBe("UnknownServer")
        expect(yield* allRows(h)).toEqual([])
        expect(h.server.ledger.snapshot().launches).toEqual([])
      }),
    )
  })

  describe("limits", () => {
    it.effect("a result over the configured limit is not stored: the call fails with a local error", () =>
      Effect.gen(function* () {
        const big = { kind: "result" as const, text: "x".repeat(5_000) }
        const h = yield* makeHarness({
          tools: [
            { name: "bigdirect", shape: "direct", outcome: big },
            { name: "bigtask", shape: "task", durationMs: 1_000, pollIntervalMs: 500, outcome: big },
          ],
        })
        const p = yield* startProcess(h, {
          background: false,
          resultLimits: { maxBytes: 1_000, maxDepth: 16 },
        })
        for (const tool of ["bigdirect", "bigtask"]) {
          const handle = yield* runFor(p.client.callTool("fake", tool, {}), 1_000)
          const outcome = yield* runFor(handle.outcome, 10_000)
          expect(outcome._tag === "Failed" && outcome.error.data).toEqual({
            "mcp-handles/local": "result_rejected",
          })
          expect((yield* p.client.get(handle.key)).result).toBeNull()
        }
      }),
    )
  })

  describe("idempotency", () => {
    it.effect("a key is launched once: a second call attaches, also concurrently", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool()] })
        const p = yield* startProcess(h, { background: false })
        const handles = yield* runFor(
          Effect.all(
            Array.from({ length: 5 }, () => p.client.callTool("fake", "slow", { n: 1 }, { key: "same" })),
            { concurrency: "unbounded" },
          ),
          1_000,
        )
        expect(handles.filter((handle) => handle.launched)).toHaveLength(1)
        const outcomes = yield* runFor(Effect.all(handles.map((handle) => handle.outcome)), 20_000)
        expect(new Set(outcomes.map((o) => JSON.stringify(o))).size).toBe(1)
        const again = yield* runFor(p.client.callTool("fake", "slow", { n: 1 }, { key: "same" }), 1_000)
        expect(again.launched).toBe(false)
        expect(h.server.ledger.snapshot().launches).toHaveLength(1)
      }),
    )

    it.effect("a key reused for another call is refused", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool()] })
        const p = yield* startProcess(h, { background: false })
        yield* runFor(p.client.callTool("fake", "slow", { n: 1 }, { key: "k" }), 1_000)
        const reused = yield* Effect.either(p.client.callTool("fake", "slow", { n: 2 }, { key: "k" }))
        expect(Either.isLeft(reused) && reused.left._tag).toBe("KeyReused")
        expect(h.server.ledger.snapshot().launches).toHaveLength(1)
      }),
    )
  })

  describe("a call the server refuses before any task (-32602)", () => {
    it.effect(
      "keeps its key: the same call attaches to the failure, another is refused naming the difference",
      () =>
        Effect.gen(function* () {
          const h = yield* makeHarness({ tools: [slowTool()] })
          const p = yield* startProcess(h, { background: false })
          const first = yield* runFor(p.client.callTool("fake", "slwo", { n: 1 }, { key: "k" }), 1_000)
          const failed = yield* runFor(first.outcome, 1_000)
          expect(failed._tag === "Failed" && failed.error.code).toBe(-32602)
          const calls = () => h.server.ledger.snapshot().requests.filter((r) => r.method === "tools/call")
          expect(calls()).toHaveLength(1)

          // The same call again: attached, the same failure, nothing sent.
          const again = yield* runFor(p.client.callTool("fake", "slwo", { n: 1 }, { key: "k" }), 1_000)
          expect(again.launched).toBe(false)
          expect(yield* runFor(again.outcome, 1_000)).toEqual(failed)
          expect(calls()).toHaveLength(1)

          // The typo fixed, under the same key: refused, saying what differs and how the key stands.
          const fixed = yield* Effect.either(p.client.callTool("fake", "slow", { n: 1 }, { key: "k" }))
          expect(Either.isLeft(fixed) && fixed.left._tag).toBe("KeyReused")
          expect(Either.isLeft(fixed) && fixed.left.message).toBe(
            'key "k" is already used: it names an earlier call of tool slwo, not slow (failed: -32602 Unknown tool: slwo); a key names one call, so pass another key for this one',
          )
          const otherArgs = yield* Effect.either(p.client.callTool("fake", "slwo", { n: 2 }, { key: "k" }))
          expect(Either.isLeft(otherArgs) && otherArgs.left.message).toContain(
            "an earlier call of slwo with other arguments (failed: -32602",
          )
          expect(calls()).toHaveLength(1)
          expect(h.server.ledger.snapshot().launches).toHaveLength(0)
        }),
    )
  })

  describe("polling", () => {
    it.effect("polls exactly at the server's current interval, even when it changes", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [
            slowTool({
              durationMs: 12_000,
              pollIntervalMs: [
                { afterMs: 0, pollIntervalMs: 1_000 },
                { afterMs: 4_000, pollIntervalMs: 2_500 },
              ],
            }),
          ],
        })
        // What is weighed is polls: no stream stands in for them.
        const p = yield* startProcess(h, { background: false, push: false })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 1_000)
        yield* runFor(handle.outcome, 30_000)
        const [task] = h.server.ledger.snapshot().tasks
        const polls = task?.polls ?? []
        const created = task?.createdAt ?? 0
        // Each gap equals the interval the server advertised in the answer before it.
        const expected = [created, ...polls.slice(0, -1)].map((t) => (t - created >= 4_000 ? 2_500 : 1_000))
        expect(
          [polls[0] as number, ...polls.slice(1)].map((t, i) => t - ([created, ...polls][i] as number)),
        ).toEqual(expected)
        expect(task?.earlyPolls).toBe(0)
        expect(task?.terminalStatus).toBe("completed")
      }),
    )

    it.effect("an interval of 0 is clamped to the floor instead of hot-looping", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 2_000, pollIntervalMs: 0 })] })
        // What is weighed is polls: no stream stands in for them.
        const p = yield* startProcess(h, { background: false, push: false })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 1_000)
        yield* runFor(handle.outcome, 10_000)
        const [task] = h.server.ledger.snapshot().tasks
        expect(new Set(pollGaps(task?.polls ?? []))).toEqual(new Set([250]))
      }),
    )

    it.effect("503 with Retry-After: backs off at least that long and the task stays open", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [slowTool({ durationMs: 6_000 })],
          faults: [
            {
              when: { method: "tasks/get", nth: [2, 3] },
              fault: { kind: "status", status: 503, retryAfter: 3, phase: "before" },
            },
          ],
        })
        // What is weighed is polls: no stream stands in for them.
        const p = yield* startProcess(h, { background: false, push: false })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 1_000)
        const outcome = yield* runFor(handle.outcome, 30_000)
        expect(outcome._tag).toBe("Completed")
        const gets = h.server.ledger
          .snapshot()
          .requests.filter((r) => r.method === "tasks/get")
          .map((r) => ({ at: r.at, status: r.httpStatus }))
        for (let i = 1; i < gets.length; i++) {
          if (gets[i - 1]?.status === 503)
            expect((gets[i]?.at ?? 0) - (gets[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(3_000)
        }
        expect(gets.filter((g) => g.status === 503)).toHaveLength(2)
      }),
    )

    it.effect("an unknown task id (-32602) means expired", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 60_000, ttlMs: 3_000 })] })
        const p = yield* startProcess(h, { background: false })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 1_000)
        const outcome = yield* runFor(handle.outcome, 20_000)
        expect(outcome._tag).toBe("Expired")
        expect(outcome._tag === "Expired" && outcome.reason).toMatch(/no longer knows/)
      }),
    )

    it.effect("the TTL backstop expires a task the server cannot be reached about", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [slowTool({ durationMs: 60_000, ttlMs: 4_000 })],
          faults: [
            {
              when: { method: "tasks/get", times: 1000 },
              fault: { kind: "status", status: 500, phase: "before" },
            },
          ],
        })
        const p = yield* startProcess(h, { background: false })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 1_000)
        const outcome = yield* runFor(handle.outcome, 20_000)
        expect(outcome._tag === "Expired" && outcome.reason).toMatch(/TTL/)
        const settled = yield* p.client.get(handle.key)
        expect((settled.settledAt ?? 0) - (settled.snapshot?.receivedAt ?? 0)).toBeGreaterThanOrEqual(4_000)
      }),
    )
  })

  describe("input_required", () => {
    const asking = slowTool({
      durationMs: 4_000,
      inputSteps: [
        {
          atMs: 1_000,
          requests: {
            name: {
              method: "elicitation/create",
              params: { message: "Name?", requestedSchema: { type: "object" } },
            },
          },
        },
      ],
      outcome: { kind: "result", text: "Hello {{inputs.name.content.name|nobody}}" },
    })

    it.effect("surfaces each key once, stores the answer, and sends it once", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [asking] })
        const asked: Array<string> = []
        const p = yield* startProcess(h, {
          background: false,
          onInputRequired: (request) =>
            Effect.sync(() => {
              asked.push(request.inputKey)
              return { action: "accept", content: { name: "Ada" } }
            }),
        })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 1_000)
        const outcome = yield* runFor(handle.outcome, 30_000)
        expect(outcome._tag === "Completed" && outcome.result.content).toEqual([
          { type: "text", text: "Hello Ada" },
        ])
        expect(asked).toEqual(["name"])
        const [task] = h.server.ledger.snapshot().tasks
        expect(task?.updates.flatMap((u) => u.keys)).toEqual(["name"])
      }),
    )

    it.effect("an answer stored before a crash is re-sent after restart, without asking again", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [asking] })
        const first = yield* startProcess(
          h,
          {
            background: false,
            onInputRequired: () => Effect.succeed({ action: "accept", content: { name: "Ada" } }),
          },
          { at: "fetch", method: "tasks/update", phase: "before-send" },
        )
        const handle = yield* runFor(first.client.callTool("fake", "slow", {}, { key: "ask" }), 1_000)
        yield* elapse(3_000)
        expect(first.crashed()).toBe(true)
        const stored = yield* h.store.get("default", "ask")
        expect(stored._tag === "Some" && stored.value.answers.name?.acknowledged).toBe(false)

        const second = yield* startProcess(h, {
          background: false,
          onInputRequired: () => Effect.die("asked twice"),
        })
        yield* runFor(second.client.reconcile, 1_000)
        const outcome = yield* runFor(second.client.settle(handle.key), 30_000)
        expect(outcome._tag === "Completed" && outcome.result.content).toEqual([
          { type: "text", text: "Hello Ada" },
        ])
        const [task] = h.server.ledger.snapshot().tasks
        expect(task?.updates.flatMap((u) => u.accepted)).toEqual(["name"])
      }),
    )

    it.effect("multi round-trip input before a task exists is answered and the call retried", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [
            {
              name: "confirm",
              shape: "direct",
              mrtrRounds: [{ ok: { method: "elicitation/create", params: { message: "Sure?" } } }],
              outcome: { kind: "result", text: "done" },
            },
          ],
        })
        const p = yield* startProcess(h, {
          background: false,
          onInputRequired: () => Effect.succeed({ action: "accept", content: {} }),
        })
        const handle = yield* runFor(p.client.callTool("fake", "confirm", {}), 1_000)
        const outcome = yield* runFor(handle.outcome, 1_000)
        expect(outcome._tag).toBe("Completed")
        expect(h.server.ledger.snapshot().launches).toHaveLength(1)
      }),
    )
  })

  describe("cancel", () => {
    it.effect("records the intent, sends tasks/cancel, and observes the task to its end", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 60_000 })] })
        // Observed by polls after the cancel (with push, the stream would tell the end instead).
        const p = yield* startProcess(h, { background: false, push: false })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 1_000)
        yield* elapse(2_000)
        const cancelled = yield* runFor(p.client.cancel(handle.key), 1_000)
        expect(cancelled.cancel?.sent).toBe(true)
        const outcome = yield* runFor(handle.outcome, 10_000)
        expect(outcome._tag).toBe("Cancelled")
        const [task] = h.server.ledger.snapshot().tasks
        expect(task?.cancels).toHaveLength(1)
        const pollsAfter = (task?.polls ?? []).filter((t) => t > (task?.cancels[0] ?? 0))
        expect(pollsAfter.length).toBeGreaterThan(0)
      }),
    )

    it.effect("a task that completes despite the cancel is completed: that is its outcome", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 3_000, cancellable: false })] })
        const p = yield* startProcess(h, { background: false })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 1_000)
        yield* runFor(p.client.cancel(handle.key), 1_000)
        const outcome = yield* runFor(handle.outcome, 10_000)
        expect(outcome._tag).toBe("Completed")
      }),
    )

    it.effect("a cancel recorded before a crash is finished by the next process", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 60_000 })] })
        const first = yield* startProcess(
          h,
          { background: false },
          { at: "fetch", method: "tasks/cancel", phase: "before-send" },
        )
        const handle = yield* runFor(first.client.callTool("fake", "slow", {}), 1_000)
        yield* Effect.fork(first.client.cancel(handle.key))
        yield* elapse(500)
        expect(first.crashed()).toBe(true)
        const second = yield* startProcess(h, { background: false })
        yield* runFor(second.client.reconcile, 1_000)
        const outcome = yield* runFor(second.client.settle(handle.key), 10_000)
        expect(outcome._tag).toBe("Cancelled")
        expect(h.server.ledger.snapshot().tasks[0]?.cancels).toHaveLength(1)
      }),
    )
  })

  describe("crash and recovery", () => {
    it.effect("closing the client hands off: no cancel is sent, and the next process finishes the task", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 5_000 })] })
        const first = yield* startProcess(h, { background: false })
        const handle = yield* runFor(first.client.callTool("fake", "slow", {}), 1_000)
        yield* first.close
        // Freed for any instance from its next poll time, one interval from now at the earliest.
        const row = yield* h.store.get("default", handle.key)
        const closedAt = yield* Clock.currentTimeMillis
        expect(row._tag === "Some" && row.value.leaseExpiresAt).toBe(
          row._tag === "Some" && row.value.nextPollAt,
        )
        expect(row._tag === "Some" && (row.value.nextPollAt ?? 0) - closedAt).toBeGreaterThanOrEqual(1_000)
        const second = yield* startProcess(h, { instanceId: "other" })
        const outcome = yield* runFor(second.client.settle(handle.key), 20_000)
        expect(outcome._tag).toBe("Completed")
        expect(h.server.ledger.snapshot().tasks[0]?.cancels).toEqual([])
        expect(h.server.ledger.snapshot().tasks[0]?.earlyPolls).toBe(0)
      }),
    )

    it.effect("an in-doubt call whose arguments were kept as a hash only cannot be reissued", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [slowTool()],
          faults: [{ when: { method: "tools/call", nth: 1 }, fault: { kind: "drop", phase: "after" } }],
        })
        const p = yield* startProcess(h, { background: false, storeArguments: "hash" })
        yield* runFor(p.client.callTool("fake", "slow", { secret: "s3cret" }, { key: "hashed" }), 1_000)
        expect((yield* p.client.get("hashed")).status).toBe("in_doubt")
        const refused = yield* Effect.either(runFor(p.client.reissue("hashed"), 1_000))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("CannotReissue")
        if (Either.isLeft(refused)) expect(refused.left.message).toContain("hash only")
        // Nothing was sent again.
        expect(h.server.ledger.snapshot().tasks).toHaveLength(1)
      }),
    )

    it.effect(
      "a response lost after the server created the task leaves an in-doubt row, never a silent orphan",
      () =>
        Effect.gen(function* () {
          const h = yield* makeHarness({
            tools: [slowTool()],
            deduplicateByKey: true,
            faults: [{ when: { method: "tools/call", nth: 1 }, fault: { kind: "drop", phase: "after" } }],
          })
          const p = yield* startProcess(h, { background: false })
          const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "lost" }), 1_000)
          expect(handle.record.status).toBe("in_doubt")
          const outcome = yield* runFor(handle.outcome, 1_000)
          expect(outcome._tag).toBe("InDoubt")
          checkInvariants(h.server.ledger.snapshot(), yield* allRows(h))
          // The server deduplicates on the key we sent: re-issuing returns the same task.
          const again = yield* runFor(p.client.reissue("lost"), 1_000)
          const settled = yield* runFor(again.outcome, 20_000)
          expect(settled._tag).toBe("Completed")
          const ledger = h.server.ledger.snapshot()
          expect(ledger.tasks).toHaveLength(1)
          expect((yield* p.client.get("lost")).taskId).toBe(ledger.tasks[0]?.taskId)
        }),
    )

    it.effect("a task handle in an otherwise malformed answer is kept and polled, not dropped", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [slowTool()],
          faults: [
            {
              when: { method: "tools/call", nth: 1 },
              fault: { kind: "wrong-shape", shape: "unknown-status" },
            },
          ],
        })
        const p = yield* startProcess(h, { background: false })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 1_000)
        expect(handle.record.taskId).toBe(h.server.ledger.snapshot().tasks[0]?.taskId)
        const outcome = yield* runFor(handle.outcome, 20_000)
        expect(outcome._tag).toBe("Completed")
        checkInvariants(h.server.ledger.snapshot(), yield* allRows(h))
      }),
    )

    it.effect("an answer that arrives after the call timeout still records the handle", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [slowTool()],
          faults: [{ when: { method: "tools/call", nth: 1 }, fault: { kind: "latency", ms: 5_000 } }],
        })
        const p = yield* startProcess(h, { background: false, callTimeout: "1 second" })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 2_000)
        expect(handle.record.status).toBe("in_doubt")
        yield* elapse(5_000)
        const late = yield* p.client.get(handle.key)
        expect(late.status).toBe("working")
        expect(late.taskId).toBe(h.server.ledger.snapshot().tasks[0]?.taskId)
        const outcome = yield* runFor(p.client.settle(handle.key), 20_000)
        expect(outcome._tag).toBe("Completed")
      }),
    )

    it.effect("in-doubt calls of idempotent tools are re-sent under reissue-if-idempotent", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [slowTool({ annotations: { idempotentHint: true } })],
          faults: [{ when: { method: "tools/call", nth: 1 }, fault: { kind: "drop", phase: "before" } }],
        })
        const p = yield* startProcess(h, { background: false, inDoubtPolicy: "reissue-if-idempotent" })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}), 1_000)
        const outcome = yield* runFor(handle.outcome, 20_000)
        expect(outcome._tag).toBe("Completed")
        expect((yield* p.client.get(handle.key)).launches).toBe(2)
      }),
    )

    // A first poll that hears a new interval is written; one that finds nothing new is not
    // (QuietPolls.test.ts), and the lease is what the store holds for it before the next poll.
    const newIntervalAtFirstPoll = {
      pollIntervalMs: [
        { afterMs: 0, pollIntervalMs: 1_000 },
        { afterMs: 500, pollIntervalMs: 900 },
      ],
    }
    const crashPoints: ReadonlyArray<[string, CrashPoint, Partial<Config.Tool>?]> = [
      ["before the intent is written", { at: "store", op: "insertOrGet", phase: "before-write" }],
      ["right after the intent is written", { at: "store", op: "insertOrGet", phase: "after-write" }],
      ["as tools/call leaves", { at: "fetch", method: "tools/call", phase: "before-send" }],
      [
        "after the server answered, before the task id is written",
        { at: "fetch", method: "tools/call", phase: "after-answer" },
      ],
      ["as the task id is written", { at: "store", op: "update", phase: "before-write" }],
      ["right after the task id is written", { at: "store", op: "update", phase: "after-write" }],
      ["after the first poll was answered", { at: "fetch", method: "tasks/get", phase: "after-answer" }],
      [
        "after the first poll is recorded",
        { at: "store", op: "update", nth: 2, phase: "after-write" },
        newIntervalAtFirstPoll,
      ],
      [
        "after the lease of a poll that found nothing new is renewed",
        { at: "store", op: "renewLeases", nth: 1, phase: "after-write" },
      ],
    ]

    for (const [name, point, over] of crashPoints) {
      it.effect(`a crash ${name}: after restart nothing is orphaned or launched twice`, () =>
        Effect.gen(function* () {
          const h = yield* makeHarness({ tools: [slowTool({ durationMs: 3_000, ...over })] })
          // A crash at a poll needs the poll: with push the first one comes only at the safety net.
          const atPoll = name.includes("poll")
          const first = yield* startProcess(
            h,
            { background: false, ...(atPoll ? { push: false } : {}) },
            point,
          )
          yield* Effect.fork(first.client.callTool("fake", "slow", { n: 1 }, { key: "k" }))
          yield* elapse(2_000)
          expect(first.crashed()).toBe(true)

          const second = yield* startProcess(h, { background: false })
          yield* runFor(second.client.reconcile, 1_000)
          const rows = yield* allRows(h)
          checkInvariants(h.server.ledger.snapshot(), rows)
          if (rows.length === 0) {
            expect(h.server.ledger.snapshot().launches).toEqual([])
            return
          }
          const outcome = yield* runFor(second.client.settle("k"), 20_000)
          const launched = h.server.ledger.snapshot().launches.length
          expect(launched).toBeLessThanOrEqual(1)
          // Either we know the task and followed it to its end, or we say honestly that we do not.
          expect(outcome._tag).toBe(
            launched === 1 && (yield* second.client.get("k")).taskId !== null ? "Completed" : "InDoubt",
          )
          checkInvariants(h.server.ledger.snapshot(), yield* allRows(h))
        }),
      )
    }

    it.effect("reconcile spreads the first polls of many open tasks over one interval", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 600_000, pollIntervalMs: 10_000 })] })
        // The first polls are what is weighed: no stream stands in for them.
        const first = yield* startProcess(h, { background: false, push: false })
        yield* runFor(
          Effect.forEach(
            Array.from({ length: 40 }, (_, i) => i),
            (i) => first.client.callTool("fake", "slow", {}, { key: `k${i}` }),
          ),
          2_000,
        )
        first.crash()
        yield* elapse(60_000, 1_000)
        const second = yield* startProcess(h, { background: false, push: false })
        const report = yield* runFor(second.client.reconcile, 1_000)
        expect(report.resumed).toBe(40)
        // Callers waiting on the calls drive them from the rescheduled poll times.
        yield* Effect.forEach(
          Array.from({ length: 40 }, (_, i) => i),
          (i) => Effect.fork(second.client.settle(`k${i}`)),
        )
        yield* elapse(10_000, 100)
        const firstPolls = h.server.ledger
          .snapshot()
          .tasks.map((t) => t.polls[0])
          .filter((t): t is number => t !== undefined)
        expect(firstPolls).toHaveLength(40)
        const spread = Math.max(...firstPolls) - Math.min(...firstPolls)
        expect(spread).toBeGreaterThan(5_000)
        expect(spread).toBeLessThanOrEqual(10_000)
        yield* second.close
      }),
    )
  })

  describe("servers", () => {
    it.effect("settling a call whose server this client does not know fails instead of waiting forever", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool()] })
        const first = yield* startProcess(h, { background: false })
        yield* runFor(first.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
        yield* first.close
        const other = yield* startProcess(h, {
          background: false,
          servers: [{ name: "elsewhere", url: "http://other.test/mcp" }],
        })
        const result = yield* Effect.either(runFor(other.client.settle("k"), 1_000))
        expect(Either.isLeft(result) && result.left._tag).toBe("UnknownServer")
      }),
    )
  })

  describe("one driver per row", () => {
    it.effect("the background reconciler never takes a row from this instance's own driving fibers", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 6_000, pollIntervalMs: 300 })] })
        let conflicts = 0
        const counted: Harness = {
          ...h,
          store: {
            ...h.store,
            update: (record) =>
              h.store
                .update(record)
                .pipe(Effect.tapErrorTag("VersionConflict", () => Effect.sync(() => conflicts++))),
          },
        }
        const p = yield* startProcess(counted, { background: { tickMs: 100 } })
        const handles = yield* runFor(
          Effect.forEach(
            Array.from({ length: 10 }, (_, i) => i),
            (i) => p.client.callTool("fake", "slow", {}, { key: `k${i}` }),
          ),
          1_000,
        )
        yield* runFor(
          Effect.forEach(handles, (handle) => handle.outcome),
          20_000,
        )
        expect(conflicts).toBe(0)
        expect(h.server.ledger.snapshot().tasks.map((t) => t.earlyPolls)).toEqual(Array(10).fill(0))
        yield* p.close
      }),
    )

    it.effect("manual reconciles, the background reconciler and settle never poll a task early", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 8_000, pollIntervalMs: 700 })] })
        const first = yield* startProcess(h, { background: false })
        yield* runFor(
          Effect.forEach(
            Array.from({ length: 10 }, (_, i) => i),
            (i) => first.client.callTool("fake", "slow", {}, { key: `k${i}` }),
          ),
          1_000,
        )
        first.crash()
        const second = yield* startProcess(h, { background: { tickMs: 100 } })
        yield* Effect.fork(Effect.repeatN(second.client.reconcile, 30))
        // Callers arrive on the reconciler's ticks, when it may be in the middle of polling a row.
        yield* Effect.forEach(
          Array.from({ length: 10 }, (_, i) => i),
          (i) =>
            Effect.fork(
              Effect.sleep(Duration.millis(100 * (5 + 7 * i))).pipe(
                Effect.zipRight(second.client.settle(`k${i}`)),
              ),
            ),
        )
        yield* elapse(15_000, 50)
        const tasks = h.server.ledger.snapshot().tasks
        expect(tasks.map((t) => t.terminalStatus)).toEqual(Array(10).fill("completed"))
        expect(tasks.map((t) => t.earlyPolls)).toEqual(Array(10).fill(0))
        yield* second.close
      }),
    )
  })

  describe("list and gc", () => {
    it.effect("lists by status and collects only old terminal rows", () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [slowTool({ durationMs: 50_000 }), { name: "echo", shape: "direct" }],
          faults: [
            { when: { method: "tools/call", tool: "echo", nth: 2 }, fault: { kind: "drop", phase: "after" } },
          ],
        })
        const p = yield* startProcess(h, { background: false })
        const done = yield* runFor(p.client.callTool("fake", "echo", {}, { key: "done" }), 1_000)
        yield* runFor(p.client.callTool("fake", "echo", { x: 1 }, { key: "doubt" }), 1_000)
        yield* runFor(done.outcome, 1_000)
        const open = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "open" }), 1_000)
        const inDoubt = yield* p.client.list({ statuses: ["in_doubt"] })
        expect(inDoubt.records.map((r) => r.key)).toEqual(["doubt"])
        yield* elapse(60_000, 1_000)
        yield* runFor(open.outcome, 1_000)
        expect((yield* p.client.gc("30 seconds")).deleted).toBe(1)
        const left = yield* p.client.list()
        expect(left.records.map((r) => r.key).sort()).toEqual(["doubt", "open"])
        const foreign = yield* p.client.list({ scope: "someone-else" })
        expect(foreign.records).toEqual([])
      }),
    )
  })
})
