/**
 * The port spoken to a 2025-11-25 server: one session per endpoint opened with `initialize`
 * (and reopened when the server answers 404 for it), `tools/call` asking for a task when the
 * tool's `execution.taskSupport` and the server's `tasks.requests.tools.call` allow it,
 * `tasks/get` for the status and `tasks/result` for the payload once the task is finished,
 * `tasks/cancel`.
 *
 * A task may belong to the session that created it (the official SDK 1.x scopes them so). Each
 * task state carries its session, which the row keeps; polls after a restart try that session
 * first. When it is gone and a new session does not know the task, the call ends failed with
 * reason `session_lost`: never a retry or a second launch.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { localError, RpcError } from "../../HandleRecord.js"
import type * as Json from "../../Json.js"
import {
  type AdapterOptions,
  type CallAnswer,
  type DiscoverInfo,
  defaults,
  idempotencyKeyMeta,
  invalidParams,
  MalformedAnswer,
  NotSent,
  RpcErrorAnswer,
  type ServerEndpoint,
  type TaskOrigin,
  TaskState,
  type ToolInfo,
  Wire,
  type WireError,
} from "../../Wire.js"
import type { RpcRequest } from "./envelope.js"
import * as Input from "./input2025.js"
import { malformed } from "./methods.js"
import * as Protocol2026 from "./protocol.js"
import * as Protocol from "./protocol2025.js"

/** `tools/list` pages followed at most. */
const maxToolPages = 1000

/**
 * How long `tasks/result` is listened to for the questions of a task that waits for input. The
 * server puts a question in the task's queue as it says `input_required`: it is there at once.
 */
const listenWindowMs = 2_000

/**
 * The server answered HTTP 404 to a request naming a session: it no longer knows that session,
 * and did not process the request.
 *
 * @internal
 */
export class SessionGone extends Data.TaggedError("SessionGone")<{ readonly method: string }> {}

/** What one exchange gave: the `result` and the `Mcp-Session-Id` the server sent, if any. @internal */
export interface Sent {
  readonly result: Json.JsonObject
  readonly sessionId: string | undefined
  /**
   * With `inputWindow`: the exchange ended before its answer (`result` is then empty), at a request
   * of the server's or when the window passed. `serverMessages` holds what the server sent on
   * the answer stream meanwhile (requests, notifications), each a valid JSON object.
   */
  readonly stopped?: true | undefined
  readonly serverMessages?: ReadonlyArray<Json.JsonObject> | undefined
}

/**
 * What 2025-11-25 sends besides requests: notifications (no id) and answers to the server's own
 * requests (no method). Both are accepted with HTTP 202 and nothing else.
 *
 * @internal
 */
export type Outgoing =
  | RpcRequest
  | { readonly jsonrpc: "2.0"; readonly method: string; readonly params?: Json.JsonObject }
  | { readonly jsonrpc: "2.0"; readonly id: number | string; readonly result: Json.JsonValue }
  | {
      readonly jsonrpc: "2.0"
      readonly id: number | string
      readonly error: { readonly code: number; readonly message: string }
    }

/**
 * Sends one message naming `session`: the HTTP adapter's exchange, shared by both generations.
 * A notification or an answer to the server succeeds with an empty result once accepted.
 *
 * @internal
 */
export type Send = (
  server: ServerEndpoint,
  message: Outgoing,
  /** Absent for 2026-07-28 requests, which name no session. */
  session: { readonly id: string | undefined; readonly protocolVersion: string } | undefined,
  /** See `Sent.stopped`: `tasks/result` while a task waits for input. */
  inputWindow?: { readonly windowMs: number } | undefined,
  /** Told each notification the server sends on the answer's stream. */
  onNotification?: ((message: { readonly method: string; readonly params?: unknown }) => void) | undefined,
) => Effect.Effect<Sent, WireError | SessionGone>

interface Connection {
  readonly id: string | undefined
  readonly init: Protocol.Initialized
  tools: ReadonlyMap<string, ToolInfo> | undefined
}

/**
 * A failure before `tools/call` left (opening the session, listing tools): nothing was launched,
 * so the call may be retried. Load and credential refusals keep their meaning.
 */
const beforeCall = (error: WireError | SessionGone): WireError => {
  switch (error._tag) {
    case "ServerBusy":
    case "Unauthorized":
    case "NotSent":
      return error
    case "SessionGone":
      return new NotSent({ method: "tools/call", reason: `${error.method}: the server dropped the session` })
    default:
      return new NotSent({
        method: "tools/call",
        reason: `${error.method} before tools/call failed: ${"reason" in error ? error.reason : error.error.message}`,
      })
  }
}

/** The port for 2025-11-25 servers, `discover` answered from `initialize`. @internal */
export const make = (send: Send, options: AdapterOptions): Wire => {
  const clientInfo = options.clientInfo ?? defaults.clientInfo
  const connections = new Map<string, Connection>()
  const opening = Effect.unsafeMakeSemaphore(1)
  let lastId = 0
  const request = (method: string, params: Json.JsonObject): RpcRequest => {
    lastId += 1
    return { jsonrpc: "2.0", id: lastId, method, params }
  }
  const inputCapabilities = Object.fromEntries(
    Object.entries(options.clientCapabilities ?? {}).filter(([name]) =>
      ["elicitation", "sampling"].includes(name),
    ),
  )
  const keyOf = (server: ServerEndpoint) => server.url
  /** Questions heard on a task's `tasks/result` stream and not answered yet, by task id. */
  const asked = new Map<string, Record<string, Json.JsonValue>>()
  const sessionOf = (id: string | undefined) => ({ id, protocolVersion: Protocol.protocolVersion })

  const open = (server: ServerEndpoint): Effect.Effect<Connection, WireError> =>
    Effect.gen(function* () {
      const method = "initialize"
      const sent = yield* send(
        server,
        request(method, {
          protocolVersion: Protocol.protocolVersion,
          // Input inside a task comes as the server's own requests: invited only as far as the
          // client answers input (its 2026-07-28 capabilities say so).
          capabilities: inputCapabilities,
          clientInfo: { name: clientInfo.name, version: clientInfo.version },
        }),
        sessionOf(undefined),
      ).pipe(
        Effect.catchTag("SessionGone", () =>
          Effect.fail(new MalformedAnswer({ method, reason: "HTTP 404 to initialize" })),
        ),
      )
      const init = yield* malformed(method)(Protocol.decodeInitialize(sent.result))
      // The notification's answer (202, no body) carries nothing we need.
      yield* Effect.ignore(
        send(
          server,
          { jsonrpc: "2.0", method: "notifications/initialized" },
          {
            id: sent.sessionId,
            protocolVersion: init.protocolVersion,
          },
        ),
      )
      const connection: Connection = { id: sent.sessionId, init, tools: undefined }
      connections.set(keyOf(server), connection)
      return connection
    })

  const connection = (server: ServerEndpoint): Effect.Effect<Connection, WireError> =>
    Effect.suspend(() => {
      const known = connections.get(keyOf(server))
      return known !== undefined
        ? Effect.succeed(known)
        : opening.withPermits(1)(
            Effect.suspend(() => {
              const again = connections.get(keyOf(server))
              return again !== undefined ? Effect.succeed(again) : open(server)
            }),
          )
    })

  /**
   * Runs `f` in the session `preferred` (a task's own) or the endpoint's current one. When the
   * server says that session is gone, `f` runs once more in a fresh session, told with `moved`
   * whether the session it was meant for is the one that went.
   */
  const withSession = <A>(
    server: ServerEndpoint,
    preferred: string | undefined,
    f: (session: string | undefined, moved: boolean) => Effect.Effect<A, WireError | SessionGone>,
  ): Effect.Effect<A, WireError> =>
    Effect.gen(function* () {
      const current = yield* connection(server)
      const first = preferred ?? current.id
      const forget = (id: string | undefined) => {
        if (connections.get(keyOf(server))?.id === id) connections.delete(keyOf(server))
      }
      const tried = yield* Effect.either(f(first, false))
      if (Either.isRight(tried)) return tried.right
      if (tried.left._tag !== "SessionGone") return yield* Effect.fail(tried.left)
      forget(first)
      const moved = preferred !== undefined
      // The endpoint's own session may be gone too (a server restart drops them all): once more
      // in a session opened now.
      const fresh = yield* connection(server)
      const again = yield* Effect.either(f(fresh.id, moved))
      if (Either.isRight(again)) return again.right
      if (again.left._tag !== "SessionGone") return yield* Effect.fail(again.left)
      forget(fresh.id)
      const opened = yield* connection(server)
      return yield* f(opened.id, moved).pipe(
        Effect.catchTag("SessionGone", (gone) =>
          Effect.fail(
            new NotSent({ method: gone.method, reason: "HTTP 404: the server does not know the session" }),
          ),
        ),
      )
    })

  const rpcIn = (
    server: ServerEndpoint,
    session: string | undefined,
    method: string,
    params: Json.JsonObject,
  ) => send(server, request(method, params), sessionOf(session))

  /**
   * Every page of `tools/list`, in one session. Pages read as on 2026-07-28 (no `resultType`
   * means complete); a server that repeats a cursor, or never stops, is malformed.
   */
  const listTools: Wire["listTools"] = (server) =>
    withSession(server, undefined, (session) => {
      const method = "tools/list"
      const page = (
        cursor: string | undefined,
        seen: ReadonlySet<string>,
        found: ReadonlyArray<ToolInfo>,
      ): Effect.Effect<ReadonlyArray<ToolInfo>, WireError | SessionGone> =>
        rpcIn(server, session, method, cursor === undefined ? {} : { cursor }).pipe(
          Effect.flatMap((sent) => malformed(method)(Protocol2026.decodeToolsPage(sent.result))),
          Effect.flatMap(({ tools, nextCursor }) => {
            const all = [...found, ...tools]
            if (nextCursor === undefined) return Effect.succeed(all)
            return seen.has(nextCursor) || seen.size >= maxToolPages
              ? Effect.fail(new MalformedAnswer({ method, reason: "tools/list does not end" }))
              : page(nextCursor, new Set([...seen, nextCursor]), all)
          }),
        )
      return page(undefined, new Set(), [])
    })

  const toolsOf = (server: ServerEndpoint, conn: Connection) =>
    conn.tools !== undefined
      ? Effect.succeed(conn.tools)
      : Effect.map(listTools(server), (tools) => {
          const byName = new Map(tools.map((tool) => [tool.name, tool]))
          conn.tools = byName
          return byName as ReadonlyMap<string, ToolInfo>
        })

  const callTool: Wire["callTool"] = (server, call) =>
    Effect.gen(function* () {
      const method = "tools/call"
      const conn = yield* connection(server).pipe(Effect.mapError(beforeCall))
      const tools = yield* toolsOf(server, conn).pipe(Effect.mapError(beforeCall))
      const support = tools.get(call.name)?.taskSupport
      const asTask = conn.init.taskCalls && (support === "optional" || support === "required")
      const params: Json.JsonObject = {
        name: call.name,
        arguments: call.arguments,
        _meta: { [idempotencyKeyMeta]: call.idempotencyKey },
        ...(asTask ? { task: {} } : {}),
      }
      // A 404 for the session means the call was not processed: it is sent again in a new one.
      return yield* withSession(server, undefined, (session) =>
        rpcIn(server, session, method, params).pipe(
          Effect.flatMap((sent) => {
            const decoded = Protocol.decodeCallAnswer(sent.result, { session })
            if (Either.isRight(decoded)) return Effect.succeed<CallAnswer>(decoded.right)
            const { reason, announcedTaskId } = decoded.left
            return Effect.fail(
              new MalformedAnswer(
                announcedTaskId === undefined
                  ? { method, reason }
                  : { method, reason, taskId: announcedTaskId },
              ),
            )
          }),
        ),
      )
    })

  /** A finished task's payload: `tasks/result` gives the tool result or the JSON-RPC error. */
  const finished = (server: ServerEndpoint, session: string | undefined, task: Protocol.Task) =>
    rpcIn(server, session, "tasks/result", { taskId: task.taskId }).pipe(
      Effect.flatMap((sent) => malformed("tasks/result")(Protocol.decodeToolResult(sent.result))),
      Effect.map((result) =>
        // 2025-11-25 reports a tool's own error (`isError`) as a failed task; the payload is a
        // tool result all the same, and is kept as one.
        task.status === "completed" || result.isError === true
          ? Protocol.toTaskState(task, { session }, { result }, "completed")
          : Protocol.toTaskState(
              task,
              { session },
              {
                error: new RpcError({
                  code: -32603,
                  message: task.statusMessage ?? "the task failed",
                  data: { result },
                }),
              },
            ),
      ),
      Effect.catchTag("RpcErrorAnswer", (answer) =>
        Effect.succeed(Protocol.toTaskState(task, { session }, { error: answer.error }, "failed")),
      ),
    )

  const sessionLost = (taskId: string, session: string | undefined) =>
    Effect.map(
      Clock.currentTimeMillis,
      (now) =>
        new TaskState({
          taskId,
          status: "failed",
          createdAt: now,
          lastUpdatedAt: now,
          ttlMs: null,
          generation: Protocol.protocolVersion,
          ...(session === undefined ? {} : { session }),
          error: localError("the server no longer knows the task: its session ended", "session_lost"),
        }),
    )

  /** A task's status as `tasks/get` (or a status notification) gave it, in the port's shape. */
  const stateOf = (
    server: ServerEndpoint,
    session: string | undefined,
    task: Protocol.Task,
  ): Effect.Effect<TaskState, WireError | SessionGone> => {
    switch (task.status) {
      case "completed":
      case "failed":
        return finished(server, session, task)
      case "input_required":
        // Nothing to answer (see `awaitingInput`): the task waits, and is polled on as working.
        return Effect.succeed(
          Protocol.toTaskState(
            { ...task, statusMessage: task.statusMessage ?? "the server waits for input" },
            { session },
            {},
            "working",
          ),
        )
      default:
        return Effect.succeed(Protocol.toTaskState(task, { session }))
    }
  }

  const forget = (taskId: string) =>
    Effect.sync(() => {
      asked.delete(taskId)
    })

  /**
   * The row's questions the server may still wait on. One with an acknowledged answer is done.
   * One never answered stays open whatever else the server asks. One answered but not
   * acknowledged (a crash between sending and writing the acknowledgement) stays open only while
   * the server asks nothing new: it asks each question once, so a new question means it took
   * that answer and moved on; otherwise it still waits on it, and the answer is sent again (a
   * server resolves each request id once, and drops a second response to it).
   */
  const stillOpen = (origin: TaskOrigin | undefined, askedAnew: boolean) => {
    const answers = origin?.answers ?? {}
    return Object.fromEntries(
      Object.entries(origin?.inputRequests ?? {}).filter(([key]) => {
        const answer = answers[key]
        if (Input.idOf(key) === undefined || answer?.acknowledged === true) return false
        return answer === undefined || !askedAnew
      }),
    )
  }

  /**
   * A task waits for input: its questions come on the answer stream of `tasks/result`, which is
   * listened to for a short window. The listening request is then cancelled (the server would
   * otherwise write the next question to a stream no one reads) and the questions are reported
   * as the task's input requests, with those asked before and not yet answered. A question asked
   * before a restart is known only from the row (`origin.inputRequests`).
   */
  const awaitingInput = (
    server: ServerEndpoint,
    session: string | undefined,
    task: Protocol.Task,
    origin: TaskOrigin | undefined,
  ): Effect.Effect<TaskState, WireError | SessionGone> =>
    Effect.gen(function* () {
      const { taskId } = task
      const listening = request("tasks/result", { taskId })
      const sent = yield* send(server, listening, sessionOf(session), { windowMs: listenWindowMs })
      if (sent.stopped !== true) {
        // The task ended while we listened: its status says how, `finished` gets the payload.
        const again = yield* rpcIn(server, session, "tasks/get", { taskId })
        const ended = yield* malformed("tasks/get")(Protocol.decodeGetTask(again.result, taskId))
        return yield* stateOf(server, session, ended)
      }
      const heard = Input.hear(sent.serverMessages ?? [], taskId)
      // Written before anything else is sent: the server will not ask these again.
      if (Object.keys(heard.questions).length > 0 && origin?.heard !== undefined) {
        yield* origin.heard(heard.questions)
      }
      yield* Effect.ignore(
        send(
          server,
          {
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: listening.id, reason: "listened for input only" },
          },
          sessionOf(session),
        ),
      )
      for (const other of heard.others) {
        yield* Effect.ignore(send(server, Input.answerOther(other), sessionOf(session)))
      }
      if (heard.status !== undefined) {
        // A status notification is applied as a poll answer would be.
        const notified = Protocol.decodeGetTask(heard.status, taskId)
        if (Either.isRight(notified) && notified.right.status !== "input_required") {
          return yield* stateOf(server, session, notified.right)
        }
      }
      const pending = { ...asked.get(taskId), ...heard.questions }
      asked.set(taskId, pending)
      const outstanding = { ...stillOpen(origin, Object.keys(heard.questions).length > 0), ...pending }
      if (Object.keys(outstanding).length === 0) return yield* stateOf(server, session, task)
      return Protocol.toTaskState(task, { session }, { inputRequests: outstanding })
    })

  const getTask: Wire["getTask"] = (server, taskId, origin) =>
    withSession(server, origin?.session, (session, moved) =>
      rpcIn(server, session, "tasks/get", { taskId }).pipe(
        Effect.flatMap((sent) => malformed("tasks/get")(Protocol.decodeGetTask(sent.result, taskId))),
        Effect.flatMap((task) =>
          task.status === "input_required"
            ? awaitingInput(server, session, task, origin)
            : stateOf(server, session, task),
        ),
        Effect.tap((state) =>
          state.status === "working" || state.status === "input_required" ? Effect.void : forget(taskId),
        ),
        Effect.catchIf(
          (error): error is RpcErrorAnswer =>
            moved && error._tag === "RpcErrorAnswer" && error.error.code === invalidParams,
          (unknown) =>
            // Past its lifetime, an unknown task has expired, whichever session asks.
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              origin?.expiresAt !== undefined && now >= origin.expiresAt
                ? Effect.fail(unknown)
                : sessionLost(taskId, session),
            ),
        ),
      ),
    )

  /**
   * Each answer is the response to the server's request its key names, sent in the session that
   * asked, or in a new one when the server dropped that session (a server whose tasks outlive
   * their session takes it there). A key that names no request is the server not taking the
   * answer (-32602), as on 2026-07-28.
   */
  const updateTask: Wire["updateTask"] = (server, taskId, responses, origin) =>
    Effect.gen(function* () {
      const method = "tasks/update"
      const refused = (message: string) =>
        new RpcErrorAnswer({ method, error: new RpcError({ code: invalidParams, message }) })
      for (const [key, response] of Object.entries(responses)) {
        const id = Input.idOf(key)
        if (id === undefined) return yield* Effect.fail(refused(`input key ${key} names no request`))
        yield* withSession(server, origin?.session, (session) =>
          send(server, { jsonrpc: "2.0", id, result: response }, sessionOf(session)),
        )
        const pending = asked.get(taskId)
        if (pending !== undefined) delete pending[key]
      }
    })

  const discover = (server: ServerEndpoint): Effect.Effect<DiscoverInfo, WireError> =>
    Effect.map(connection(server), (conn) => ({
      supportsTasks: conn.init.taskCalls,
      protocolVersions: [conn.init.protocolVersion],
      serverInfo: conn.init.serverInfo,
    }))

  return Wire.of({
    discover,
    listTools,
    callTool,
    getTask,
    updateTask,
    cancelTask: (server, taskId, origin) =>
      withSession(server, origin?.session, (session) =>
        rpcIn(server, session, "tasks/cancel", { taskId }).pipe(
          Effect.flatMap((sent) => malformed("tasks/cancel")(Protocol.decodeCancel(sent.result))),
        ),
      ),
  })
}
