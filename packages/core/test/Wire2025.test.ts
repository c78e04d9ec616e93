/**
 * The 2025-11-25 wire over a scripted exchange (no HTTP): the handshake and its session, when
 * `tools/call` asks for a task, a new session after a 404, `tasks/result` for a finished task's
 * payload (a tool error kept as a result), `session_lost` when a new session does not know
 * the task (unless it is past its lifetime: then it expired), and input during a task. The wire
 * against a real SDK 1.x server: packages/store-sqlite/test/sdk1-tasks.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { RpcError } from "@mcp-handles/core/HandleRecord"
import type * as Json from "@mcp-handles/core/Json"
import * as Wire from "@mcp-handles/core/Wire"
import * as Effect from "effect/Effect"
import * as Wire2025 from "../src/internal/wire/wire2025.js"

const server: Wire.ServerEndpoint = { name: "s", url: "http://s.test/mcp" }

interface Seen {
  readonly method: string
  readonly session: string | undefined
  readonly params: Json.JsonObject | undefined
  readonly message: Wire2025.Outgoing
}

type Reply = Effect.Effect<Wire2025.Sent, Wire.WireError | Wire2025.SessionGone>

const task = (taskId: string, status: string) => ({
  taskId,
  status,
  createdAt: "2025-11-25T10:00:00Z",
  lastUpdatedAt: "2025-11-25T10:00:00Z",
  ttl: 60000,
  pollInterval: 100,
})

/**
 * A scripted server: `answer` gives each request's result; sessions are numbered s1, s2, ... and
 * those in `gone` answer 404.
 */
const scripted = (
  answer: (
    method: string,
    params: Json.JsonObject,
    session: string | undefined,
    /** `tasks/result` listened to for questions only (see `Sent.stopped`). */
    listening: boolean,
  ) => Reply,
) => {
  const seen: Array<Seen> = []
  const gone = new Set<string>()
  let sessions = 0
  const send: Wire2025.Send = (_, message, session, inputWindow) =>
    Effect.suspend(() => {
      const method = "method" in message ? message.method : "(answer)"
      const params = "params" in message ? message.params : undefined
      seen.push({ method, session: session?.id, params, message })
      if (session?.id !== undefined && gone.has(session.id)) {
        return Effect.fail(new Wire2025.SessionGone({ method }))
      }
      if (!("id" in message && "method" in message)) return ok({})
      if (message.method === "initialize") {
        sessions += 1
        return Effect.succeed({
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tasks: { requests: { tools: { call: {} } } } },
          },
          sessionId: `s${sessions}`,
        })
      }
      return answer(message.method, params ?? {}, session?.id, inputWindow !== undefined)
    })
  return { wire: Wire2025.make(send, {}), seen, gone }
}

const ok = (result: Json.JsonObject): Reply => Effect.succeed({ result, sessionId: undefined })

const tools = {
  tools: [
    { name: "slow", execution: { taskSupport: "required" } },
    { name: "quick", execution: { taskSupport: "forbidden" } },
  ],
}

describe("the 2025-11-25 wire", () => {
  it.effect("initialize once, the session on every request, task: {} only where the tool allows it", () =>
    Effect.gen(function* () {
      const { wire, seen } = scripted((method, params) => {
        if (method === "tools/list") return ok(tools)
        return ok(params.task === undefined ? { content: [] } : { task: task("t1", "working") })
      })
      const slow = yield* wire.callTool(server, { name: "slow", arguments: {}, idempotencyKey: "k1" })
      expect(slow._tag === "Task" && slow.task).toMatchObject({
        taskId: "t1",
        generation: "2025-11-25",
        session: "s1",
      })
      const quick = yield* wire.callTool(server, { name: "quick", arguments: {}, idempotencyKey: "k2" })
      expect(quick._tag).toBe("Complete")
      expect(seen.map((request) => `${request.method} ${request.session ?? "-"}`)).toEqual([
        "initialize -",
        "notifications/initialized s1",
        "tools/list s1",
        "tools/call s1",
        "tools/call s1",
      ])
      const calls = seen.filter((request) => request.method === "tools/call")
      expect(calls[0]?.params?.task).toEqual({})
      expect(calls[1]?.params?.task).toBeUndefined()
      expect(calls[0]?.params?._meta).toEqual({ [Wire.idempotencyKeyMeta]: "k1" })
    }),
  )

  it.effect(
    "a finished task's payload comes from tasks/result; a tool's own error is kept as its result",
    () =>
      Effect.gen(function* () {
        const status: Record<string, string> = { done: "completed", toolError: "failed", rpcError: "failed" }
        const { wire } = scripted((method, params) => {
          const taskId = String(params.taskId)
          if (method === "tasks/get") return ok(task(taskId, status[taskId] ?? "input_required"))
          if (taskId === "rpcError") {
            return Effect.fail(
              new Wire.RpcErrorAnswer({ method, error: new RpcError({ code: -32603, message: "boom" }) }),
            )
          }
          return ok({ content: [{ type: "text", text: taskId }], isError: taskId === "toolError" })
        })
        const origin = { generation: "2025-11-25", session: "s1" }
        const done = yield* wire.getTask(server, "done", origin)
        expect(done).toMatchObject({ status: "completed", result: { isError: false } })
        const toolError = yield* wire.getTask(server, "toolError", origin)
        expect(toolError).toMatchObject({ status: "completed", result: { isError: true } })
        const rpcError = yield* wire.getTask(server, "rpcError", origin)
        expect(rpcError).toMatchObject({ status: "failed", error: { code: -32603 } })
        // Waiting for input with no question to answer (tasks/result brought none): polled on.
        const waiting = yield* wire.getTask(server, "waiting", origin)
        expect(waiting.status).toBe("working")
      }),
  )

  it.effect(
    "input during a task: questions on tasks/result become input requests, answers their JSON-RPC responses",
    () =>
      Effect.gen(function* () {
        const elicit = {
          message: "Proceed?",
          _meta: { "io.modelcontextprotocol/related-task": { taskId: "asks" } },
        }
        let heard: ReadonlyArray<Json.JsonObject> = [
          { jsonrpc: "2.0", id: 7, method: "elicitation/create", params: elicit },
          { jsonrpc: "2.0", id: 8, method: "ping" },
          {
            jsonrpc: "2.0",
            id: 9,
            method: "sampling/createMessage",
            params: { _meta: { "io.modelcontextprotocol/related-task": { taskId: "other" } } },
          },
        ]
        const { wire, seen, gone } = scripted((method, params, _, listening) => {
          if (method === "tasks/get") return ok(task(String(params.taskId), "input_required"))
          if (method === "tasks/result" && listening) {
            const messages = heard
            heard = []
            return Effect.succeed({
              result: {},
              sessionId: undefined,
              stopped: true,
              serverMessages: messages,
            })
          }
          return Effect.die(`unexpected ${method}`)
        })
        const origin = { generation: "2025-11-25", session: "s1" }
        const asked = yield* wire.getTask(server, "asks", origin)
        expect(asked.status).toBe("input_required")
        expect(asked.inputRequests).toEqual({ "rpc-id:7": { method: "elicitation/create", params: elicit } })
        const listened = seen.find((request) => request.method === "tasks/result")
        const listenedId =
          listened !== undefined && "id" in listened.message ? listened.message.id : undefined
        // The listening request is cancelled; ping is answered, the other task's question left alone.
        expect(seen.map((request) => request.message).slice(-2)).toEqual([
          {
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: listenedId, reason: "listened for input only" },
          },
          { jsonrpc: "2.0", id: 8, result: {} },
        ])
        // Asked again before it is answered (nothing new heard): still outstanding.
        const again = yield* wire.getTask(server, "asks", origin)
        expect(Object.keys(again.inputRequests ?? {})).toEqual(["rpc-id:7"])
        yield* wire.updateTask(server, "asks", { "rpc-id:7": { action: "accept" } }, origin)
        expect(seen.at(-1)).toMatchObject({ session: "s1", message: { id: 7, result: { action: "accept" } } })
        // Answered and acknowledged on the row: not offered again, though the row holds the question.
        const after = yield* wire.getTask(server, "asks", {
          ...origin,
          inputRequests: again.inputRequests,
          answers: { "rpc-id:7": { acknowledged: true } },
        })
        expect(after.status).toBe("working")
        // A key that names no request of the server's is refused, as -32602.
        const refused = yield* Effect.flip(wire.updateTask(server, "asks", { other: {} }, origin))
        expect(refused).toMatchObject({ _tag: "RpcErrorAnswer", error: { code: Wire.invalidParams } })
        // The session that asked is gone (a server restart): the answer goes in a new one.
        gone.add("s1")
        yield* wire.updateTask(server, "asks", { "rpc-id:7": { action: "decline" } }, origin)
        expect(seen.at(-1)).toMatchObject({
          session: "s2",
          message: { id: 7, result: { action: "decline" } },
        })
      }),
  )

  it.effect("after a restart, a question the server asked before is known from the row", () =>
    Effect.gen(function* () {
      const { wire } = scripted((method, params, _, listening) => {
        if (method === "tasks/get") return ok(task(String(params.taskId), "input_required"))
        if (method === "tasks/result" && listening)
          return Effect.succeed({ result: {}, sessionId: undefined, stopped: true, serverMessages: [] })
        return Effect.die(`unexpected ${method}`)
      })
      const stored = { "rpc-id:3": { method: "elicitation/create", params: { message: "?" } } }
      const state = yield* wire.getTask(server, "t", {
        generation: "2025-11-25",
        session: "s1",
        inputRequests: stored,
      })
      expect(state).toMatchObject({ status: "input_required", inputRequests: stored })
    }),
  )

  it.effect("after a restart, the row's answers decide which of its questions are still open", () =>
    Effect.gen(function* () {
      // Each poll's stream brings what `next` holds then: a new question, or nothing.
      let next: ReadonlyArray<Json.JsonObject> = []
      const { wire } = scripted((method, params, _, listening) => {
        if (method === "tasks/get") return ok(task(String(params.taskId), "input_required"))
        if (method === "tasks/result" && listening)
          return Effect.succeed({ result: {}, sessionId: undefined, stopped: true, serverMessages: next })
        return Effect.die(`unexpected ${method}`)
      })
      const q3 = { method: "elicitation/create", params: { message: "first?" } }
      const q4 = { method: "elicitation/create", params: { message: "second?" } }
      const poll = (answers: Readonly<Record<string, { readonly acknowledged: boolean }>>) =>
        wire.getTask(server, "t", {
          generation: "2025-11-25",
          session: "s1",
          inputRequests: { "rpc-id:3": q3 },
          answers,
        })
      // Acknowledged: done. Answered, unacknowledged, nothing new asked: the server still waits on it.
      expect((yield* poll({ "rpc-id:3": { acknowledged: true } })).status).toBe("working")
      expect((yield* poll({ "rpc-id:3": { acknowledged: false } })).inputRequests).toEqual({ "rpc-id:3": q3 })
      next = [{ jsonrpc: "2.0", id: 4, ...q4 }]
      // A new question: one never answered stays open beside it (it was asked once, before)...
      expect((yield* poll({})).inputRequests).toEqual({ "rpc-id:3": q3, "rpc-id:4": q4 })
      // ...one answered but unacknowledged is taken as received: the server moved on.
      next = [{ jsonrpc: "2.0", id: 5, ...q4 }]
      expect((yield* poll({ "rpc-id:3": { acknowledged: false } })).inputRequests).toEqual({
        "rpc-id:4": q4,
        "rpc-id:5": q4,
      })
    }),
  )

  it.effect("notifications/tasks/status heard while listening is applied like a poll answer", () =>
    Effect.gen(function* () {
      const { wire } = scripted((method, params, _, listening) => {
        const taskId = String(params.taskId)
        if (method === "tasks/get") return ok(task(taskId, "input_required"))
        if (method === "tasks/result" && listening)
          return Effect.succeed({
            result: {},
            sessionId: undefined,
            stopped: true,
            serverMessages: [
              { jsonrpc: "2.0", method: "notifications/tasks/status", params: task(taskId, "completed") },
            ],
          })
        if (method === "tasks/result") return ok({ content: [{ type: "text", text: "done" }] })
        return Effect.die(`unexpected ${method}`)
      })
      const state = yield* wire.getTask(server, "t", { generation: "2025-11-25", session: "s1" })
      expect(state).toMatchObject({ status: "completed", result: { content: [{ text: "done" }] } })
    }),
  )

  it.effect(
    "a task's own session is tried first; when it is gone and the new one does not know the task, session_lost",
    () =>
      Effect.gen(function* () {
        const { wire, seen, gone } = scripted((method, params, session) =>
          session === "s-old"
            ? ok(task(String(params.taskId), "working"))
            : Effect.fail(
                new Wire.RpcErrorAnswer({
                  method,
                  error: new RpcError({ code: -32602, message: "Task not found" }),
                }),
              ),
        )
        const alive = yield* wire.getTask(server, "t", { generation: "2025-11-25", session: "s-old" })
        expect(alive).toMatchObject({ status: "working", session: "s-old" })
        gone.add("s-old")
        const lost = yield* wire.getTask(server, "t", { generation: "2025-11-25", session: "s-old" })
        expect(lost.status).toBe("failed")
        expect(lost.error?.data).toEqual({ "mcp-handles/local": "session_lost" })
        expect(
          seen.filter((request) => request.method === "tasks/get").map((request) => request.session),
        ).toEqual(["s-old", "s-old", "s1"])
        // Without a session to lose, an unknown task is the server's -32602, as on 2026-07-28.
        const unknown = yield* Effect.flip(wire.getTask(server, "t", { generation: "2025-11-25" }))
        expect(unknown._tag === "RpcErrorAnswer" && unknown.error.code).toBe(-32602)
        // Past its lifetime the task has expired, not been lost with its session: -32602 too.
        const expired = yield* Effect.flip(
          wire.getTask(server, "t", { generation: "2025-11-25", session: "s-old", expiresAt: 0 }),
        )
        expect(expired._tag === "RpcErrorAnswer" && expired.error.code).toBe(-32602)
      }),
  )

  it.effect(
    "when the task's session and the endpoint's are both gone (a server restart), a new one is opened",
    () =>
      Effect.gen(function* () {
        const { wire, seen, gone } = scripted((method, params) =>
          method === "tools/list" ? ok(tools) : ok(task(String(params.taskId), "working")),
        )
        yield* wire.listTools(server)
        gone.add("s-old")
        gone.add("s1")
        const state = yield* wire.getTask(server, "t", { generation: "2025-11-25", session: "s-old" })
        expect(state).toMatchObject({ status: "working", session: "s2" })
        expect(
          seen.filter((request) => request.method === "tasks/get").map((request) => request.session),
        ).toEqual(["s-old", "s1", "s2"])
      }),
  )

  it.effect("a 404 for the endpoint's own session opens a new one, and the request is made there", () =>
    Effect.gen(function* () {
      const { wire, seen, gone } = scripted((method) =>
        method === "tools/list" ? ok(tools) : ok({ content: [] }),
      )
      yield* wire.listTools(server)
      gone.add("s1")
      yield* wire.listTools(server)
      expect(seen.map((request) => `${request.method} ${request.session ?? "-"}`)).toEqual([
        "initialize -",
        "notifications/initialized s1",
        "tools/list s1",
        "tools/list s1",
        "initialize -",
        "notifications/initialized s2",
        "tools/list s2",
      ])
    }),
  )
})
