/**
 * Decoders of the answers a 2025-11-25 server gives (the revision with `initialize`, sessions
 * and the first Tasks design): `initialize`, `CreateTaskResult`, `tasks/get`, `tasks/result`
 * and `tasks/cancel`. Each returns the port's shape or the reason the answer is malformed.
 *
 * What differs from 2026-07-28: the task of a `tools/call` answer is nested (`{ task }`), its
 * lifetime is `ttl` and its interval `pollInterval` (both milliseconds), `tasks/get` never holds
 * the payload (`tasks/result` does), and a failed task may carry a tool result (`isError`).
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { RpcError } from "../../HandleRecord.js"
import { JsonObject, JsonValue } from "../../Json.js"
import * as ToolResult from "../../ToolResult.js"
import { type CallAnswer, TaskState, TaskStatus } from "../../Wire.js"
import { describeParseError } from "./classify.js"
import * as Protocol2026 from "./protocol.js"

/** The revision this generation speaks. @internal */
export const protocolVersion = "2025-11-25"

/**
 * A task as 2025-11-25 describes it. `pollInterval` is advisory: a value that is not a finite
 * number is ignored rather than a reason to refuse the status.
 */
const TaskWire = Schema.Struct({
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: Schema.optional(Schema.String),
  createdAt: Protocol2026.IsoTimestamp,
  // Required by the revision; read leniently (it defaults to createdAt) since it is advisory.
  lastUpdatedAt: Schema.optional(Protocol2026.IsoTimestamp),
  ttl: Schema.NullOr(Schema.Number.pipe(Schema.finite())),
  pollInterval: Schema.optional(Schema.Unknown),
})

const decodeTaskWire = Schema.decodeUnknownEither(TaskWire)

const CreateTaskResult = Schema.Struct({ task: Schema.Unknown })

// A tool result must name its content, as the revision requires (a stored row may lack it).
const CallToolResult = Schema.Struct({ content: Schema.Array(JsonValue) })

/** Where a task lives, stamped on every state this generation reports. @internal */
export interface Origin {
  readonly session: string | undefined
}

/**
 * Builds the port's task state. `status`, `result` and `error` may be replaced (a completed
 * task's payload comes from `tasks/result`).
 *
 * @internal
 */
export const toTaskState = (
  task: typeof TaskWire.Type,
  origin: Origin,
  payload: {
    readonly result?: JsonObject | undefined
    readonly error?: RpcError | undefined
    readonly inputRequests?: Readonly<Record<string, JsonValue>> | undefined
  } = {},
  status: typeof TaskStatus.Type = task.status,
): TaskState =>
  new TaskState(
    {
      taskId: task.taskId,
      status,
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt ?? task.createdAt,
      ttlMs: task.ttl,
      generation: protocolVersion,
      ...(origin.session === undefined ? {} : { session: origin.session }),
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
      ...(typeof task.pollInterval === "number" && Number.isFinite(task.pollInterval)
        ? { pollIntervalMs: task.pollInterval }
        : {}),
      ...(payload.error === undefined ? {} : { error: payload.error }),
      ...(payload.result === undefined ? {} : Protocol2026.completedFields(payload.result)),
      ...(payload.inputRequests === undefined ? {} : { inputRequests: payload.inputRequests }),
    },
    true,
  )

/** @internal */
export type Task = typeof TaskWire.Type

/**
 * `tools/call`: a `CreateTaskResult` (`{ task }`) or a plain tool result. `announcedTaskId` is
 * set when the answer names a task but fails validation otherwise: the server did create it.
 *
 * @internal
 */
export const decodeCallAnswer = (
  result: JsonObject,
  origin: Origin,
): Either.Either<CallAnswer, { readonly reason: string; readonly announcedTaskId?: string }> => {
  if (Either.isRight(Schema.decodeUnknownEither(CreateTaskResult)(result)) && "task" in result) {
    const nested = result.task
    return Either.match(decodeTaskWire(nested), {
      onLeft: (error) => {
        const taskId =
          nested !== null && typeof nested === "object" && !Array.isArray(nested)
            ? (nested as JsonObject).taskId
            : undefined
        const reason = `invalid CreateTaskResult: ${describeParseError(error)}`
        return Either.left(typeof taskId === "string" ? { reason, announcedTaskId: taskId } : { reason })
      },
      onRight: (task) => Either.right<CallAnswer>({ _tag: "Task", task: toTaskState(task, origin) }),
    })
  }
  return Either.match(
    Either.flatMap(Schema.decodeUnknownEither(CallToolResult)(result), () => ToolResult.decode(result)),
    {
      onLeft: (error) => Either.left({ reason: `invalid tool result: ${describeParseError(error)}` }),
      onRight: (decoded) => Either.right<CallAnswer>({ _tag: "Complete", result: decoded }),
    },
  )
}

/**
 * `tasks/get`: the task's status, without payload. The task must be the one asked for.
 *
 * @internal
 */
export const decodeGetTask = (result: JsonObject, taskId: string): Either.Either<Task, string> => {
  const decoded = decodeTaskWire(result)
  if (Either.isLeft(decoded)) return Either.left(`invalid task: ${describeParseError(decoded.left)}`)
  return decoded.right.taskId === taskId
    ? Either.right(decoded.right)
    : Either.left("the answer describes a different task")
}

/**
 * `tasks/result` of a finished task: the tool result it ended with.
 *
 * @internal
 */
export const decodeToolResult = (result: JsonObject): Either.Either<JsonObject, string> =>
  Either.match(Schema.decodeUnknownEither(CallToolResult)(result), {
    onLeft: (error) => Either.left(`invalid tasks/result: ${describeParseError(error)}`),
    onRight: () => Either.right(result),
  })

const InitializeResult = Schema.Struct({
  protocolVersion: Schema.String,
  capabilities: Schema.Struct({
    tasks: Schema.optional(
      Schema.Struct({
        requests: Schema.optional(
          Schema.Struct({
            tools: Schema.optional(Schema.Struct({ call: Schema.optional(JsonObject) })),
          }),
        ),
      }),
    ),
  }),
  serverInfo: Schema.optional(JsonObject),
})

/** What `initialize` told us. @internal */
export interface Initialized {
  readonly protocolVersion: string
  /** The server's `tasks.requests.tools.call` capability: `tools/call` may ask for a task. */
  readonly taskCalls: boolean
  readonly serverInfo: JsonObject | undefined
}

/** @internal */
export const decodeInitialize = (result: JsonObject): Either.Either<Initialized, string> =>
  Either.match(Schema.decodeUnknownEither(InitializeResult)(result), {
    onLeft: (error) => Either.left(`invalid initialize result: ${describeParseError(error)}`),
    onRight: (init) =>
      Either.right<Initialized>({
        protocolVersion: init.protocolVersion,
        taskCalls: init.capabilities.tasks?.requests?.tools?.call !== undefined,
        serverInfo: init.serverInfo,
      }),
  })

/**
 * `tasks/cancel` answers with the task (now cancelled); anything that decodes as a task is an
 * acknowledgement.
 *
 * @internal
 */
export const decodeCancel = (result: JsonObject): Either.Either<void, string> =>
  Either.match(decodeTaskWire(result), {
    onLeft: (error) => Either.left(`invalid tasks/cancel result: ${describeParseError(error)}`),
    onRight: () => Either.void,
  })
