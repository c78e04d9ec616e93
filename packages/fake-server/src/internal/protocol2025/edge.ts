/**
 * The server's 2025-11-25 mode (`Config.generation`): the same tools, faults, tasks and ledger,
 * spoken the way a 2025-11-25 task server speaks. `initialize` opens a session (its id in the
 * `Mcp-Session-Id` header); every other request must name a session the server knows (HTTP 400
 * without one, 404 for one it forgot: a restart forgets them all). Requests are answered by the
 * 2026-07-28 handlers and their answers reshaped (see shapes.ts); `tasks/result` gives a
 * finished task's payload, or the questions of a task that waits for input as requests of the
 * server's on an event stream, whose JSON-RPC responses are the answers (`tasks/update` inside).
 *
 * Tasks are not tied to the session that created them (the revision lets a server choose).
 * A `tools/call` becomes a task only when it carries `task` (the client opts in per request):
 * without it, the tool answers directly once its work is done, as a real server does; a
 * `required` tool refuses a call without `task`, a `forbidden` one a call with it (-32601).
 * A server none of whose tools can be a task declares no `tasks` capability: it ignores `task`
 * (the revision's "MUST process requests of that type normally") and serves no `tasks/*`.
 */
import { defaults } from "../../Config.js"
import type { Json } from "../../Json.js"
import { advertisedTaskSupport, behaviourOf } from "../behaviour.js"
import {
  type Answer,
  type Call,
  failure,
  type HandlerResult,
  result,
  type ServerContext,
} from "../context.js"
import {
  type EnvelopedRequest,
  idempotencyKeyMeta,
  parseBody,
  type RequestId,
  tasksExtension,
} from "../envelope.js"
import { isObject } from "../json.js"
import { errorCodes, invalidParams, invalidRequest, methodNotFound, RpcFailure } from "../rpcFailure.js"
import { observe } from "../taskMethods.js"
import * as Shapes from "./shapes.js"

/** What one message to the 2025-11-25 edge comes to. */
export type Answered =
  | { readonly kind: "accepted" }
  | { readonly kind: "answer"; readonly id: RequestId | null; readonly handled: HandlerResult }

export interface Edge {
  readonly handle: (
    body: string,
    headers: Headers,
    at: { readonly now: number; readonly skewMs: number; readonly signal: AbortSignal | undefined },
  ) => Answered
  /** Forgets every session, as a restarted server does. */
  readonly restart: () => void
}

type Dispatch = (context: ServerContext, call: Call) => HandlerResult

interface Session {
  /**
   * The 2026-07-28 capabilities the handlers check, from what `initialize` declared. They
   * include the tasks extension when the server declared `tasks`: in this revision the client's
   * own `tasks` capability is about requests it receives, so calling `tasks/*` needs no opt-in
   * of the client's (whether a call becomes a task is `Call.taskRequested`'s).
   */
  readonly capabilities: Record<string, unknown>
}

const serverError = (code: number, message: string, httpStatus: number) =>
  new RpcFailure({ code, message, httpStatus })

const rpcError = (status: number, id: RequestId | null, code: number, message: string): HandlerResult => ({
  kind: "http",
  status,
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }),
})

export const make = (context: ServerContext, dispatch: Dispatch): Edge => {
  const sessions = new Map<string, Session>()
  /** With `questionsOnce`: the questions put on a stream, by task id (kept across a restart). */
  const delivered = new Map<string, Set<string>>()

  /** The open questions of a task that go on this stream, marked delivered when asked once. */
  const toAsk = (taskId: string, inputRequests: Json | undefined): Json | undefined => {
    if (context.config.questionsOnce !== true || !isObject(inputRequests)) return inputRequests
    const done = delivered.get(taskId) ?? new Set<string>()
    delivered.set(taskId, done)
    const fresh = Object.entries(inputRequests).filter(([inputKey]) => !done.has(inputKey))
    for (const [inputKey] of fresh) done.add(inputKey)
    return Object.fromEntries(fresh)
  }

  /** Whether the server declares `tasks`: some tool can run as a task (the tools never change). */
  const servesTasks = context.config.tools.some(
    (tool) => advertisedTaskSupport(tool, behaviourOf(context.config, tool)) !== "forbidden",
  )

  const initialize = (id: RequestId, params: Record<string, unknown>): HandlerResult => {
    const declared = isObject(params.capabilities) ? params.capabilities : {}
    const capabilities: Record<string, unknown> = servesTasks ? { extensions: { [tasksExtension]: {} } } : {}
    for (const name of ["elicitation", "sampling", "roots"]) {
      if (isObject(declared[name])) capabilities[name] = declared[name]
    }
    const sessionId = crypto.randomUUID()
    sessions.set(sessionId, { capabilities })
    return {
      kind: "http",
      status: 200,
      headers: { "content-type": "application/json", "mcp-session-id": sessionId },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: Shapes.protocolVersion,
          // Task-augmented calls are offered only where a tool can run as a task.
          capabilities: servesTasks
            ? { tools: {}, tasks: { requests: { tools: { call: {} } }, cancel: {} } }
            : { tools: {} },
          serverInfo: { ...(context.config.serverInfo ?? defaults.serverInfo) },
        },
      }),
    }
  }

  const call = (
    session: Session,
    id: RequestId,
    method: string,
    params: Record<string, unknown>,
    at: Parameters<Edge["handle"]>[2],
    taskRequested?: boolean,
  ): Call => {
    const meta = isObject(params._meta) ? params._meta : {}
    const key = meta[idempotencyKeyMeta]
    const request: EnvelopedRequest = {
      id,
      method,
      params,
      protocolVersion: "2026-07-28",
      clientCapabilities: session.capabilities,
      idempotencyKey: typeof key === "string" ? key : undefined,
    }
    return { request, now: at.now, skewMs: at.skewMs, signal: at.signal, taskRequested }
  }

  /**
   * A handler's result reshaped by `shape` (a held one's once it leaves); failures, streams and
   * HTTP answers pass unchanged.
   */
  const reshaped = (
    handled: HandlerResult,
    shape: (value: Record<string, Json>) => Record<string, Json> | RpcFailure,
  ): HandlerResult => {
    if (handled.kind === "held") return { ...handled, answer: reshapedAnswer(handled.answer, shape) }
    return handled.kind === "result" || handled.kind === "failure" ? reshapedAnswer(handled, shape) : handled
  }

  const reshapedAnswer = (
    handled: Answer,
    shape: (value: Record<string, Json>) => Record<string, Json> | RpcFailure,
  ): Answer => {
    if (handled.kind !== "result") return handled
    const value = shape(handled.result)
    if (value instanceof RpcFailure) return failure(value, handled.launch)
    return result(value, handled.launch)
  }

  /** The task as it is now, without counting as a poll (the ledger's poll discipline is tasks/get's). */
  const current = (taskId: unknown, at: Parameters<Edge["handle"]>[2]) => {
    if (typeof taskId !== "string") return invalidParams("Invalid params: taskId must be a string")
    const found = context.store.lookup(taskId, at.now)
    if (found.kind === "unknown" || (found.kind === "expired" && context.config.expiry?.mode !== "fail")) {
      return invalidParams("Failed to retrieve task: Task not found")
    }
    return observe(found.record, found.kind === "expired", at.now, at.skewMs)
  }

  const taskResult = (params: Record<string, unknown>, at: Parameters<Edge["handle"]>[2]): HandlerResult => {
    const found = current(params.taskId, at)
    if (found instanceof RpcFailure) return failure(found)
    const { view, task } = found
    const taskId = String(params.taskId)
    const related = { [Shapes.relatedTaskMeta]: { taskId } }
    switch (view.status) {
      case "input_required":
        return {
          kind: "stream",
          stream: Shapes.eventStream(Shapes.questions(taskId, toAsk(taskId, task.inputRequests))),
        }
      case "working":
        // Nothing to say yet: the stream ends, and the client asks again.
        return { kind: "stream", stream: Shapes.eventStream([]) }
      case "cancelled":
        return failure(serverError(errorCodes.internalError, "Task was cancelled", 200))
      default: {
        if (isObject(task.result)) {
          const payload = Shapes.plainResult(task.result as Record<string, Json>)
          const meta = isObject(payload._meta) ? (payload._meta as Record<string, Json>) : {}
          return result({ ...payload, _meta: { ...meta, ...related } })
        }
        const error = isObject(task.error) ? task.error : {}
        return failure(
          new RpcFailure({
            code: typeof error.code === "number" ? error.code : errorCodes.internalError,
            message: typeof error.message === "string" ? error.message : "Task failed",
            httpStatus: 200,
            ...(error.data === undefined ? {} : { data: error.data }),
          }),
        )
      }
    }
  }

  const request = (
    session: Session,
    id: RequestId,
    method: string,
    params: Record<string, unknown>,
    at: Parameters<Edge["handle"]>[2],
  ): HandlerResult => {
    // No `tasks` capability declared: no `tasks/*` method exists here.
    if (!servesTasks && method.startsWith("tasks/")) return failure(methodNotFound(method))
    switch (method) {
      case "ping":
        return result({})
      case "tools/list":
        return reshaped(dispatch(context, call(session, id, method, params, at)), Shapes.plainResult)
      case "tools/call": {
        const { task: sent, ...rest } = params
        const task = servesTasks ? sent : undefined
        if (task !== undefined && !isObject(task)) {
          return failure(invalidParams("Invalid params: task must be an object"))
        }
        const asked = dispatch(context, call(session, id, method, rest, at, task !== undefined))
        return reshaped(asked, (value) =>
          value.resultType === "task"
            ? { task: Shapes.task(value) }
            : value.resultType === "input_required"
              ? serverError(
                  errorCodes.internalError,
                  "this tool asks for input before it starts: 2025-11-25 has no way to give it",
                  200,
                )
              : Shapes.plainResult(value),
        )
      }
      case "tasks/get":
        return reshaped(dispatch(context, call(session, id, method, params, at)), Shapes.task)
      case "tasks/result":
        return taskResult(params, at)
      case "tasks/cancel":
        return reshaped(dispatch(context, call(session, id, method, params, at)), () => {
          const found = current(params.taskId, at)
          return found instanceof RpcFailure ? found : Shapes.task(found.task)
        })
      default:
        return failure(methodNotFound(method))
    }
  }

  /** An answer to one of our questions: the 2026-07-28 `tasks/update` with it. */
  const answer = (session: Session, message: Record<string, unknown>, at: Parameters<Edge["handle"]>[2]) => {
    const question = Shapes.parseQuestionId(message.id)
    if (question === undefined || !("result" in message)) return
    const params = { taskId: question.taskId, inputResponses: { [question.inputKey]: message.result } }
    dispatch(context, call(session, `answer:${String(message.id)}`, "tasks/update", params, at))
  }

  const handle: Edge["handle"] = (body, headers, at) => {
    const parsed = parseBody(body)
    if (!parsed.ok || !isObject(parsed.value)) {
      return { kind: "answer", id: null, handled: failure(invalidRequest("Invalid JSON-RPC message")) }
    }
    const message = parsed.value
    const id = typeof message.id === "string" || typeof message.id === "number" ? message.id : null
    const method = typeof message.method === "string" ? message.method : undefined
    const params = isObject(message.params) ? message.params : {}
    if (method === "initialize" && id !== null) return { kind: "answer", id, handled: initialize(id, params) }
    const version = headers.get("mcp-protocol-version")?.trim()
    if (version !== undefined && version !== Shapes.protocolVersion) {
      // The answer the official SDK 1.x gives, which clients of the stateless revision recognise.
      const message = `Bad Request: Unsupported protocol version: ${version} (supported versions: ${Shapes.protocolVersion})`
      return { kind: "answer", id, handled: rpcError(400, id, -32000, message) }
    }
    const sessionId = headers.get("mcp-session-id")
    if (sessionId === null) {
      return {
        kind: "answer",
        id,
        handled: rpcError(400, id, -32000, "Bad Request: No valid session ID provided"),
      }
    }
    const session = sessions.get(sessionId)
    if (session === undefined) {
      return { kind: "answer", id, handled: rpcError(404, id, -32001, "Session not found") }
    }
    if (method === undefined) {
      answer(session, message, at)
      return { kind: "accepted" }
    }
    if (id === null) return { kind: "accepted" }
    return { kind: "answer", id, handled: request(session, id, method, params, at) }
  }

  return { handle, restart: () => sessions.clear() }
}
