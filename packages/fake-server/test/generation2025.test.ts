/**
 * The 2025-11-25 mode: the same tools, tasks and ledger behind that revision's edge. Sessions
 * from `initialize`, `task` on `tools/call` answered with a `CreateTaskResult`, `tasks/get`
 * without payload, `tasks/result` with it, questions during a task as requests of the server's
 * on the `tasks/result` stream whose responses are the answers, `tasks/cancel` answering the
 * task, and a restart forgetting every session. The core client against this mode runs in the
 * chaos package (test/generation2025.test.ts).
 */
import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import type * as Config from "../src/Config.js"
import * as FakeServer from "../src/FakeServer.js"
import * as ServerClock from "../src/ServerClock.js"
import { answeredAfter, flush, request, track, urlBase } from "./helpers.js"

const config: Config.Config = {
  generation: "2025-11-25",
  tools: [
    { name: "echo", shape: "direct", outcome: { kind: "result", text: "echo {{args.text}}" } },
    { name: "job", durationMs: 1000, pollIntervalMs: 250, outcome: { kind: "result", text: "done" } },
    {
      name: "ask",
      durationMs: 100,
      inputSteps: [
        {
          atMs: 50,
          requests: {
            go: {
              method: "elicitation/create",
              params: { message: "Go?", requestedSchema: { type: "object", properties: {} } },
            },
          },
        },
      ],
      outcome: { kind: "result", text: "answered {{inputs.go.action}}" },
    },
    { name: "long", durationMs: 20_000, outcome: { kind: "result", text: "long done" } },
    { name: "must_task", taskSupport: "required", durationMs: 100 },
  ],
}

const setup = (generation: Config.Config["generation"] = "2025-11-25", over: Partial<Config.Config> = {}) => {
  const clock = ServerClock.manual(Date.UTC(2025, 10, 25))
  return {
    clock,
    server: FakeServer.unsafeMake({ ...config, generation, ...over }, { clock, sleep: clock.sleep }),
  }
}

let nextId = 1

/** One message to the server, naming `session` when given; the HTTP answer. */
const post = (server: FakeServer.FakeServer, message: Record<string, unknown>, session?: string) =>
  server.handler(
    new Request(urlBase, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        ...(session === undefined ? {} : { "mcp-session-id": session }),
      },
      body: JSON.stringify(message),
    }),
  )

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected freely in tests.
type Any = any

const rpc = async (
  server: FakeServer.FakeServer,
  session: string,
  method: string,
  params: Record<string, unknown>,
): Promise<Any> => {
  const response = await post(server, { jsonrpc: "2.0", id: nextId++, method, params }, session)
  return response.json()
}

const open = async (server: FakeServer.FakeServer, capabilities: Record<string, unknown> = {}) => {
  const response = await post(server, {
    jsonrpc: "2.0",
    id: nextId++,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "t", version: "1" } },
  })
  const body: Any = await response.json()
  const session = response.headers.get("mcp-session-id")
  expect(session).toBeTypeOf("string")
  return { session: session as string, body }
}

/** Builds the binary, runs it with `--generation generation`, gives `use` its URL, then stops it. */
const withBinary = async (generation: string, use: (url: string) => Promise<void>) => {
  const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..")
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-b", join(packageDir, "tsconfig.src.json")], { stdio: "inherit" })
  const child = spawnGroup(
    process.execPath,
    [join(packageDir, "dist/bin.js"), "--port", "0", "--generation", generation],
    { stdio: ["ignore", "pipe", "pipe"] },
  )
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`exited with ${code}`)))
      createInterface({ input: child.stdout }).once("line", resolve)
    })
    await use(url)
  } finally {
    killGroup(child)
  }
}

/** A 2025-11-25 `initialize` over real HTTP. */
const initializeOver = (url: string) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  })

const events = async (response: Response): Promise<Array<Any>> =>
  (await response.text())
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice("data: ".length)))

describe("the fake server in 2025-11-25 mode", () => {
  it("initialize opens a session; a request without one is 400 (-32000), one it does not know 404", async () => {
    const { server } = setup()
    const { session, body } = await open(server)
    expect(body.result).toMatchObject({
      protocolVersion: "2025-11-25",
      capabilities: { tasks: { requests: { tools: { call: {} } } } },
    })
    const missing = await post(server, { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
    expect(missing.status).toBe(400)
    expect(((await missing.json()) as Any).error.code).toBe(-32000)
    const unknown = await post(server, { jsonrpc: "2.0", id: 1, method: "tools/list" }, "nope")
    expect(unknown.status).toBe(404)
    const listed = await rpc(server, session, "tools/list", {})
    expect(listed.result.resultType).toBeUndefined()
    expect(listed.result.tools.map((tool: Any) => tool.name)).toEqual([
      "echo",
      "job",
      "ask",
      "long",
      "must_task",
    ])
    // A 2026-07-28 request is refused the way a 2025-11-25 server refuses it.
    const modern = await post(server, { jsonrpc: "2.0", id: 1, method: "server/discover", params: {} })
    expect(modern.status).toBe(400)
  })

  it("a task: CreateTaskResult, tasks/get without payload, tasks/result with it, launched once", async () => {
    const { server, clock } = setup()
    const { session } = await open(server)
    const meta = { "io.github.mcp-handles/key": "k1" }
    const created = await rpc(server, session, "tools/call", {
      name: "job",
      arguments: {},
      task: {},
      _meta: meta,
    })
    const task = created.result.task
    expect(task).toMatchObject({ status: "working", ttl: expect.any(Number), pollInterval: 250 })
    expect(task.ttlMs).toBeUndefined()
    clock.advance(1000)
    const got = await rpc(server, session, "tasks/get", { taskId: task.taskId })
    expect(got.result).toMatchObject({ taskId: task.taskId, status: "completed" })
    expect(got.result.result).toBeUndefined()
    const payload = await rpc(server, session, "tasks/result", { taskId: task.taskId })
    expect(payload.result.content).toEqual([{ type: "text", text: "done" }])
    expect(payload.result._meta["io.modelcontextprotocol/related-task"]).toEqual({ taskId: task.taskId })
    const direct = await rpc(server, session, "tools/call", { name: "echo", arguments: { text: "hi" } })
    expect(direct.result).toEqual({ content: [{ type: "text", text: "echo hi" }] })
    expect(server.ledger.snapshot().launches.filter((launch) => launch.idempotencyKey === "k1")).toHaveLength(
      1,
    )
  })

  it("a question during a task comes on the tasks/result stream; its response is the answer", async () => {
    const { server, clock } = setup()
    const { session } = await open(server, { elicitation: {} })
    const created = await rpc(server, session, "tools/call", { name: "ask", arguments: {}, task: {} })
    const taskId = created.result.task.taskId
    clock.advance(60)
    expect((await rpc(server, session, "tasks/get", { taskId })).result.status).toBe("input_required")
    const stream = await post(
      server,
      { jsonrpc: "2.0", id: nextId++, method: "tasks/result", params: { taskId } },
      session,
    )
    expect(stream.headers.get("content-type")).toContain("text/event-stream")
    const [question] = await events(stream)
    expect(question).toMatchObject({
      id: `${taskId}/go`,
      method: "elicitation/create",
      params: { message: "Go?", _meta: { "io.modelcontextprotocol/related-task": { taskId } } },
    })
    const answered = await post(
      server,
      { jsonrpc: "2.0", id: question.id, result: { action: "accept" } },
      session,
    )
    expect(answered.status).toBe(202)
    expect((await rpc(server, session, "tasks/get", { taskId })).result.status).toBe("working")
    clock.advance(100)
    const payload = await rpc(server, session, "tasks/result", { taskId })
    expect(payload.result.content).toEqual([{ type: "text", text: "answered accept" }])
  })

  it("questionsOnce: a question goes on one tasks/result stream only, whichever session listens", async () => {
    const { server, clock } = setup("2025-11-25", { questionsOnce: true })
    const { session } = await open(server, { elicitation: {} })
    const created = await rpc(server, session, "tools/call", { name: "ask", arguments: {}, task: {} })
    const taskId = created.result.task.taskId
    clock.advance(60)
    const listen = async (on: string) =>
      events(
        await post(server, { jsonrpc: "2.0", id: nextId++, method: "tasks/result", params: { taskId } }, on),
      )
    expect((await listen(session)).map((message) => message.id)).toEqual([`${taskId}/go`])
    expect(await listen(session), "asked again on a second stream").toEqual([])
    const { session: other } = await open(server, { elicitation: {} })
    expect(await listen(other), "asked again in another session").toEqual([])
    expect((await rpc(server, other, "tasks/get", { taskId })).result.status).toBe("input_required")
  })

  it("tasks/cancel answers the task; a restart forgets every session, not the tasks it keeps", async () => {
    const { server } = setup()
    const { session } = await open(server)
    const created = await rpc(server, session, "tools/call", { name: "job", arguments: {}, task: {} })
    const taskId = created.result.task.taskId
    const cancelled = await rpc(server, session, "tasks/cancel", { taskId })
    expect(cancelled.result).toMatchObject({ taskId, status: "cancelled" })
    server.restart()
    const gone = await post(
      server,
      { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { taskId } },
      session,
    )
    expect(gone.status).toBe(404)
    const { session: fresh } = await open(server)
    const unknown = await rpc(server, fresh, "tasks/get", { taskId })
    // The server kept no tasks over its restart (no persistence): unknown in the new session.
    expect(unknown.error.code).toBe(-32602)
  })

  it(
    "the binary serves the mode with --generation 2025-11-25",
    () =>
      withBinary("2025-11-25", async (url) => {
        const response = await initializeOver(url)
        expect(response.headers.get("mcp-session-id")).toBeTypeOf("string")
        expect(((await response.json()) as Any).result.protocolVersion).toBe("2025-11-25")
      }),
    120_000,
  )
})

describe("2025-11-25: the client opts in to a task per request", () => {
  it("a plain call of an optional tool is answered directly, after the tool's 20 s, never as a task", async () => {
    const { server, clock } = setup()
    const { session, body } = await open(server)
    expect(body.result.capabilities.tasks).toEqual({ requests: { tools: { call: {} } }, cancel: {} })
    const answer = await answeredAfter(
      clock,
      20_000,
      rpc(server, session, "tools/call", { name: "long", arguments: {} }),
    )
    expect(answer.result).toEqual({ content: [{ type: "text", text: "long done" }] })
    expect(server.taskIds()).toEqual([])
    expect(server.ledger.launches).toEqual([expect.objectContaining({ tool: "long", taskId: null })])
  })

  it("with task, the same tool is a task at once", async () => {
    const { server } = setup()
    const { session } = await open(server)
    const created = await rpc(server, session, "tools/call", {
      name: "long",
      arguments: {},
      task: { ttl: 60_000 },
    })
    expect(created.result.task).toMatchObject({ status: "working" })
  })

  it("a required tool refuses a plain call with -32601; a forbidden one refuses task; neither launches", async () => {
    const { server } = setup()
    const { session } = await open(server)
    const plain = await rpc(server, session, "tools/call", { name: "must_task", arguments: {} })
    expect(plain.error).toMatchObject({ code: -32601, message: expect.stringContaining("task augmentation") })
    expect(plain.result).toBeUndefined()
    const asked = await rpc(server, session, "tools/call", { name: "echo", arguments: {}, task: {} })
    expect(asked.error).toMatchObject({ code: -32601 })
    const malformed = await rpc(server, session, "tools/call", { name: "job", arguments: {}, task: true })
    expect(malformed.error).toMatchObject({ code: -32602 })
    expect(server.ledger.launches).toEqual([])
    const tasked = await rpc(server, session, "tools/call", { name: "must_task", arguments: {}, task: {} })
    expect(tasked.result.task.status).toBe("working")
  })

  it("a server whose tools all answer directly does not offer task-augmented calls", async () => {
    const clock = ServerClock.manual(0)
    const server = FakeServer.unsafeMake(
      { generation: "2025-11-25", tools: [{ name: "echo", shape: "direct" }] },
      { clock, sleep: clock.sleep },
    )
    const { body } = await open(server)
    expect(body.result.capabilities).toEqual({ tools: {} })
  })

  it("a plain call of each task-support mode: forbidden and optional answer after their time, required is refused", async () => {
    const slowEcho: Config.Tool = {
      name: "slow_echo",
      shape: "direct",
      durationMs: 5_000,
      outcome: { kind: "result", text: "slow echo" },
    }
    const { server, clock } = setup("2025-11-25", { tools: [...config.tools, slowEcho] })
    const { session } = await open(server)
    const listed = await rpc(server, session, "tools/list", {})
    const support = (name: string) =>
      listed.result.tools.find((tool: Any) => tool.name === name).execution.taskSupport
    expect([support("slow_echo"), support("long"), support("must_task")]).toEqual([
      "forbidden",
      "optional",
      "required",
    ])
    const forbidden = await answeredAfter(
      clock,
      5_000,
      rpc(server, session, "tools/call", { name: "slow_echo", arguments: {} }),
    )
    expect(forbidden).toMatchObject({ result: { content: [{ type: "text", text: "slow echo" }] } })
    const optional = await answeredAfter(
      clock,
      20_000,
      rpc(server, session, "tools/call", { name: "long", arguments: {} }),
    )
    expect(optional).toMatchObject({ result: { content: [{ type: "text", text: "long done" }] } })
    const required = await rpc(server, session, "tools/call", { name: "must_task", arguments: {} })
    expect(required.error.code).toBe(-32601)
    // The client asked for no task, so none exists and no answer was shaped as one.
    for (const answer of [forbidden, optional]) expect(answer.result.task).toBeUndefined()
    expect(server.taskIds()).toEqual([])
    expect(server.ledger.launches.map((launch) => [launch.tool, launch.taskId])).toEqual([
      ["slow_echo", null],
      ["long", null],
    ])
  })

  it("a held plain call with a progress token reports progress on its stream, then the plain result", async () => {
    const { server, clock } = setup()
    const { session } = await open(server)
    const calledAt = clock.now()
    const answer = track(
      post(
        server,
        {
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "long", arguments: {}, _meta: { progressToken: "p1" } },
        },
        session,
      ).then(events),
    )
    await flush()
    for (let step = 0; step < 4; step++) {
      clock.advance(5_000)
      await flush()
    }
    const messages = await answer.promise
    expect(messages.map((message) => message.params?.progress)).toEqual([0, 25, 50, 75, 100, undefined])
    expect(messages.at(-1)).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: { content: [{ type: "text", text: "long done" }] },
    })
    // The ledger has the answer leave when the work was done, not when the call came.
    expect(server.ledger.requests.at(-1)).toMatchObject({
      method: "tools/call",
      outcome: "stream",
      at: calledAt,
      endedAt: calledAt + 20_000,
    })
  })

  it("a server that declares no tasks capability ignores task on tools/call and serves no tasks/*", async () => {
    const clock = ServerClock.manual(0)
    const server = FakeServer.unsafeMake(
      { generation: "2025-11-25", tools: [{ name: "echo", shape: "direct", durationMs: 3_000 }] },
      { clock, sleep: clock.sleep },
    )
    const { session } = await open(server, { tasks: { requests: {} } })
    const answer = await answeredAfter(
      clock,
      3_000,
      rpc(server, session, "tools/call", { name: "echo", arguments: {}, task: { ttl: 60_000 } }),
    )
    expect(answer.result).toEqual({ content: [{ type: "text", text: "ok" }] })
    expect(server.taskIds()).toEqual([])
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const refused = await rpc(server, session, method, { taskId: "any" })
      expect(refused.error).toMatchObject({ code: -32601, message: `Method not found: ${method}` })
    }
  })
})

/** A 2026-07-28 request: `_meta` envelope and routing headers. */
const modern = (server: FakeServer.FakeServer, method: string, params: Record<string, unknown> = {}) =>
  server.handler(request(method, params))

describe("a request of the other generation", () => {
  it("a 2026-07-28 server answers initialize with -32022 naming the versions it speaks", async () => {
    const { server } = setup("2026-07-28")
    const response = await post(server, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    })
    expect(response.status).toBe(400)
    expect(((await response.json()) as Any).error).toEqual({
      code: -32022,
      message: "Unsupported protocol version: 2025-11-25",
      data: { requested: "2025-11-25", supported: ["2026-07-28"] },
    })
    // A request that names no version at all learns the supported ones too; a notification is dropped.
    const bare = await server.handler(
      new Request(urlBase, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      }),
    )
    expect(((await bare.json()) as Any).error).toMatchObject({
      code: -32022,
      data: { supported: ["2026-07-28"] },
    })
    const notified = await post(server, { jsonrpc: "2.0", method: "notifications/initialized" })
    expect(notified.status).toBe(202)
    expect(server.ledger.launches).toEqual([])
  })

  it("a 2025-11-25 server answers a 2026-07-28 request with HTTP 400 naming the version it speaks", async () => {
    const { server } = setup()
    const response = await modern(server, "tools/call", { name: "echo" })
    expect(response.status).toBe(400)
    const body = (await response.json()) as Any
    expect(body.error.code).toBe(-32000)
    expect(body.error.message).toContain(
      "Unsupported protocol version: 2026-07-28 (supported versions: 2025-11-25)",
    )
    expect(server.ledger.launches).toEqual([])
  })
})

describe("generation both: each request in the generation it speaks, one ledger", () => {
  it("a 2025-11-25 session and 2026-07-28 requests share one endpoint, its tasks and its ledger", async () => {
    const { server, clock } = setup("both")
    const { session, body } = await open(server)
    expect(body.result.protocolVersion).toBe("2025-11-25")
    const old = await rpc(server, session, "tools/call", { name: "job", arguments: {}, task: {} })
    const created = (await (await modern(server, "tools/call", { name: "job" })).json()) as Any
    expect(created.result).toMatchObject({ resultType: "task", status: "working" })
    const discovered = (await (await modern(server, "server/discover")).json()) as Any
    expect(discovered.result.supportedVersions).toEqual(["2026-07-28"])
    clock.advance(1_000)
    // A task is one task, whichever generation asks about it.
    const polled = (await (
      await modern(server, "tasks/get", { taskId: old.result.task.taskId })
    ).json()) as Any
    expect(polled.result.status).toBe("completed")
    expect((await rpc(server, session, "tasks/get", { taskId: created.result.taskId })).result.status).toBe(
      "completed",
    )
    expect(server.ledger.launches.map((launch) => launch.taskId)).toEqual([
      old.result.task.taskId,
      created.result.taskId,
    ])
    // A 2026-07-28 client with tasks gets a task at once; one without is held for the tool's time.
    const declared = track(modern(server, "tools/call", { name: "long" }).then((response) => response.json()))
    const held = track(
      server
        .handler(request("tools/call", { name: "long" }, { capabilities: {} }))
        .then((r) => r.json() as Any),
    )
    await flush()
    clock.advance(20_000)
    expect(((await declared.promise) as Any).result.resultType).toBe("task")
    expect((await held.promise).result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "long done" }],
    })
  })

  it(
    "the binary serves both with --generation both",
    () =>
      withBinary("both", async (url) => {
        expect((await initializeOver(url)).headers.get("mcp-session-id")).toBeTypeOf("string")
        const discover = request("server/discover")
        const discovered = await fetch(url, {
          method: "POST",
          headers: discover.headers,
          body: await discover.text(),
        })
        expect(((await discovered.json()) as Any).result.supportedVersions).toEqual(["2026-07-28"])
      }),
    120_000,
  )
})
