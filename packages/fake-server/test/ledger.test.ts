import { describe, expect, it } from "vitest"
import * as FakeServer from "../src/FakeServer.js"
import * as ServerClock from "../src/ServerClock.js"
import { call } from "./helpers.js"

const T0 = Date.UTC(2026, 6, 28)

const setup = () => {
  const clock = ServerClock.manual(T0)
  const server = FakeServer.unsafeMake(
    {
      tools: [
        { name: "job", durationMs: 1000, pollIntervalMs: 300 },
        { name: "direct", shape: "direct" },
      ],
    },
    { clock },
  )
  return { clock, server }
}

describe("launch ledger", () => {
  it("records every launch with arguments, idempotency key, task id and time", async () => {
    const { server, clock } = setup()
    const created = await call(server, "tools/call", { name: "job", arguments: { n: 1 } }, { key: "key-1" })
    clock.advance(5)
    await call(server, "tools/call", { name: "direct", arguments: { n: 2 } })
    expect(server.ledger.launches).toEqual([
      {
        seq: 1,
        tool: "job",
        arguments: { n: 1 },
        idempotencyKey: "key-1",
        taskId: created.taskId,
        resultType: "task",
        at: T0,
        responseDelivered: true,
        fault: null,
      },
      expect.objectContaining({
        seq: 2,
        tool: "direct",
        idempotencyKey: null,
        taskId: null,
        resultType: "complete",
        at: T0 + 5,
      }),
    ])
    expect(server.ledger.launchesForKey("key-1")).toHaveLength(1)
  })

  it("counts polls with their times, early polls, and the first terminal observation", async () => {
    const { server, clock } = setup()
    const { taskId } = await call(server, "tools/call", { name: "job" })
    for (const step of [300, 100, 300, 300, 300]) {
      clock.advance(step)
      await call(server, "tasks/get", { taskId })
    }
    const entry = server.ledger.task(taskId)
    expect(entry?.polls).toEqual([T0 + 300, T0 + 400, T0 + 700, T0 + 1000, T0 + 1300])
    expect(server.ledger.pollCount(taskId)).toBe(5)
    expect(entry?.earlyPolls).toBe(1)
    expect(entry).toMatchObject({ terminalSeenAt: T0 + 1000, terminalStatus: "completed" })
  })

  it("logs every request with its method, HTTP status and error code", async () => {
    const { server } = setup()
    await call(server, "tools/list")
    await server.handler(new Request("http://x/mcp", { method: "POST", body: "nope" }))
    expect(server.ledger.requests).toEqual([
      expect.objectContaining({
        seq: 1,
        method: "tools/list",
        httpStatus: 200,
        outcome: "result",
        errorCode: null,
      }),
      expect.objectContaining({ seq: 2, method: null, httpStatus: 400, outcome: "error", errorCode: -32700 }),
    ])
  })

  it("is served as JSON on a separate, non-MCP path, and can be reset or drive a restart", async () => {
    const { server } = setup()
    const { taskId } = await call(server, "tools/call", { name: "job" }, { key: "k" })
    const response = await server.handler(new Request("http://fake-mcp.test/_ledger"))
    expect(response.headers.get("content-type")).toContain("application/json")
    const snapshot = await response.json()
    expect(snapshot.launches[0]).toMatchObject({ taskId, idempotencyKey: "k" })
    expect(snapshot.tasks[0]).toMatchObject({ taskId, polls: [] })
    // The snapshot is a copy: later activity does not change it.
    expect(server.ledger.snapshot()).toEqual(snapshot)
    await call(server, "tasks/get", { taskId })
    expect(snapshot.tasks[0].polls).toEqual([])

    const restarted = await server.handler(new Request("http://fake-mcp.test/_restart", { method: "POST" }))
    expect((await restarted.json()).lostTaskIds).toEqual([taskId])
    expect((await server.handler(new Request("http://fake-mcp.test/_health"))).status).toBe(200)
    expect(
      (await server.handler(new Request("http://fake-mcp.test/_ledger", { method: "DELETE" }))).status,
    ).toBe(204)
    expect(server.ledger.launches).toEqual([])
    expect((await server.handler(new Request("http://fake-mcp.test/_nothing"))).status).toBe(404)
  })

  it("can skip per-request records for long runs", async () => {
    const server = FakeServer.unsafeMake({ tools: [{ name: "d", shape: "direct" }], recordRequests: false })
    await call(server, "tools/call", { name: "d" })
    expect(server.ledger.requests).toEqual([])
    expect(server.ledger.launches).toHaveLength(1)
  })
})
