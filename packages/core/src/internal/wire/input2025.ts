/**
 * Input during a 2025-11-25 task. Such a server asks its questions as requests of its own
 * (`elicitation/create`, `sampling/createMessage`) on the answer stream of `tasks/result`,
 * each tagged with the task it belongs to (`_meta["io.modelcontextprotocol/related-task"]`),
 * and takes the answer as a JSON-RPC response to that request's id. Once sent, a question is
 * gone from the server's queue: it is never asked again.
 *
 * The engine's input path is the 2026-07-28 one (questions under keys, answers stored before
 * they are sent): each question becomes an input request under a key that names the server's
 * request id, and an answer under that key becomes the response to it.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as Json from "../../Json.js"
import { JsonObject } from "../../Json.js"
import { TaskStatus } from "../../Wire.js"

/** The `_meta` key tying a server's message to a task. @internal */
export const relatedTaskMeta = "io.modelcontextprotocol/related-task"

/** The requests that are questions for the app (what 2026-07-28 puts in `inputRequests`). */
const questions = new Set(["elicitation/create", "sampling/createMessage"])

const keyPrefix = "rpc-id:"

/** The input key of the server's request `id`. @internal */
export const keyOf = (id: number | string): string => `${keyPrefix}${JSON.stringify(id)}`

/** The server's request id an input key names, if it names one. @internal */
export const idOf = (key: string): number | string | undefined => {
  if (!key.startsWith(keyPrefix)) return undefined
  try {
    const id: unknown = JSON.parse(key.slice(keyPrefix.length))
    return typeof id === "number" || typeof id === "string" ? id : undefined
  } catch {
    return undefined
  }
}

const ServerRequest = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.Union(Schema.Number, Schema.String),
  method: Schema.String,
  params: Schema.optional(JsonObject),
})

const StatusNotification = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  method: Schema.Literal("notifications/tasks/status"),
  params: Schema.Struct({ taskId: Schema.String, status: TaskStatus }),
})

const relatedTaskOf = (params: Json.JsonObject | undefined): string | undefined => {
  const meta = params?._meta
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) return undefined
  const related = (meta as Json.JsonObject)[relatedTaskMeta]
  if (related === null || typeof related !== "object" || Array.isArray(related)) return undefined
  const taskId = (related as Json.JsonObject).taskId
  return typeof taskId === "string" ? taskId : undefined
}

/** What the server said on a task's `tasks/result` stream before we stopped listening. @internal */
export interface Heard {
  /** Questions about the task, by input key: `{ method, params }` as the server sent them. */
  readonly questions: Readonly<Record<string, Json.JsonObject>>
  /** Other requests of the server's (`ping`, `roots/list`, ...): each needs an answer too. */
  readonly others: ReadonlyArray<{ readonly id: number | string; readonly method: string }>
  /** The task as the last `notifications/tasks/status` about it described it (raw params). */
  readonly status: Json.JsonObject | undefined
}

/**
 * Sorts the server's messages. A question tied to another task is not ours to answer; one with
 * no task named came on this task's stream and is taken as this task's.
 *
 * @internal
 */
export const hear = (messages: ReadonlyArray<Json.JsonObject>, taskId: string): Heard => {
  const found: Record<string, Json.JsonObject> = {}
  const others: Array<{ readonly id: number | string; readonly method: string }> = []
  let status: Json.JsonObject | undefined
  for (const message of messages) {
    const notification = Schema.decodeUnknownEither(StatusNotification)(message)
    if (Either.isRight(notification)) {
      if (notification.right.params.taskId === taskId) status = message.params as Json.JsonObject
      continue
    }
    const request = Schema.decodeUnknownEither(ServerRequest)(message)
    if (Either.isLeft(request)) continue
    const { id, method, params } = request.right
    const related = relatedTaskOf(params)
    if (!questions.has(method)) others.push({ id, method })
    else if (related === undefined || related === taskId) {
      found[keyOf(id)] = params === undefined ? { method } : { method, params }
    }
    // A question about another task is left alone: it is that task's to answer.
  }
  return { questions: found, others, status }
}

/**
 * The answer to a request of the server's that is not a question for the app: `ping` is
 * answered, anything else refused as unknown.
 *
 * @internal
 */
export const answerOther = (other: { readonly id: number | string; readonly method: string }) =>
  other.method === "ping"
    ? { jsonrpc: "2.0" as const, id: other.id, result: {} }
    : {
        jsonrpc: "2.0" as const,
        id: other.id,
        error: { code: -32601, message: `${other.method} is not supported by this client` },
      }
