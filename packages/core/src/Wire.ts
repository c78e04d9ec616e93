/**
 * The wire port: the six MCP requests the client needs, spoken statelessly (protocol revision
 * 2026-07-28, Tasks extension), with every failure classified so the state machine knows what it
 * may conclude. The HTTP adapter sits on the official SDK's transports for framing; it never
 * routes `tools/call` through the SDK's `Client`, which drops task handles.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import { RpcError } from "./HandleRecord.js"
import { type JsonObject, JsonValue } from "./Json.js"
import { CallToolResult } from "./ToolResult.js"

/**
 * The protocol revision every request names.
 *
 * @since 0.1.0
 * @category constants
 */
export const protocolVersion = "2026-07-28"

/**
 * The Tasks extension's identifier, declared in every request's client capabilities.
 *
 * @since 0.1.0
 * @category constants
 */
export const tasksExtension = "io.modelcontextprotocol/tasks"

/**
 * The `_meta` key that carries our idempotency key to servers that care. In reverse-DNS form, as
 * the schema asks of vendor keys (a prefix whose second label is `modelcontextprotocol` or `mcp`
 * is reserved). A server that deduplicates `tools/call` reads it.
 *
 * @since 0.1.0
 * @category constants
 */
export const idempotencyKeyMeta = "io.github.mcp-handles/key"

/**
 * Where a server lives and how to authenticate to it. Credentials are looked up at call time
 * (never stored): `headers` runs before every request.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerEndpoint {
  /** The name rows refer to; part of the server identity. */
  readonly name: string
  readonly url: string
  readonly headers?:
    | (() => Effect.Effect<Readonly<Record<string, string>>> | Readonly<Record<string, string>>)
    | undefined
}

// ---------------------------------------------------------------------------------------------
// What the server says
// ---------------------------------------------------------------------------------------------

/**
 * A task's status as the server reports it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TaskStatus = Schema.Literal("working", "input_required", "completed", "failed", "cancelled")

/**
 * A task as `tools/call` (resultType "task") or `tasks/get` describe it, timestamps converted to
 * epoch milliseconds.
 *
 * @since 0.1.0
 * @category models
 */
export class TaskState extends Schema.Class<TaskState>("TaskState")({
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: Schema.optional(Schema.String),
  createdAt: Schema.Number,
  lastUpdatedAt: Schema.Number,
  ttlMs: Schema.NullOr(Schema.Number),
  pollIntervalMs: Schema.optional(Schema.Number),
  inputRequests: Schema.optional(Schema.Record({ key: Schema.String, value: JsonValue })),
  result: Schema.optional(CallToolResult),
  error: Schema.optional(RpcError),
  /** The protocol generation the task lives under; absent means 2026-07-28. */
  generation: Schema.optional(Schema.String),
  /**
   * 2025-11-25 only: the session the task was seen under (servers may scope tasks to it). A
   * credential of sorts: never log it.
   */
  session: Schema.optional(Schema.String),
}) {}

/**
 * What a row remembers of where its task lives (a `TaskSnapshot` has these fields): which
 * protocol generation, and for 2025-11-25 which session. Passed back to `getTask`, `updateTask`
 * and `cancelTask` so that a task created before a restart is asked for the same way.
 *
 * @since 0.3.0
 * @category models
 */
export interface TaskOrigin {
  readonly generation?: string | undefined
  readonly session?: string | undefined
  /**
   * The input requests the row holds as outstanding. A 2025-11-25 server asks each question
   * once; after a restart it is known only from the row.
   */
  readonly inputRequests?: Readonly<Record<string, JsonValue>> | null | undefined
  /**
   * The answers the row holds, by input key: whether each was acknowledged. With
   * `inputRequests`, what the row knows decides which questions are still open, also after a
   * restart (no process keeps its own list of what it answered).
   */
  readonly answers?: Readonly<Record<string, { readonly acknowledged: boolean }>> | undefined
  /**
   * When the task's lifetime ends by the client's clock (first seen + TTL), if it has one: past
   * it, a 2025-11-25 task its new session does not know has expired rather than been lost with
   * its session.
   */
  readonly expiresAt?: number | undefined
  /**
   * Told the questions a 2025-11-25 server put on a task's stream, before the port sends
   * anything else (stopping the listening request, answering the server's other requests): the
   * engine writes them to the row there, so a crash after that loses none. Such a server asks
   * each question once.
   */
  readonly heard?: ((questions: Readonly<Record<string, JsonValue>>) => Effect.Effect<void>) | undefined
}

/**
 * The answer to `tools/call`: a direct result, a task handle, or (multi round-trip, before any
 * task exists) a request for input to answer before retrying the call with `requestState`.
 *
 * @since 0.1.0
 * @category models
 */
export type CallAnswer =
  | { readonly _tag: "Complete"; readonly result: CallToolResult }
  | { readonly _tag: "Task"; readonly task: TaskState }
  | {
      readonly _tag: "InputRequired"
      readonly inputRequests: Readonly<Record<string, JsonValue>>
      readonly requestState: string | undefined
    }

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolInfo {
  readonly name: string
  /** The tool's `title`, when the server gives one (for people, as `mcp-handles tools` shows it). */
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly idempotentHint: boolean
  /** `execution.taskSupport` as advertised ("forbidden" | "optional" | "required"), if any. */
  readonly taskSupport: string | undefined
  /** The tool's `inputSchema` as advertised, when it is a JSON object. */
  readonly inputSchema?: JsonObject | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface DiscoverInfo {
  readonly supportsTasks: boolean
  readonly protocolVersions: ReadonlyArray<string>
  readonly serverInfo: JsonObject | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CallToolRequest {
  readonly name: string
  readonly arguments: JsonObject
  /** Travels as `_meta["io.github.mcp-handles/key"]` (`idempotencyKeyMeta`). */
  readonly idempotencyKey: string
  /** Multi round-trip retry: the answers and the state the server echoed. */
  readonly inputResponses?: Readonly<Record<string, JsonValue>> | undefined
  readonly requestState?: string | undefined
  /**
   * Told each `notifications/progress` the server sends about this call while its answer is on
   * the way (the request then carries a `progressToken`). Servers report progress of direct
   * answers only: the Tasks extension has none for tasks.
   */
  readonly onProgress?: ((notice: ProgressNotice) => void) | undefined
}

/**
 * One `notifications/progress` of a call.
 *
 * @since 0.4.0
 * @category models
 */
export interface ProgressNotice {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/**
 * What a `subscriptions/listen` stream says: which tasks the server agreed to notify about (the
 * acknowledgement, always first), then each task's state whenever it changes, as `tasks/get`
 * would answer at that moment. A notification that does not decode is reported with its task id
 * (when it has one), so that the task can be polled instead.
 *
 * @since 0.3.0
 * @category models
 */
export type ListenEvent =
  | { readonly _tag: "Acknowledged"; readonly taskIds: ReadonlyArray<string> }
  /** Bytes came that carry no message (a keep-alive comment, or part of a message): the stream lives. */
  | { readonly _tag: "Alive" }
  | { readonly _tag: "Task"; readonly task: TaskState }
  | { readonly _tag: "Malformed"; readonly taskId: string | undefined; readonly reason: string }

// ---------------------------------------------------------------------------------------------
// How it can fail. Each class says what the caller may conclude.
// ---------------------------------------------------------------------------------------------

/**
 * The request provably never reached the server (connection refused, DNS failure, aborted
 * before sending): nothing happened there, retrying is safe.
 *
 * @since 0.1.0 * @category errors
 */
export class NotSent extends Schema.TaggedError<NotSent>()("NotSent", {
  method: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `${this.method} was not sent (${this.reason}): nothing reached the server, so sending it again is safe`
  }
}

/**
 * The request may have reached the server but no usable answer came back (connection dropped
 * after sending, timeout, 5xx other than 503). For `tools/call` the server may have created a task.
 *
 * @since 0.1.0 * @category errors
 */
export class NoAnswer extends Schema.TaggedError<NoAnswer>()("NoAnswer", {
  method: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `${this.method} got no usable answer (${this.reason}): the server may have acted on it`
  }
}

/**
 * The server answered with a JSON-RPC error. For `tools/call` this means no task was created.
 *
 * @since 0.1.0 * @category errors
 */
export class RpcErrorAnswer extends Schema.TaggedError<RpcErrorAnswer>()("RpcErrorAnswer", {
  method: Schema.String,
  error: RpcError,
}) {
  override get message(): string {
    return `the server refused ${this.method}: ${this.error.message} (JSON-RPC error ${this.error.code})`
  }
}

/**
 * The server refused for load (HTTP 429 or 503) and did not process the request.
 *
 * @since 0.1.0 * @category errors
 */
export class ServerBusy extends Schema.TaggedError<ServerBusy>()("ServerBusy", {
  method: Schema.String,
  status: Schema.Number,
  /** From `Retry-After`, when the server sent one. */
  retryAfterMs: Schema.optional(Schema.Number),
}) {
  override get message(): string {
    const again =
      this.retryAfterMs === undefined
        ? "try again later"
        : `it asks to be tried again in ${Math.max(1, Math.ceil(this.retryAfterMs / 1000))} s`
    return `the server is busy (HTTP ${this.status}) and did not process ${this.method}; ${again}`
  }
}

/**
 * HTTP 401 or 403: a credentials problem, not the task's fate.
 *
 * @since 0.1.0 * @category errors
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  method: Schema.String,
  status: Schema.Number,
}) {
  override get message(): string {
    return `the server refused the credentials for ${this.method} (HTTP ${this.status}); check the server's headers or token`
  }
}

/**
 * An answer arrived but is not a valid answer to the request (not JSON, wrong shape, unknown
 * `resultType`, oversize, hostile keys). The server's protocol error; for `tools/call` it is
 * unknown whether a task was created.
 *
 * @since 0.1.0 * @category errors
 */
export class MalformedAnswer extends Schema.TaggedError<MalformedAnswer>()("MalformedAnswer", {
  method: Schema.String,
  reason: Schema.String,
  /**
   * Set when a `tools/call` answer announced a task (`resultType: "task"` with a string
   * `taskId`) but failed validation otherwise: the server did create that task, so the caller
   * should keep the id (and poll it) rather than lose it. A bearer credential: never log it.
   */
  taskId: Schema.optional(Schema.String),
  /**
   * Set when a `tools/call` answer the client cannot read at all (an unknown `resultType`) names a
   * string `taskId`: whether the server runs a task under it is unknown, so the call is in doubt,
   * and the id is kept on its row, to be cancelled. A bearer credential: never log it.
   */
  namedTaskId: Schema.optional(Schema.String),
  /**
   * Set on a `tasks/get` answer that said the task completed but whose result was refused
   * (nested too deep, hostile keys): the task's fate is decided; only its payload is not kept.
   */
  completed: Schema.optional(Schema.Literal(true)),
}) {
  /** A sentence, never the task id a field may hold (a bearer credential). */
  override get message(): string {
    const kept =
      this.taskId !== undefined
        ? "; it named the task it created, whose id is kept"
        : this.namedTaskId !== undefined
          ? "; it named a task id, which is kept to be cancelled"
          : this.completed === true
            ? "; the task completed, and its result was refused"
            : ""
    return `the server's answer to ${this.method} is not a valid one: ${this.reason}${kept}`
  }
}

/**
 * The server and the client have no protocol version in common: the server refused the request
 * with `-32022` (unsupported protocol version) and listed none the client speaks, or
 * `server/discover` listed none. Nothing was processed (for `tools/call`: no task was created);
 * asking again changes nothing until one side is upgraded.
 *
 * @since 0.3.0
 * @category errors
 */
export class UnsupportedVersion extends Schema.TaggedError<UnsupportedVersion>()("UnsupportedVersion", {
  method: Schema.String,
  /** The version the refused request named. */
  requested: Schema.String,
  /** The versions the server says it supports. */
  supported: Schema.Array(Schema.String),
  /** The server's `-32022` answer, or one in its words when `server/discover` said it. */
  error: RpcError,
}) {
  override get message(): string {
    const supported = this.supported.length === 0 ? "names none" : `supports ${this.supported.join(", ")}`
    return `the server and this client have no protocol version in common: ${this.method} asked for ${this.requested}, and the server ${supported}`
  }
}

/**
 * The server advertises the tool with an `inputSchema` whose `x-mcp-header` declarations break
 * the rules of SEP-2243 (a declaration out of reach of `properties`, a name that is no header
 * token or is declared twice, a property that is not a string, integer or boolean). Such a tool
 * must not be called: `callTool` refuses it before anything is recorded.
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidToolDefinition extends Schema.TaggedError<InvalidToolDefinition>()(
  "InvalidToolDefinition",
  {
    server: Schema.String,
    tool: Schema.String,
    reason: Schema.String,
  },
) {
  override get message(): string {
    return `tool ${JSON.stringify(this.tool)} of ${this.server} has an invalid definition: ${this.reason}`
  }
}

/**
 * @since 0.1.0
 * @category errors
 */
export type WireError =
  | NotSent
  | NoAnswer
  | RpcErrorAnswer
  | ServerBusy
  | Unauthorized
  | MalformedAnswer
  | UnsupportedVersion

/**
 * JSON-RPC "invalid params": for `tasks/*` it means the task id is unknown or expired.
 *
 * @since 0.1.0
 * @category constants
 */
export const invalidParams = -32602

// ---------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface Wire {
  readonly discover: (server: ServerEndpoint) => Effect.Effect<DiscoverInfo, WireError>
  readonly listTools: (server: ServerEndpoint) => Effect.Effect<ReadonlyArray<ToolInfo>, WireError>
  readonly callTool: (
    server: ServerEndpoint,
    request: CallToolRequest,
  ) => Effect.Effect<CallAnswer, WireError>
  readonly getTask: (
    server: ServerEndpoint,
    taskId: string,
    origin?: TaskOrigin | undefined,
  ) => Effect.Effect<TaskState, WireError>
  readonly updateTask: (
    server: ServerEndpoint,
    taskId: string,
    inputResponses: Readonly<Record<string, JsonValue>>,
    origin?: TaskOrigin | undefined,
  ) => Effect.Effect<void, WireError>
  readonly cancelTask: (
    server: ServerEndpoint,
    taskId: string,
    origin?: TaskOrigin | undefined,
  ) => Effect.Effect<void, WireError>
  /**
   * Fails when the server's definition of the tool must not be called (`InvalidToolDefinition`);
   * succeeds when it is valid or cannot be learnt now (the call itself will tell). Optional: a
   * wire without transport rules of its own has nothing to check.
   */
  readonly checkTool?:
    | ((server: ServerEndpoint, tool: string) => Effect.Effect<void, InvalidToolDefinition>)
    | undefined
  /**
   * Opens a `subscriptions/listen` stream for `taskIds` (2026-07-28). The stream ends when the
   * server ends the subscription gracefully and fails when the connection drops. Optional: a wire
   * that cannot hold a stream open has none, and its tasks are polled.
   */
  readonly listen?:
    | ((server: ServerEndpoint, taskIds: ReadonlyArray<string>) => Stream.Stream<ListenEvent, WireError>)
    | undefined
}

/**
 * @since 0.1.0
 * @category tags
 */
export const Wire: Context.Tag<Wire, Wire> = Context.GenericTag<Wire>("@mcp-handles/core/Wire")

/**
 * What every wire adapter (`HttpWire`, `TransportWire`) takes besides its connection. A field
 * left out, or `undefined`, takes its value from `defaults`.
 *
 * @since 0.2.0
 * @category models
 */
export interface AdapterOptions {
  /** Per-request timeout; a `tools/call` that times out is `NoAnswer` (in doubt). */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** Answers larger than this (in UTF-8 bytes) are `MalformedAnswer`. */
  readonly maxAnswerBytes?: number | undefined
  /** Who we are, in every request's envelope. */
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
  /**
   * Client capabilities declared on every request besides the Tasks extension (e.g.
   * `{ elicitation: {} }` when input requests can be answered).
   */
  readonly clientCapabilities?: JsonObject | undefined
  /**
   * The protocol versions this client speaks, most preferred first; each endpoint is spoken to in
   * the first of them it supports (see `UnsupportedVersion`). Defaults to `[protocolVersion]`.
   */
  readonly protocolVersions?: ReadonlyArray<string> | undefined
}

/**
 * The defaults of `AdapterOptions`, shared by every wire adapter.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults: {
  readonly requestTimeout: Duration.Duration
  readonly maxAnswerBytes: number
  readonly clientInfo: { readonly name: string; readonly version: string }
} = {
  requestTimeout: Duration.seconds(30),
  maxAnswerBytes: 16 * 1024 * 1024,
  clientInfo: { name: "mcp-handles", version: "0.1.0" },
}
