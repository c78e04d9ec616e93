/**
 * The 2025-11-25 shapes of what the server's 2026-07-28 handlers answer. The tasks, tools,
 * outcomes and ledger are the same; only the shapes differ: no `resultType`, a task nested in
 * `CreateTaskResult` (`{ task }`), `ttl` and `pollInterval` for `ttlMs` and `pollIntervalMs`,
 * `tasks/get` without payload (`tasks/result` has it), questions during a task sent as requests
 * of the server's on the `tasks/result` stream.
 */
import type { Json } from "../../Json.js"
import { isObject } from "../json.js"

/** The revision this mode speaks. */
export const protocolVersion = "2025-11-25"

/** The `_meta` key tying a message to a task. */
export const relatedTaskMeta = "io.modelcontextprotocol/related-task"

/** Fields 2026-07-28 adds to results that 2025-11-25 does not have. */
const resultOnly = new Set(["resultType", "ttlMs", "cacheScope"])

/** A complete result without the 2026-07-28 fields. */
export const plainResult = (result: Record<string, Json>): Record<string, Json> =>
  Object.fromEntries(Object.entries(result).filter(([name]) => !resultOnly.has(name)))

/** A 2026-07-28 task (as `tasks/get` or a task answer to `tools/call` gives it) as a 2025 `Task`. */
export const task = (detailed: Record<string, Json>): Record<string, Json> => {
  const fields: Record<string, Json> = {
    taskId: detailed.taskId ?? null,
    status: detailed.status ?? null,
    createdAt: detailed.createdAt ?? null,
    lastUpdatedAt: detailed.lastUpdatedAt ?? null,
    ttl: detailed.ttlMs ?? null,
  }
  if (detailed.pollIntervalMs !== undefined) fields.pollInterval = detailed.pollIntervalMs
  if (detailed.statusMessage !== undefined) fields.statusMessage = detailed.statusMessage
  return fields
}

/** The JSON-RPC id of a question: the task and the 2026-07-28 input key, so an answer finds both. */
export const questionId = (taskId: string, inputKey: string): string => `${taskId}/${inputKey}`

/** The task and input key a question's id names, if it names them. */
export const parseQuestionId = (
  id: unknown,
): { readonly taskId: string; readonly inputKey: string } | undefined => {
  if (typeof id !== "string") return undefined
  const at = id.indexOf("/")
  return at <= 0 ? undefined : { taskId: id.slice(0, at), inputKey: id.slice(at + 1) }
}

/**
 * A task's outstanding 2026-07-28 input requests (`{ method, params }` under each key) as the
 * server's own JSON-RPC requests, tied to the task.
 */
export const questions = (taskId: string, inputRequests: Json | undefined): Array<Record<string, Json>> =>
  isObject(inputRequests)
    ? Object.entries(inputRequests).flatMap(([inputKey, request]) => {
        if (!isObject(request) || typeof request.method !== "string") return []
        const params = isObject(request.params) ? (request.params as Record<string, Json>) : {}
        const meta = isObject(params._meta) ? (params._meta as Record<string, Json>) : {}
        return [
          {
            jsonrpc: "2.0",
            id: questionId(taskId, inputKey),
            method: request.method,
            params: { ...params, _meta: { ...meta, [relatedTaskMeta]: { taskId } } },
          },
        ]
      })
    : []

/** Server-sent events, one message each, then the end of the stream. */
export const eventStream = (messages: ReadonlyArray<Record<string, Json>>): ReadableStream<Uint8Array> => {
  const encoder = new TextEncoder()
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      for (const message of messages)
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(message)}\n\n`))
      controller.close()
    },
  })
}
