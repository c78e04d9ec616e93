import type { Outcome } from "../Config.js"
import type { Json, JsonObject } from "../Json.js"
import type { TaskRecord } from "../Persistence.js"
import type { TaskView } from "./taskRecord.js"
import { renderString, renderTemplate } from "./template.js"
import { pollIntervalAt } from "./timeline.js"

/** A rendered outcome: a `CallToolResult` or a JSON-RPC error object. */
export type RenderedOutcome =
  | { readonly kind: "result"; readonly result: JsonObject }
  | { readonly kind: "error"; readonly error: { code: number; message: string; data?: Json } }

export const renderOutcome = (outcome: Outcome, context: Record<string, unknown>): RenderedOutcome => {
  if (outcome.kind === "error") {
    const error = { code: outcome.code, message: renderString(outcome.message, context) }
    return {
      kind: "error",
      error: outcome.data === undefined ? error : { ...error, data: renderTemplate(outcome.data, context) },
    }
  }
  const content: Json =
    outcome.content !== undefined
      ? renderTemplate(outcome.content, context)
      : [{ type: "text", text: renderString(outcome.text ?? "ok", context) }]
  const result: Record<string, Json> = { content }
  if (outcome.structuredContent !== undefined) {
    result.structuredContent = renderTemplate(outcome.structuredContent, context)
  }
  if (outcome.isError !== undefined) result.isError = outcome.isError
  return { kind: "result", result }
}

/** Template context of a task: its arguments, every answer it gathered, its id. */
export const taskContext = (record: TaskRecord): Record<string, unknown> => {
  const inputs: Record<string, unknown> = { ...record.mrtrInputs }
  for (const [key, answer] of Object.entries(record.answers)) inputs[key] = answer.response
  return { args: record.arguments, inputs, taskId: record.taskId, tool: record.tool }
}

export const iso = (ms: number): string => new Date(ms).toISOString()

/** A task as one answer shows it: its record, its state at `now`, the answer's timestamp skew. */
export interface Observed {
  readonly record: TaskRecord
  readonly view: TaskView
  readonly now: number
  readonly skewMs: number
}

/** The `Task` fields shared by `CreateTaskResult`, `tasks/get` and `notifications/tasks`. */
export const taskFields = ({ record, view, now, skewMs }: Observed): Record<string, Json> => {
  const fields: Record<string, Json> = {
    taskId: record.taskId,
    status: view.status,
    createdAt: iso(record.createdAt + skewMs),
    lastUpdatedAt: iso(view.lastUpdatedAt + skewMs),
    ttlMs: record.plan.ttlMs,
  }
  const interval = pollIntervalAt(record.plan.pollIntervalMs, record.createdAt, now)
  if (interval !== undefined) fields.pollIntervalMs = interval
  if (view.statusMessage !== undefined) {
    fields.statusMessage = renderString(view.statusMessage, taskContext(record))
  }
  return fields
}

/**
 * What `detailedTask` renders a task from at `now`, short of rendering it: equal keys, equal
 * tasks. A stream compares keys, so an unchanged task costs no rendering (at 100,000 tasks on a
 * stream, rendering each on every look made the fake server the benchmark's bottleneck).
 * Answers count because the templates read them; a given answer never changes.
 */
export const stateKey = (record: TaskRecord, view: TaskView, now: number): string =>
  `${view.status} ${view.lastUpdatedAt} ${pollIntervalAt(record.plan.pollIntervalMs, record.createdAt, now)} ${
    Object.keys(record.answers).length
  } ${view.inputRequests === undefined ? "" : Object.keys(view.inputRequests).join(",")} ${view.statusMessage ?? ""}`

/** A `DetailedTask`: the task fields plus what its status carries. */
export const detailedTask = (observed: Observed): Record<string, Json> => {
  const { record, view } = observed
  const fields = taskFields(observed)
  if (view.status === "input_required" && view.inputRequests !== undefined) {
    fields.inputRequests = renderTemplate(view.inputRequests as unknown as Json, taskContext(record))
  }
  if (view.outcome !== undefined && (view.status === "completed" || view.status === "failed")) {
    const rendered = renderOutcome(view.outcome, taskContext(record))
    // The inner result is a complete `CallToolResult`, discriminator included: the official
    // ext-tasks requester's default codec rejects a completed task whose result lacks it.
    if (rendered.kind === "result") fields.result = { resultType: "complete", ...rendered.result }
    else fields.error = rendered.error
  }
  return fields
}
