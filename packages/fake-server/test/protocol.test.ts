import { describe, expect, it } from "vitest"
import type * as Config from "../src/Config.js"
import * as FakeServer from "../src/FakeServer.js"
import * as ServerClock from "../src/ServerClock.js"
import { answeredAfter, call, errorOf, request, rpc, tasksExtension, urlBase, withTasks } from "./helpers.js"

const config: Config.Config = {
  tools: [
    { name: "echo", shape: "direct", outcome: { kind: "result", text: "echo {{args.text}}" } },
    {
      name: "job",
      annotations: { idempotentHint: true },
      durationMs: 1000,
      pollIntervalMs: 250,
      outcome: { kind: "result", text: "done" },
    },
    { name: "must_task", taskSupport: "required", durationMs: 10 },
  ],
}

const setup = () => {
  const clock = ServerClock.manual(Date.UTC(2026, 6, 28))
  return { clock, server: FakeServer.unsafeMake(config, { clock, sleep: clock.sleep }) }
}

describe("discovery", () => {
  it("server/discover advertises the tasks extension and the supported revision", async () => {
    const { server } = setup()
    const result = await call(server, "server/discover")
    expect(result.resultType).toBe("complete")
    expect(result.supportedVersions).toEqual(["2026-07-28"])
    expect(result.capabilities.extensions[tasksExtension]).toEqual({})
    expect(result.capabilities.tasks).toBeUndefined()
    expect(result._meta["io.modelcontextprotocol/serverInfo"].name).toBeTypeOf("string")
  })

  it("tools/list carries execution.taskSupport, annotations and the cacheable-result fields", async () => {
    const { server } = setup()
    const result = await call(server, "tools/list")
    expect(result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" })
    const byName = Object.fromEntries(result.tools.map((tool: { name: string }) => [tool.name, tool]))
    expect(byName.echo.execution).toEqual({ taskSupport: "forbidden" })
    expect(byName.job.execution).toEqual({ taskSupport: "optional" })
    expect(byName.job.annotations).toEqual({ idempotentHint: true })
    expect(byName.must_task.execution).toEqual({ taskSupport: "required" })
    expect(byName.job.inputSchema).toEqual({ type: "object" })
  })
})

describe("tools/call and the task lifecycle", () => {
  it("a direct tool answers with resultType complete", async () => {
    const { server } = setup()
    const result = await call(server, "tools/call", { name: "echo", arguments: { text: "hi" } })
    expect(result).toEqual({ resultType: "complete", content: [{ type: "text", text: "echo hi" }] })
  })

  it("a task tool answers with a flat CreateTaskResult, then tasks/get follows the clock", async () => {
    const { server, clock } = setup()
    const created = await call(server, "tools/call", { name: "job", arguments: {} })
    expect(created).toMatchObject({
      resultType: "task",
      status: "working",
      ttlMs: 3_600_000,
      pollIntervalMs: 250,
    })
    expect(created.createdAt).toBe(new Date(clock.now()).toISOString())
    expect(created).not.toHaveProperty("result")
    expect(created).not.toHaveProperty("requestState")

    clock.advance(999)
    const working = await call(server, "tasks/get", { taskId: created.taskId })
    expect(working).toMatchObject({ resultType: "complete", taskId: created.taskId, status: "working" })

    clock.advance(1)
    const done = await call(server, "tasks/get", { taskId: created.taskId })
    expect(done).toMatchObject({
      resultType: "complete",
      status: "completed",
      result: { content: [{ type: "text", text: "done" }] },
    })
    expect(done.lastUpdatedAt).toBe(new Date(Date.parse(created.createdAt) + 1000).toISOString())
  })

  it("tasks/cancel acks with an empty complete result, also on a terminal task", async () => {
    const { server, clock } = setup()
    const created = await call(server, "tools/call", { name: "job" })
    const ack = await call(server, "tasks/cancel", { taskId: created.taskId })
    expect(ack).toEqual({ resultType: "complete" })
    expect((await call(server, "tasks/get", { taskId: created.taskId })).status).toBe("cancelled")
    clock.advance(5000)
    expect(await call(server, "tasks/cancel", { taskId: created.taskId })).toEqual({ resultType: "complete" })
  })

  it("unknown task ids are -32602 on tasks/get, update and cancel", async () => {
    const { server } = setup()
    for (const [method, params] of [
      ["tasks/get", { taskId: "nope" }],
      ["tasks/update", { taskId: "nope", inputResponses: {} }],
      ["tasks/cancel", { taskId: "nope" }],
    ] as const) {
      const error = await errorOf(server, method, params)
      expect(error).toMatchObject({
        status: 200,
        code: -32602,
        message: "Failed to retrieve task: Task not found",
      })
    }
  })

  it("an unknown tool is -32602", async () => {
    const { server } = setup()
    expect(await errorOf(server, "tools/call", { name: "missing" })).toMatchObject({ code: -32602 })
  })
})

describe("capability negotiation", () => {
  it("a client without the extension gets -32021 on every tasks/* method", async () => {
    const { server } = setup()
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const error = await errorOf(server, method, { taskId: "x", inputResponses: {} }, { capabilities: {} })
      expect(error).toEqual({
        status: 400,
        code: -32021,
        message: "Missing required client capability",
        data: { requiredCapabilities: { extensions: { [tasksExtension]: {} } } },
      })
    }
  })

  it("an optional-task tool falls back to a direct answer for a client without the extension, after its duration", async () => {
    const { server, clock } = setup()
    const result = await answeredAfter(
      clock,
      1000,
      call(server, "tools/call", { name: "job" }, { capabilities: {} }),
    )
    expect(result).toEqual({ resultType: "complete", content: [{ type: "text", text: "done" }] })
    expect(server.ledger.launches[0]).toMatchObject({ tool: "job", taskId: null, resultType: "complete" })
  })

  it("a required-task tool is -32021 for a client without the extension, and launches nothing", async () => {
    const { server } = setup()
    const error = await errorOf(
      server,
      "tools/call",
      { name: "must_task" },
      { capabilities: { sampling: {} } },
    )
    expect(error).toMatchObject({
      status: 400,
      code: -32021,
      data: { requiredCapabilities: { extensions: { [tasksExtension]: {} } } },
    })
    expect(server.ledger.launches).toHaveLength(0)
  })
})

describe("removed and unknown methods", () => {
  it.each(["tasks/list", "tasks/result", "initialize", "ping", "nope/nope"])(
    "%s is -32601 with HTTP 404",
    async (method) => {
      const { server } = setup()
      expect(await errorOf(server, method, { taskId: "x" })).toMatchObject({ status: 404, code: -32601 })
    },
  )
})

describe("routing headers (SEP-2243 / SEP-2663)", () => {
  it("rejects a tasks/get whose Mcp-Name is missing or differs from params.taskId", async () => {
    const { server } = setup()
    const created = await call(server, "tools/call", { name: "job" })
    const missing = await errorOf(
      server,
      "tasks/get",
      { taskId: created.taskId },
      { headers: { "mcp-name": null } },
    )
    expect(missing).toMatchObject({ status: 400, code: -32020 })
    const wrong = await errorOf(
      server,
      "tasks/get",
      { taskId: created.taskId },
      { headers: { "mcp-name": "other" } },
    )
    expect(wrong).toMatchObject({ status: 400, code: -32020, data: { mismatch: { header: "other" } } })
    // The rejected polls never reached the task.
    expect(server.ledger.pollCount(created.taskId)).toBe(0)
  })

  it.each(["tasks/update", "tasks/cancel"])("checks Mcp-Name on %s too", async (method) => {
    const { server } = setup()
    const created = await call(server, "tools/call", { name: "job" })
    const error = await errorOf(
      server,
      method,
      { taskId: created.taskId, inputResponses: {} },
      { headers: { "mcp-name": "x" } },
    )
    expect(error).toMatchObject({ status: 400, code: -32020 })
    expect((await call(server, "tasks/get", { taskId: created.taskId })).status).toBe("working")
  })

  it("rejects a missing or mismatched Mcp-Method, missing protocol header; trims whitespace", async () => {
    const { server } = setup()
    expect(await errorOf(server, "tools/list", {}, { headers: { "mcp-method": null } })).toMatchObject({
      code: -32020,
    })
    expect(
      await errorOf(server, "tools/list", {}, { headers: { "mcp-method": "TOOLS/LIST" } }),
    ).toMatchObject({
      status: 400,
      code: -32020,
    })
    expect(
      await errorOf(server, "tools/list", {}, { headers: { "mcp-protocol-version": null } }),
    ).toMatchObject({
      code: -32020,
    })
    const spaced = await rpc(server, "tools/call", { name: "echo" }, { headers: { "mcp-name": "  echo  " } })
    expect(spaced.body.result.resultType).toBe("complete")
    // The name may travel Base64-encoded.
    const encoded = await rpc(
      server,
      "tools/call",
      { name: "echo" },
      { headers: { "mcp-name": `=?base64?${btoa("echo")}?=` } },
    )
    expect(encoded.body.result.resultType).toBe("complete")
  })

  it("can be switched off for clients that send no routing headers", async () => {
    const server = FakeServer.unsafeMake({ ...config, validateHeaders: false })
    const reply = await rpc(
      server,
      "tools/call",
      { name: "echo" },
      { headers: { "mcp-method": null, "mcp-name": null } },
    )
    expect(reply.body.result.resultType).toBe("complete")
  })
})

describe("the _meta envelope and malformed requests", () => {
  it("a missing _meta or protocol version is -32602 with HTTP 400", async () => {
    const { server } = setup()
    expect(await errorOf(server, "server/discover", {}, { meta: null })).toMatchObject({
      status: 400,
      code: -32602,
    })
    const noVersion = await errorOf(
      server,
      "server/discover",
      {},
      {
        meta: { "io.modelcontextprotocol/protocolVersion": undefined },
      },
    )
    expect(noVersion).toMatchObject({ status: 400, code: -32602 })
  })

  it("an unsupported version is -32022 naming the supported ones; a header/body disagreement is -32020", async () => {
    const { server } = setup()
    const meta = { "io.modelcontextprotocol/protocolVersion": "v999" }
    const unsupported = await errorOf(
      server,
      "server/discover",
      {},
      { meta, headers: { "mcp-protocol-version": "v999" } },
    )
    expect(unsupported).toMatchObject({
      status: 400,
      code: -32022,
      data: { requested: "v999", supported: ["2026-07-28"] },
    })
    expect(await errorOf(server, "server/discover", {}, { meta })).toMatchObject({
      status: 400,
      code: -32020,
    })
  })

  it("answers bodies that are not JSON, not JSON-RPC, or batches without crashing", async () => {
    const { server } = setup()
    const post = (body: string) =>
      server.handler(
        new Request(urlBase, { method: "POST", body, headers: { "content-type": "application/json" } }),
      )
    const notJson = await post("{nope")
    expect(notJson.status).toBe(400)
    expect(await notJson.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: expect.objectContaining({ code: -32700 }),
    })
    for (const body of [
      "[]",
      '"x"',
      '{"jsonrpc":"1.0","id":1,"method":"a"}',
      '{"jsonrpc":"2.0","id":{},"method":"a"}',
    ]) {
      const response = await post(body)
      expect(response.status).toBe(400)
      expect((await response.json()).error.code).toBe(-32600)
    }
    const badParams = await rpc(server, "tasks/get", { taskId: 42 })
    expect(badParams.body.error.code).toBe(-32602)
    const badArgs = await rpc(server, "tools/call", { name: "echo", arguments: [1] })
    expect(badArgs.body.error.code).toBe(-32602)
  })

  it("accepts notifications with 202 and rejects GET on the MCP path with 405", async () => {
    const { server } = setup()
    const notification = await server.handler(
      new Request(urlBase, {
        method: "POST",
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: {} }),
      }),
    )
    expect(notification.status).toBe(202)
    expect((await server.handler(new Request(urlBase))).status).toBe(405)
  })

  it("puts resultType on every result", async () => {
    const { server, clock } = setup()
    const created = await call(server, "tools/call", { name: "job" })
    const results = [
      await call(server, "server/discover"),
      await call(server, "tools/list"),
      created,
      await call(server, "tasks/get", { taskId: created.taskId }),
      await call(server, "tasks/update", { taskId: created.taskId, inputResponses: {} }),
      await call(server, "tasks/cancel", { taskId: created.taskId }),
    ]
    clock.advance(1)
    for (const result of results) expect(typeof result.resultType).toBe("string")
    expect(request("tools/list").headers.get("mcp-method")).toBe("tools/list")
  })
})

describe("durable creation", () => {
  it("a task is visible to tasks/get the instant its CreateTaskResult is returned", async () => {
    const { server } = setup()
    const created = await call(server, "tools/call", { name: "job" }, { capabilities: withTasks })
    expect((await call(server, "tasks/get", { taskId: created.taskId })).taskId).toBe(created.taskId)
  })
})
