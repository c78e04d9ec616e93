/**
 * Decoders of the `result` objects of the six requests (protocol revision 2026-07-28, Tasks
 * extension), from JSON already checked by `Json.parse`. Each returns the port's shape or a
 * reason the answer is malformed; nothing here guesses. An absent `resultType` reads as
 * `"complete"`, as the revision requires of clients talking to older servers.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { RpcError } from "../../HandleRecord.js"
import { JsonObject, JsonValue } from "../../Json.js"
import {
  type CallAnswer,
  type DiscoverInfo,
  TaskState,
  TaskStatus,
  type ToolInfo,
  tasksExtension,
} from "../../Wire.js"
import { describeParseError } from "./classify.js"
import * as Timestamp from "./timestamp.js"

/** ISO 8601 date(-time) text to epoch milliseconds. @internal */
export const IsoTimestamp = Schema.transformOrFail(Schema.String, Schema.Number, {
  strict: true,
  decode: (text, _, ast) => {
    const millis = Timestamp.parse(text)
    return millis !== undefined
      ? ParseResult.succeed(millis)
      : ParseResult.fail(new ParseResult.Type(ast, text, "expected an ISO 8601 timestamp"))
  },
  encode: (millis) => ParseResult.succeed(new Date(millis).toISOString()),
})

const Finite = Schema.Number.pipe(Schema.finite())

const ErrorObject = Schema.Struct({
  code: Schema.Number.pipe(Schema.int()),
  message: Schema.String,
  data: Schema.optional(JsonValue),
})

const InputRequests = Schema.Record({ key: Schema.String, value: JsonValue })

/**
 * The fields of a task as the server sends them. `pollIntervalMs` and `ttlMs` are taken as sent
 * (any finite number): clamping a zero, negative or absurd interval is the poller's job, and it
 * must see the server's value to do it.
 */
const TaskWire = Schema.Struct({
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: Schema.optional(Schema.String),
  createdAt: IsoTimestamp,
  lastUpdatedAt: IsoTimestamp,
  ttlMs: Schema.NullOr(Finite),
  // Advisory: a value that is not a finite number is ignored, never a reason to refuse the
  // status it came with (the default schedule is used instead).
  pollIntervalMs: Schema.optional(Schema.Unknown),
  inputRequests: Schema.optional(InputRequests),
  result: Schema.optional(JsonObject),
  error: Schema.optional(ErrorObject),
})

const decodeTaskWire = Schema.decodeUnknownEither(TaskWire)

// The wire shape was just decoded: building the classes validates nothing new, so it is skipped.
const toTaskState = (task: typeof TaskWire.Type): TaskState =>
  new TaskState(
    {
      taskId: task.taskId,
      status: task.status,
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttlMs: task.ttlMs,
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
      ...(typeof task.pollIntervalMs === "number" && Number.isFinite(task.pollIntervalMs)
        ? { pollIntervalMs: task.pollIntervalMs }
        : {}),
      ...(task.inputRequests === undefined ? {} : { inputRequests: task.inputRequests }),
      ...(task.result === undefined ? {} : { result: task.result }),
      ...(task.error === undefined
        ? {}
        : {
            error: new RpcError(
              task.error.data === undefined
                ? { code: task.error.code, message: task.error.message }
                : { code: task.error.code, message: task.error.message, data: task.error.data },
              true,
            ),
          }),
    },
    true,
  )

const resultTypeOf = (result: JsonObject): Either.Either<string, string> => {
  const value = result.resultType
  if (value === undefined) return Either.right("complete")
  return typeof value === "string" ? Either.right(value) : Either.left("resultType is not a string")
}

const requireComplete = (result: JsonObject): string | undefined => {
  const resultType = resultTypeOf(result)
  if (Either.isLeft(resultType)) return resultType.left
  return resultType.right === "complete"
    ? undefined
    : `unexpected resultType ${JSON.stringify(resultType.right)}`
}

const InputRequired = Schema.Struct({
  inputRequests: Schema.optional(InputRequests),
  requestState: Schema.optional(Schema.String),
})

const CompleteToolResult = Schema.Struct({
  content: Schema.Array(JsonValue),
  isError: Schema.optional(Schema.Boolean),
})

/**
 * Whether `resultType` is one a `tools/call` answer may carry in this generation (an absent one
 * reads as "complete").
 *
 * @internal
 */
export const isKnownResultType = (resultType: unknown): boolean =>
  resultType === undefined ||
  resultType === "task" ||
  resultType === "complete" ||
  resultType === "input_required"

/**
 * `tools/call`: a direct result, a task handle (the seed state; detail fields are optional
 * here and validated when present), or a multi round-trip request for input.
 *
 * @internal
 */
export const decodeCallAnswer = (result: JsonObject): Either.Either<CallAnswer, string> => {
  const resultType = resultTypeOf(result)
  if (Either.isLeft(resultType)) return Either.left(resultType.left)
  switch (resultType.right) {
    case "task":
      return Either.match(decodeTaskWire(result), {
        onLeft: (error) => Either.left(`invalid task handle: ${describeParseError(error)}`),
        onRight: (task) => Either.right<CallAnswer>({ _tag: "Task", task: toTaskState(task) }),
      })
    case "complete":
      return Either.match(Schema.decodeUnknownEither(CompleteToolResult)(result), {
        onLeft: (error) => Either.left(`invalid tool result: ${describeParseError(error)}`),
        onRight: () => Either.right<CallAnswer>({ _tag: "Complete", result }),
      })
    case "input_required":
      return Either.flatMap(
        Either.mapLeft(
          Schema.decodeUnknownEither(InputRequired)(result),
          (error) => `invalid input request: ${describeParseError(error)}`,
        ),
        (input) =>
          input.inputRequests === undefined && input.requestState === undefined
            ? Either.left("input_required without inputRequests or requestState")
            : Either.right<CallAnswer>({
                _tag: "InputRequired",
                inputRequests: input.inputRequests ?? {},
                requestState: input.requestState,
              }),
      )
    default:
      return Either.left(`unknown resultType ${JSON.stringify(resultType.right).slice(0, 100)}`)
  }
}

/**
 * `tasks/get`: the detailed task. Each status must carry its payload (completed a `result`,
 * failed an `error`, input_required its `inputRequests`), and the task must be the one asked
 * for: a server answering with another task's state is not trusted.
 *
 * @internal
 */
export const decodeTaskState = (result: JsonObject, taskId: string): Either.Either<TaskState, string> => {
  const wrongType = requireComplete(result)
  if (wrongType !== undefined) return Either.left(wrongType)
  const decoded = decodeTaskWire(result)
  if (Either.isLeft(decoded)) return Either.left(`invalid task: ${describeParseError(decoded.left)}`)
  const task = decoded.right
  if (task.taskId !== taskId) return Either.left("the answer describes a different task")
  if (task.status === "completed" && task.result === undefined)
    return Either.left("completed task without result")
  if (task.status === "failed" && task.error === undefined) return Either.left("failed task without error")
  if (task.status === "input_required" && task.inputRequests === undefined) {
    return Either.left("input_required task without inputRequests")
  }
  return Either.right(toTaskState(task))
}

/**
 * `tasks/update` and `tasks/cancel`: an empty acknowledgement. A missing `resultType` is
 * tolerated (it reads as "complete"); any other value is malformed.
 *
 * @internal
 */
export const decodeAck = (result: JsonObject): Either.Either<void, string> => {
  const wrongType = requireComplete(result)
  return wrongType === undefined ? Either.void : Either.left(wrongType)
}

const DiscoverWire = Schema.Struct({
  supportedVersions: Schema.Array(Schema.String),
  capabilities: Schema.Struct({
    extensions: Schema.optional(Schema.Record({ key: Schema.String, value: JsonValue })),
  }),
  serverInfo: Schema.optional(JsonObject),
  _meta: Schema.optional(JsonObject),
})

const serverInfoMeta = "io.modelcontextprotocol/serverInfo"

/** @internal */
export const decodeDiscover = (result: JsonObject): Either.Either<DiscoverInfo, string> => {
  const wrongType = requireComplete(result)
  if (wrongType !== undefined) return Either.left(wrongType)
  return Either.match(Schema.decodeUnknownEither(DiscoverWire)(result), {
    onLeft: (error) => Either.left(`invalid discover result: ${describeParseError(error)}`),
    onRight: (discover) => {
      const extension = discover.capabilities.extensions?.[tasksExtension]
      const fromMeta = discover._meta?.[serverInfoMeta]
      const serverInfo =
        discover.serverInfo ??
        (fromMeta !== undefined &&
        fromMeta !== null &&
        typeof fromMeta === "object" &&
        !Array.isArray(fromMeta)
          ? (fromMeta as JsonObject)
          : undefined)
      return Either.right<DiscoverInfo>({
        supportsTasks:
          extension !== undefined &&
          extension !== null &&
          typeof extension === "object" &&
          !Array.isArray(extension),
        protocolVersions: discover.supportedVersions,
        serverInfo,
      })
    },
  })
}

const ToolWire = Schema.Struct({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  annotations: Schema.optional(Schema.Struct({ idempotentHint: Schema.optional(Schema.Boolean) })),
  execution: Schema.optional(Schema.Struct({ taskSupport: Schema.optional(Schema.String) })),
  // Kept as sent: what it declares is judged when the tool is called (see paramHeaders.ts).
  inputSchema: Schema.optional(Schema.Unknown),
})

const ToolsPage = Schema.Struct({
  tools: Schema.Array(ToolWire),
  nextCursor: Schema.optional(Schema.String),
})

/** @internal */
export interface ToolsPage {
  readonly tools: ReadonlyArray<ToolInfo>
  readonly nextCursor: string | undefined
}

/** @internal */
export const decodeToolsPage = (result: JsonObject): Either.Either<ToolsPage, string> => {
  const wrongType = requireComplete(result)
  if (wrongType !== undefined) return Either.left(wrongType)
  return Either.match(Schema.decodeUnknownEither(ToolsPage)(result), {
    onLeft: (error) => Either.left(`invalid tools/list result: ${describeParseError(error)}`),
    onRight: (page) =>
      Either.right<ToolsPage>({
        tools: page.tools.map((tool) => ({
          name: tool.name,
          ...(tool.title === undefined ? {} : { title: tool.title }),
          ...(tool.description === undefined ? {} : { description: tool.description }),
          idempotentHint: tool.annotations?.idempotentHint ?? false,
          taskSupport: tool.execution?.taskSupport,
          ...(tool.inputSchema !== null &&
          typeof tool.inputSchema === "object" &&
          !Array.isArray(tool.inputSchema)
            ? { inputSchema: tool.inputSchema as JsonObject }
            : {}),
        })),
        nextCursor: page.nextCursor,
      }),
  })
}
