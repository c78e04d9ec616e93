/**
 * What a durable tool reports of its call, in every framework: one JSON object that says where
 * the call stands, under which handle (the call's key, never the server's task id), and, once it
 * rests, how it ended; and the sentences the model reads of it.
 */
import * as Schema from "effect/Schema"
import type * as Outcome from "../../Outcome.js"
import * as Redaction from "../../Redaction.js"

const Json = Schema.Unknown

export const Running = Schema.Struct({
  status: Schema.Literal("pending", "working", "input_required"),
  handle: Schema.String,
  /** The server's status message, its progress message, or what to do next. */
  message: Schema.String,
  /** How far the work is (`notifications/progress`), when the server says. */
  progress: Schema.optional(Schema.Number),
  total: Schema.optional(Schema.Number),
})

export const Completed = Schema.Struct({
  status: Schema.Literal("completed"),
  handle: Schema.String,
  /** The `CallToolResult` as the server sent it; `isError: true` is the tool saying no. */
  result: Schema.Record({ key: Schema.String, value: Json }),
})

export const Failed = Schema.Struct({
  status: Schema.Literal("failed"),
  handle: Schema.String,
  error: Schema.Struct({ code: Schema.Number, message: Schema.String, data: Schema.optional(Json) }),
})

export const Unfinished = Schema.Struct({
  status: Schema.Literal("cancelled", "expired", "in_doubt"),
  handle: Schema.String,
  message: Schema.String,
})

export const ToolOutput = Schema.Union(Running, Completed, Failed, Unfinished)

export type ToolOutput = typeof ToolOutput.Type

export type RunningStatus = typeof Running.Type.status

export const runningStatus = (status: string): RunningStatus | undefined =>
  status === "pending" || status === "working" || status === "input_required" ? status : undefined

const unfinishedMessage = (outcome: Outcome.Outcome): string => {
  const reason = "reason" in outcome && outcome.reason !== null ? ` (${outcome.reason})` : ""
  switch (outcome._tag) {
    case "Cancelled":
      return `The call was cancelled${reason}.`
    case "Expired":
      return `The server no longer knows this call's task${reason}; its result is lost.`
    case "InDoubt":
      return (
        `The server may or may not have run this call${reason}. It was not sent again, so that ` +
        "it cannot run twice: ask the user before calling the tool again."
      )
    default:
      return ""
  }
}

export const fromOutcome = (outcome: Outcome.Outcome): ToolOutput => {
  switch (outcome._tag) {
    case "Completed":
      // The output is kept in the app's messages: a related-task reference in the result names
      // the task's id, which may be a credential; it is shortened there, as everywhere.
      return { status: "completed", handle: outcome.key, result: Redaction.value(outcome.result, []) }
    case "Failed":
      return {
        status: "failed",
        handle: outcome.key,
        error: {
          code: outcome.error.code,
          message: outcome.error.message,
          ...(outcome.error.data === undefined ? {} : { data: outcome.error.data }),
        },
      }
    case "Cancelled":
      return { status: "cancelled", handle: outcome.key, message: unfinishedMessage(outcome) }
    case "Expired":
      return { status: "expired", handle: outcome.key, message: unfinishedMessage(outcome) }
    case "InDoubt":
      return { status: "in_doubt", handle: outcome.key, message: unfinishedMessage(outcome) }
  }
}

export const rests = (output: ToolOutput): boolean => runningStatus(output.status) === undefined

export const failedText = (error: { readonly code: number; readonly message: string }): string =>
  `The tool call failed: ${error.message} (JSON-RPC error ${error.code}).`

export const blockText = (part: unknown): string => {
  if (typeof part === "object" && part !== null) {
    const fields = part as Record<string, unknown>
    if (fields.type === "text" && typeof fields.text === "string") return fields.text
  }
  return JSON.stringify(part)
}

export const errorText = (content: ReadonlyArray<unknown>): string =>
  content.map(blockText).join("\n") || "The tool reported an error."
