import { describe, expect, it } from "vitest"
import type * as Config from "../src/Config.js"
import * as FakeServer from "../src/FakeServer.js"
import * as Persistence from "../src/Persistence.js"
import * as ServerClock from "../src/ServerClock.js"
import { call, errorOf, request, rpc } from "./helpers.js"

const T0 = Date.UTC(2026, 6, 28)
const tools: Config.Config["tools"] = [
  { name: "job", durationMs: 1000, pollIntervalMs: 100 },
  { name: "direct", shape: "direct" },
]

const withFault = (
  fault: Config.Fault,
  when: Config.FaultMatch = { method: "tools/call" },
  options: FakeServer.Options = {},
) => {
  const clock = ServerClock.manual(T0)
  return { clock, server: FakeServer.unsafeMake({ tools, faults: [{ when, fault }] }, { clock, ...options }) }
}

describe("dropped connections", () => {
  it("after: the task is created, then the response body breaks (error-body style)", async () => {
    const { server } = withFault({ kind: "drop" })
    const response = await server.handler(request("tools/call", { name: "job" }, { key: "k1" }))
    await expect(response.text()).rejects.toBeInstanceOf(FakeServer.ConnectionDropped)
    // The server holds a task the client never heard of: the orphan window.
    expect(server.taskIds()).toHaveLength(1)
    expect(server.ledger.launches).toEqual([
      expect.objectContaining({
        tool: "job",
        idempotencyKey: "k1",
        responseDelivered: false,
        fault: "drop:after",
      }),
    ])
    const taskId = server.ledger.launches[0]?.taskId as string
    expect((await call(server, "tasks/get", { taskId })).status).toBe("working")
    expect(server.ledger.requests[0]).toMatchObject({
      method: "tools/call",
      outcome: "dropped",
      fault: "drop:after",
    })
  })

  it("throw style rejects the handler itself", async () => {
    const { server } = withFault({ kind: "drop" }, { method: "tools/call" }, { dropStyle: "throw" })
    await expect(server.handler(request("tools/call", { name: "job" }))).rejects.toBeInstanceOf(
      FakeServer.ConnectionDropped,
    )
    expect(server.taskIds()).toHaveLength(1)
  })

  it("before: nothing happens on the server", async () => {
    const { server } = withFault({ kind: "drop", phase: "before" })
    expect(await server.serve(request("tools/call", { name: "job" }))).toEqual({ kind: "drop" })
    expect(server.taskIds()).toHaveLength(0)
    expect(server.ledger.launches).toHaveLength(0)
  })

  it("can hit polls too, leaving the task untouched", async () => {
    const { server } = withFault({ kind: "drop" }, { method: "tasks/get" })
    const created = await call(server, "tools/call", { name: "job" })
    expect((await server.serve(request("tasks/get", { taskId: created.taskId }))).kind).toBe("drop")
    expect(server.ledger.pollCount(created.taskId)).toBe(1)
  })
})

describe("HTTP status faults", () => {
  it.each([500, 503])("%i before processing launches nothing", async (status) => {
    const { server } = withFault({ kind: "status", status })
    const reply = await rpc(server, "tools/call", { name: "job" })
    expect(reply.status).toBe(status)
    expect(server.ledger.launches).toHaveLength(0)
  })

  it("429 carries Retry-After", async () => {
    const { server } = withFault({ kind: "status", status: 429, retryAfter: 7 })
    const reply = await rpc(server, "tools/call", { name: "job" })
    expect([reply.status, reply.headers.get("retry-after")]).toEqual([429, "7"])
  })

  it("a 500 after processing hides a task that exists", async () => {
    const { server } = withFault({ kind: "status", status: 500, phase: "after", body: "oops" })
    const reply = await rpc(server, "tools/call", { name: "job" })
    expect([reply.status, reply.body]).toEqual([500, "oops"])
    expect(server.taskIds()).toHaveLength(1)
    expect(server.ledger.launches[0]).toMatchObject({ responseDelivered: false, fault: "status:500:after" })
  })
})

describe("latency", () => {
  it("waits through the injected sleep before answering", async () => {
    const slept: number[] = []
    const { server } = withFault(
      { kind: "latency", ms: 2500 },
      { method: "tools/list" },
      {
        sleep: async (ms) => {
          slept.push(ms)
        },
      },
    )
    await call(server, "tools/list")
    await call(server, "server/discover")
    expect(slept).toEqual([2500])
  })

  it("takes the clock after the wait (a virtual clock can advance during it)", async () => {
    const clock = ServerClock.manual(T0)
    const server = FakeServer.unsafeMake(
      { tools, faults: [{ when: { method: "tools/call" }, fault: { kind: "latency", ms: 300 } }] },
      { clock, sleep: async (ms) => clock.advance(ms) },
    )
    const created = await call(server, "tools/call", { name: "job" })
    expect(created.createdAt).toBe(new Date(T0 + 300).toISOString())
  })
})

describe("late answers and in-flight times", () => {
  it("latency after: the task is created at once, the answer leaves later; the ledger has both ends", async () => {
    const clock = ServerClock.manual(T0)
    const server = FakeServer.unsafeMake(
      {
        tools,
        faults: [{ when: { method: "tools/call" }, fault: { kind: "latency", ms: 5000, phase: "after" } }],
      },
      { clock, sleep: async (ms) => clock.advance(ms) },
    )
    const created = await call(
      server,
      "tools/call",
      { name: "job" },
      { key: "k1", headers: { "x-client-id": "a" } },
    )
    // Created before the wait: the client that gave up meanwhile still gets a live task's id.
    expect(created.createdAt).toBe(new Date(T0).toISOString())
    expect(server.ledger.requests[0]).toMatchObject({
      method: "tools/call",
      startedAt: T0,
      at: T0,
      endedAt: T0 + 5000,
      idempotencyKey: "k1",
      client: "a",
      fault: "latency:5000:after",
    })
  })

  it("faults passed with one request apply to that request only", async () => {
    const clock = ServerClock.manual(T0)
    const server = FakeServer.unsafeMake({ tools }, { clock })
    const first = await server.handler(request("tools/call", { name: "job" }, { key: "k1" }), [
      { kind: "status", status: 503, phase: "after" },
    ])
    expect(first.status).toBe(503)
    expect(server.taskIds()).toHaveLength(1)
    const second = await server.handler(request("tools/call", { name: "job" }, { key: "k2" }))
    expect(second.status).toBe(200)
    expect(server.ledger.launches.map((l) => l.fault)).toEqual(["status:503:after", null])
  })
})

describe("malformed answers", () => {
  it("malformed JSON after processing", async () => {
    const { server } = withFault({ kind: "malformed-json" })
    const response = await server.handler(request("tools/call", { name: "job" }))
    expect(response.status).toBe(200)
    await expect(response.json()).rejects.toThrow()
    expect(server.taskIds()).toHaveLength(1)
    expect(server.ledger.requests[0]?.outcome).toBe("malformed")
  })

  it.each([
    [
      "missing-result-type",
      (r: Record<string, unknown>) => expect(r.result).not.toHaveProperty("resultType"),
    ],
    [
      "unknown-result-type",
      (r: Record<string, unknown>) => expect(r.result).toMatchObject({ resultType: "mystery" }),
    ],
    ["missing-task-id", (r: Record<string, unknown>) => expect(r.result).not.toHaveProperty("taskId")],
    [
      "unknown-status",
      (r: Record<string, unknown>) => expect(r.result).toMatchObject({ status: "exploded" }),
    ],
    [
      "string-poll-interval",
      (r: Record<string, unknown>) => expect(r.result).toMatchObject({ pollIntervalMs: "soon" }),
    ],
    ["result-not-object", (r: Record<string, unknown>) => expect(r.result).toBe("not an object")],
    ["missing-jsonrpc", (r: Record<string, unknown>) => expect(r).not.toHaveProperty("jsonrpc")],
    ["wrong-id", (r: Record<string, unknown>) => expect(r.id).toBe(1_000_077)],
  ] as const)("wrong shape %s", async (shape, check) => {
    const { server } = withFault({ kind: "wrong-shape", shape })
    const reply = await rpc(server, "tools/call", { name: "job" }, { id: 77 })
    check(reply.body)
    expect(server.ledger.launches[0]).toMatchObject({
      responseDelivered: true,
      fault: `wrong-shape:${shape}`,
    })
  })

  it("replaces the result wholesale", async () => {
    const { server } = withFault({
      kind: "wrong-shape",
      shape: { replaceResult: { __proto__: { x: 1 }, deep: [[[]]] } },
    })
    const reply = await rpc(server, "tools/call", { name: "job" })
    expect(reply.body.result).toEqual({ deep: [[[]]] })
  })
})

describe("restarts", () => {
  it("a restart loses in-memory tasks: polls get -32602 and the ledger marks them lost", async () => {
    const { server, clock } = withFault({ kind: "restart" }, { method: "tasks/get" })
    const created = await call(server, "tools/call", { name: "job" })
    clock.advance(10)
    expect(await errorOf(server, "tasks/get", { taskId: created.taskId })).toMatchObject({ code: -32602 })
    expect(server.ledger.restarts).toEqual([{ at: T0 + 10, durable: false, lostTaskIds: [created.taskId] }])
    expect(server.ledger.task(created.taskId)?.lostAt).toBe(T0 + 10)
  })

  it("a durable server keeps tasks, answers and cancels across restart()", async () => {
    const clock = ServerClock.manual(T0)
    const persistence = Persistence.memory()
    const server = FakeServer.unsafeMake({ tools }, { clock, persistence })
    const created = await call(server, "tools/call", { name: "job" })
    await call(server, "tasks/cancel", { taskId: created.taskId })
    expect(server.restart()).toEqual({ at: T0, durable: true, lostTaskIds: [] })
    expect((await call(server, "tasks/get", { taskId: created.taskId })).status).toBe("cancelled")
    // A second server over the same store is a new process finding the old tasks.
    const reborn = FakeServer.unsafeMake({ tools }, { clock, persistence })
    expect(reborn.taskIds()).toEqual([created.taskId])
  })
})

describe("skewed timestamps", () => {
  it("a skew fault shifts only the faulted response", async () => {
    const { server } = withFault({ kind: "skew", ms: 60_000 }, { method: "tools/call", nth: 1 })
    const skewed = await call(server, "tools/call", { name: "job" })
    const plain = await call(server, "tools/call", { name: "job" })
    expect(Date.parse(skewed.createdAt) - Date.parse(plain.createdAt)).toBe(60_000)
  })
})

describe("schedules", () => {
  it("nth, times and tool matching are exact", async () => {
    const clock = ServerClock.manual(T0)
    const server = FakeServer.unsafeMake(
      {
        tools,
        faults: [
          { when: { tool: "job", nth: [2, 4] }, fault: { kind: "status", status: 503 } },
          { when: { method: "tools/list", times: 1 }, fault: { kind: "status", status: 500 } },
        ],
      },
      { clock },
    )
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await rpc(server, "tools/call", { name: "job" })).status)
    expect(statuses).toEqual([200, 503, 200, 503, 200])
    expect((await rpc(server, "tools/call", { name: "direct" })).status).toBe(200)
    expect((await rpc(server, "tools/list")).status).toBe(500)
    expect((await rpc(server, "tools/list")).status).toBe(200)
  })

  it("probabilistic faults are reproducible from the seed", async () => {
    const run = async (seed: number) => {
      const server = FakeServer.unsafeMake({
        tools,
        seed,
        faults: [
          { when: { method: "tools/list", probability: 0.3 }, fault: { kind: "status", status: 503 } },
        ],
      })
      const statuses: number[] = []
      for (let i = 0; i < 50; i++) statuses.push((await rpc(server, "tools/list")).status)
      return statuses
    }
    const first = await run(11)
    expect(await run(11)).toEqual(first)
    const failures = first.filter((status) => status === 503).length
    expect(failures).toBeGreaterThan(5)
    expect(failures).toBeLessThan(30)
  })
})
