import { describe, expect, it } from "vitest"
import type * as Config from "../src/Config.js"
import * as FakeServer from "../src/FakeServer.js"
import * as Persistence from "../src/Persistence.js"
import * as ServerClock from "../src/ServerClock.js"
import { type AnyJson, call, errorOf, rpc } from "./helpers.js"

const T0 = Date.UTC(2026, 6, 28, 12)

const serverWith = (tools: Config.Tool[], extra: Partial<Config.Config> = {}) => {
  const clock = ServerClock.manual(T0)
  return { clock, server: FakeServer.unsafeMake({ tools, ...extra }, { clock }) }
}

const start = async (
  server: ReturnType<typeof FakeServer.unsafeMake>,
  name: string,
  args: Record<string, unknown> = {},
) => call(server, "tools/call", { name, arguments: args })

const get = (server: ReturnType<typeof FakeServer.unsafeMake>, taskId: string) =>
  call(server, "tasks/get", { taskId })

describe("result shape", () => {
  it("task and direct shapes", async () => {
    const { server } = serverWith([
      { name: "t", shape: "task" },
      { name: "d", shape: "direct" },
    ])
    expect((await start(server, "t")).resultType).toBe("task")
    expect((await start(server, "d")).resultType).toBe("complete")
  })

  it("a seeded probability mixes shapes, identically for the same seed", async () => {
    const shapes = async (seed: number) => {
      const { server } = serverWith([{ name: "r", shape: { taskProbability: 0.5 } }], { seed })
      const out: string[] = []
      for (let i = 0; i < 40; i++) out.push((await start(server, "r")).resultType)
      return out
    }
    const first = await shapes(7)
    expect(await shapes(7)).toEqual(first)
    expect(await shapes(8)).not.toEqual(first)
    const tasks = first.filter((shape) => shape === "task").length
    expect(tasks).toBeGreaterThan(8)
    expect(tasks).toBeLessThan(32)
  })

  it("tools inherit defaults and override them", async () => {
    const { server, clock } = serverWith([{ name: "a" }, { name: "b", durationMs: 10 }], {
      defaults: { durationMs: 500, pollIntervalMs: 42, ttlMs: 9000 },
    })
    const a = await start(server, "a")
    const b = await start(server, "b")
    expect(a).toMatchObject({ pollIntervalMs: 42, ttlMs: 9000 })
    clock.advance(10)
    expect((await get(server, b.taskId)).status).toBe("completed")
    expect((await get(server, a.taskId)).status).toBe("working")
  })
})

describe("duration", () => {
  it("reads a duration from an argument, with a default", async () => {
    const { server, clock } = serverWith([
      { name: "slow", durationMs: { fromArgument: "seconds", multiplier: 1000, defaultMs: 50 } },
    ])
    const three = await start(server, "slow", { seconds: 3 })
    const fallback = await start(server, "slow", { seconds: "x" })
    clock.advance(50)
    expect((await get(server, fallback.taskId)).status).toBe("completed")
    clock.advance(2949)
    expect((await get(server, three.taskId)).status).toBe("working")
    clock.advance(1)
    expect((await get(server, three.taskId)).status).toBe("completed")
  })
})

describe("pollIntervalMs", () => {
  it("changes over the task's life on a schedule (odd values pass through)", async () => {
    const { server, clock } = serverWith([
      {
        name: "p",
        durationMs: 100_000,
        pollIntervalMs: [
          { afterMs: 0, pollIntervalMs: 1000 },
          { afterMs: 5000, pollIntervalMs: 0 },
          { afterMs: 10_000, pollIntervalMs: 2.5 },
        ],
      },
      { name: "none", durationMs: 10 },
    ])
    const created = await start(server, "p")
    expect(created.pollIntervalMs).toBe(1000)
    clock.advance(5000)
    expect((await get(server, created.taskId)).pollIntervalMs).toBe(0)
    clock.advance(5000)
    expect((await get(server, created.taskId)).pollIntervalMs).toBe(2.5)
    expect(await start(server, "none")).not.toHaveProperty("pollIntervalMs")
  })
})

describe("ttlMs and expiry", () => {
  it("rejects an expired task with -32602, then forgets it after the purge delay", async () => {
    const { server, clock } = serverWith([{ name: "e", durationMs: 10_000, ttlMs: 1000 }], {
      expiry: { purgeAfterMs: 500 },
    })
    const created = await start(server, "e")
    clock.advance(999)
    expect((await get(server, created.taskId)).status).toBe("working")
    clock.advance(1)
    expect(await errorOf(server, "tasks/get", { taskId: created.taskId })).toMatchObject({
      code: -32602,
      message: "Failed to retrieve task: Task has expired",
    })
    expect(await errorOf(server, "tasks/cancel", { taskId: created.taskId })).toMatchObject({ code: -32602 })
    clock.advance(500)
    expect(await errorOf(server, "tasks/get", { taskId: created.taskId })).toMatchObject({
      code: -32602,
      message: "Failed to retrieve task: Task not found",
    })
    expect(server.ledger.task(created.taskId)?.purgedAt).toBe(T0 + 1500)
    expect(server.taskIds()).toEqual([])
  })

  it("can fail expired tasks instead (the spec allows it); finished tasks keep their outcome", async () => {
    const { server, clock } = serverWith(
      [
        { name: "long", durationMs: 10_000, ttlMs: 1000 },
        { name: "short", durationMs: 10, ttlMs: 1000 },
      ],
      { expiry: { mode: "fail" } },
    )
    const long = await start(server, "long")
    const short = await start(server, "short")
    clock.advance(1000)
    expect(await get(server, long.taskId)).toMatchObject({ status: "failed", error: { code: -32603 } })
    expect(await get(server, short.taskId)).toMatchObject({ status: "completed" })
  })

  it("ttlMs null never expires", async () => {
    const { server, clock } = serverWith([{ name: "forever", durationMs: 1, ttlMs: null }])
    const created = await start(server, "forever")
    expect(created.ttlMs).toBeNull()
    clock.advance(1e12)
    expect((await get(server, created.taskId)).status).toBe("completed")
  })
})

describe("input_required scripts", () => {
  const ask = (message: string) => ({
    method: "elicitation/create",
    params: { mode: "form", message, requestedSchema: { type: "object", properties: {} } },
  })

  it("blocks at a step's working time, takes partial answers, ignores unknown keys, resumes", async () => {
    const { server, clock } = serverWith([
      {
        name: "ask",
        durationMs: 1000,
        inputSteps: [
          { atMs: 200, requests: { a: ask("A?"), b: ask("B?") }, statusMessage: "need a and b" },
          { atMs: 600, requests: { c: ask("C {{inputs.a.content.v}}?") } },
        ],
        outcome: {
          kind: "result",
          text: "{{inputs.a.content.v}}-{{inputs.b.content.v}}-{{inputs.c.content.v}}",
        },
      },
    ])
    const created = await start(server, "ask")
    clock.advance(199)
    expect((await get(server, created.taskId)).status).toBe("working")
    clock.advance(1)
    const blocked = await get(server, created.taskId)
    expect(blocked).toMatchObject({ status: "input_required", statusMessage: "need a and b" })
    expect(Object.keys(blocked.inputRequests)).toEqual(["a", "b"])

    // A partial answer (plus a key never issued) leaves the task waiting on the rest.
    clock.advance(100)
    const ack = await call(server, "tasks/update", {
      taskId: created.taskId,
      inputResponses: { a: { action: "accept", content: { v: "1" } }, zzz: { ignored: true } },
    })
    expect(ack).toEqual({ resultType: "complete" })
    const partial = await get(server, created.taskId)
    expect(Object.keys(partial.inputRequests)).toEqual(["b"])
    expect(server.ledger.task(created.taskId)?.updates).toEqual([
      { at: T0 + 300, keys: ["a", "zzz"], accepted: ["a"] },
    ])

    // Answering b resumes work; 400 ms of work later the next step asks c.
    clock.advance(100)
    await call(server, "tasks/update", {
      taskId: created.taskId,
      inputResponses: { b: { action: "accept", content: { v: "2" } } },
    })
    // An answer to an already answered key is ignored.
    await call(server, "tasks/update", {
      taskId: created.taskId,
      inputResponses: { a: { action: "accept", content: { v: "X" } } },
    })
    expect((await get(server, created.taskId)).status).toBe("working")
    clock.advance(400)
    const second = await get(server, created.taskId)
    expect(second.inputRequests.c.params.message).toBe("C 1?")
    await call(server, "tasks/update", {
      taskId: created.taskId,
      inputResponses: { c: { action: "accept", content: { v: "3" } } },
    })
    clock.advance(399)
    expect((await get(server, created.taskId)).status).toBe("working")
    clock.advance(1)
    const done = await get(server, created.taskId)
    expect(done).toMatchObject({ status: "completed", result: { content: [{ text: "1-2-3" }] } })
    expect(done.lastUpdatedAt).toBe(new Date(T0 + 1200).toISOString())
  })
})

describe("multi round-trip tools/call", () => {
  const rounds = [
    { who: { method: "elicitation/create", params: { message: "Who?" } } },
    {
      why: { method: "elicitation/create", params: { message: "Why?" } },
      model: { method: "sampling/createMessage", params: {} },
    },
  ]
  const capabilities = { elicitation: {}, sampling: {}, extensions: { "io.modelcontextprotocol/tasks": {} } }

  it("asks round by round with requestState, then launches with the gathered answers", async () => {
    const { server } = serverWith([
      {
        name: "m",
        mrtrRounds: rounds,
        shape: "direct",
        outcome: { kind: "result", text: "{{inputs.who.content.name}}/{{inputs.why.content.r}}" },
      },
    ])
    const first = await call(server, "tools/call", { name: "m" }, { capabilities })
    expect(first.resultType).toBe("input_required")
    expect(Object.keys(first.inputRequests)).toEqual(["who"])
    expect(first).not.toHaveProperty("taskId")
    const second = await call(
      server,
      "tools/call",
      {
        name: "m",
        requestState: first.requestState,
        inputResponses: { who: { action: "accept", content: { name: "Ada" } } },
      },
      { capabilities },
    )
    expect(Object.keys(second.inputRequests)).toEqual(["why", "model"])
    // A partial answer re-asks only what is missing.
    const partial = await call(
      server,
      "tools/call",
      {
        name: "m",
        requestState: second.requestState,
        inputResponses: { why: { action: "accept", content: { r: "fun" } } },
      },
      { capabilities },
    )
    expect(Object.keys(partial.inputRequests)).toEqual(["model"])
    expect(server.ledger.launches).toHaveLength(0)
    const done = await call(
      server,
      "tools/call",
      {
        name: "m",
        requestState: partial.requestState,
        inputResponses: { model: { role: "assistant", content: {} } },
      },
      { capabilities },
    )
    expect(done).toEqual({ resultType: "complete", content: [{ type: "text", text: "Ada/fun" }] })
    expect(server.ledger.launches).toHaveLength(1)
  })

  it("rejects tampered state (-32602) and a client without the needed capability (-32021)", async () => {
    const { server } = serverWith([{ name: "m", mrtrRounds: rounds }])
    expect(
      await errorOf(server, "tools/call", { name: "m", requestState: "garbage" }, { capabilities }),
    ).toMatchObject({
      code: -32602,
    })
    expect(await errorOf(server, "tools/call", { name: "m" }, { capabilities: {} })).toMatchObject({
      status: 400,
      code: -32021,
      data: { requiredCapabilities: { elicitation: {} } },
    })
  })
})

describe("outcomes", () => {
  it("completed, completed with isError, failed with a JSON-RPC error", async () => {
    const { server, clock } = serverWith([
      { name: "ok", outcome: { kind: "result", text: "yes", structuredContent: { n: 1 } } },
      { name: "tool_error", outcome: { kind: "result", text: "no", isError: true } },
      {
        name: "rpc_error",
        outcome: { kind: "error", code: -32001, message: "boom {{args.x}}", data: { x: "{{args.x}}" } },
      },
      { name: "direct_error", shape: "direct", outcome: { kind: "error", code: -32603, message: "nope" } },
    ])
    const ids = [
      await start(server, "ok"),
      await start(server, "tool_error"),
      await start(server, "rpc_error", { x: "7" }),
    ]
    clock.advance(1)
    const [ok, toolError, rpcError] = await Promise.all(
      ids.map((created: AnyJson) => get(server, created.taskId)),
    )
    expect(ok).toMatchObject({
      status: "completed",
      result: { content: [{ text: "yes" }], structuredContent: { n: 1 } },
    })
    expect(toolError).toMatchObject({ status: "completed", result: { isError: true } })
    expect(rpcError).toMatchObject({
      status: "failed",
      error: { code: -32001, message: "boom 7", data: { x: "7" } },
    })
    expect(rpcError).not.toHaveProperty("result")
    expect(await errorOf(server, "tools/call", { name: "direct_error" })).toMatchObject({
      status: 200,
      code: -32603,
    })
    expect(server.ledger.launches.at(-1)).toMatchObject({ tool: "direct_error", resultType: "error" })
  })

  it("weighted outcomes are drawn from the seed", async () => {
    const outcomes = async (seed: number) => {
      const { server, clock } = serverWith(
        [
          {
            name: "w",
            outcome: {
              weighted: [
                { weight: 1, outcome: { kind: "result", text: "a" } },
                { weight: 1, outcome: { kind: "error", code: -1, message: "b" } },
              ],
            },
          },
        ],
        { seed },
      )
      const ids: string[] = []
      for (let i = 0; i < 20; i++) ids.push((await start(server, "w")).taskId)
      clock.advance(1)
      return Promise.all(ids.map(async (id) => (await get(server, id)).status))
    }
    const first = await outcomes(3)
    expect(await outcomes(3)).toEqual(first)
    expect(new Set(first)).toEqual(new Set(["completed", "failed"]))
  })
})

describe("cancellation", () => {
  it("cancellable tasks cancel (after an optional delay); uncancellable ones run to the end", async () => {
    const { server, clock } = serverWith([
      { name: "c", durationMs: 1000, cancelDelayMs: 100 },
      { name: "u", durationMs: 1000, cancellable: false },
      { name: "race", durationMs: 150, cancelDelayMs: 200 },
    ])
    const c = await start(server, "c")
    const u = await start(server, "u")
    const race = await start(server, "race")
    for (const task of [c, u, race]) await call(server, "tasks/cancel", { taskId: task.taskId })
    clock.advance(99)
    expect((await get(server, c.taskId)).status).toBe("working")
    clock.advance(1)
    expect(await get(server, c.taskId)).toMatchObject({
      status: "cancelled",
      lastUpdatedAt: new Date(T0 + 100).toISOString(),
    })
    clock.advance(1000)
    expect((await get(server, u.taskId)).status).toBe("completed")
    // The work finished before the cancel took effect: completed is the outcome.
    expect((await get(server, race.taskId)).status).toBe("completed")
    expect(server.ledger.task(c.taskId)?.cancels).toEqual([T0])
  })
})

describe("rate limits", () => {
  it("a global limit answers 429 with Retry-After, on the clock's windows", async () => {
    const { server, clock } = serverWith([{ name: "d", shape: "direct" }], {
      rateLimit: { max: 2, windowMs: 10_000 },
    })
    expect((await rpc(server, "tools/call", { name: "d" })).status).toBe(200)
    expect((await rpc(server, "tools/list")).status).toBe(200)
    const limited = await rpc(server, "tools/call", { name: "d" })
    expect(limited.status).toBe(429)
    expect(limited.headers.get("retry-after")).toBe("10")
    expect(server.ledger.launches).toHaveLength(1)
    clock.advance(10_000)
    expect((await rpc(server, "tools/call", { name: "d" })).status).toBe(200)
  })

  it("a per-tool limit only counts that tool's calls", async () => {
    const { server } = serverWith([
      { name: "limited", shape: "direct", rateLimit: { max: 1, windowMs: 1000, retryAfterSeconds: 3 } },
      { name: "free", shape: "direct" },
    ])
    expect((await rpc(server, "tools/call", { name: "limited" })).status).toBe(200)
    const limited = await rpc(server, "tools/call", { name: "limited" })
    expect([limited.status, limited.headers.get("retry-after")]).toEqual([429, "3"])
    expect((await rpc(server, "tools/call", { name: "free" })).status).toBe(200)
  })
})

describe("idempotency keys", () => {
  it("deduplicates launches by key when asked to", async () => {
    const { server } = serverWith([{ name: "t", durationMs: 100 }], { deduplicateByKey: true })
    const first = await call(server, "tools/call", { name: "t" }, { key: "k1" })
    const again = await call(server, "tools/call", { name: "t" }, { key: "k1" })
    expect(again.taskId).toBe(first.taskId)
    expect(server.ledger.launchesForKey("k1")).toHaveLength(1)
    const other = await call(server, "tools/call", { name: "t" }, { key: "k2" })
    expect(other.taskId).not.toBe(first.taskId)
  })

  it("keeps deduplicating across a durable restart, but not after a lossy one", async () => {
    const durable = FakeServer.unsafeMake(
      { tools: [{ name: "t", durationMs: 100 }], deduplicateByKey: true },
      { persistence: Persistence.memory() },
    )
    const first = await call(durable, "tools/call", { name: "t" }, { key: "k" })
    durable.restart()
    expect((await call(durable, "tools/call", { name: "t" }, { key: "k" })).taskId).toBe(first.taskId)

    const lossy = FakeServer.unsafeMake({ tools: [{ name: "t", durationMs: 100 }], deduplicateByKey: true })
    const before = await call(lossy, "tools/call", { name: "t" }, { key: "k" })
    lossy.restart()
    expect((await call(lossy, "tools/call", { name: "t" }, { key: "k" })).taskId).not.toBe(before.taskId)
    expect(lossy.ledger.launchesForKey("k")).toHaveLength(2)
  })

  it("launches again by default (a plain server ignores the key)", async () => {
    const { server } = serverWith([{ name: "t" }])
    await call(server, "tools/call", { name: "t" }, { key: "k" })
    await call(server, "tools/call", { name: "t" }, { key: "k" })
    expect(server.ledger.launchesForKey("k")).toHaveLength(2)
  })
})

describe("timestamps and capabilities", () => {
  it("skews every reported timestamp", async () => {
    const { server } = serverWith([{ name: "t", durationMs: 10 }], { timestampSkewMs: -3_600_000 })
    const created = await start(server, "t")
    expect(created.createdAt).toBe(new Date(T0 - 3_600_000).toISOString())
    expect(server.ledger.task(created.taskId)?.createdAt).toBe(T0)
  })

  it("a tool needing a client capability answers -32021 naming it", async () => {
    const { server } = serverWith([{ name: "s", requiresClientCapabilities: { sampling: {} } }])
    expect(await errorOf(server, "tools/call", { name: "s" })).toMatchObject({
      status: 400,
      code: -32021,
      data: { requiredCapabilities: { sampling: {} } },
    })
  })

  it("advertises configured server info, versions and tool metadata", async () => {
    const { server } = serverWith(
      [
        {
          name: "t",
          title: "T",
          description: "d",
          inputSchema: { type: "object", properties: { a: { type: "string" } } },
        },
      ],
      { serverInfo: { name: "x", version: "9" } },
    )
    expect((await call(server, "server/discover"))._meta["io.modelcontextprotocol/serverInfo"]).toEqual({
      name: "x",
      version: "9",
    })
    expect((await call(server, "tools/list")).tools[0]).toMatchObject({ title: "T", description: "d" })
  })
})
