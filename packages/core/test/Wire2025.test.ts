/**
 * The 2025-11-25 wire over a scripted exchange (no HTTP): the handshake and its session, when
 * `tools/call` asks for a task, a new session after a 404, `tasks/result` for a finished task's
 * payload (a tool error kept as a result), and `session_lost` when a new session does not know
 * the task. The wire against a real SDK 1.x server: packages/store-sqlite/test/sdk1-tasks.test.ts.
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
  answer: (method: string, params: Json.JsonObject, session: string | undefined) => Reply,
) => {
  const seen: Array<Seen> = []
  const gone = new Set<string>()
  let sessions = 0
  const send: Wire2025.Send = (_, message, session) =>
    Effect.suspend(() => {
      const params = message.params as Json.JsonObject | undefined
      seen.push({ method: message.method, session: session?.id, params })
      if (session?.id !== undefined && gone.has(session.id)) {
        return Effect.fail(new Wire2025.SessionGone({ method: message.method }))
      }
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
      if (message.method === "notifications/initialized")
        return Effect.succeed({ result: {}, sessionId: undefined })
      return answer(message.method, params ?? {}, session?.id)
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
        // Input inside a task is not answered on this generation: the task is polled on.
        const waiting = yield* wire.getTask(server, "waiting", origin)
        expect(waiting.status).toBe("working")
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
