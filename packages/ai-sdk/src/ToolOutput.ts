/**
 * What a durable tool returns to the AI SDK: one JSON object per call that says where the call
 * stands (`status`), under which handle (the call's key, never the server's task id), and, once
 * it rests, how it ended. `toModelOutput` turns it into what the model reads: a completed call's
 * content as the MCP server wrote it, a tool error as an error, anything else as a sentence.
 *
 * @since 0.1.0
 */
import { type Outcome, Redaction } from "@mcp-handles/core"
import type { ToolResultPart } from "ai"
import * as Schema from "effect/Schema"

const Json = Schema.Unknown

/**
 * The call runs on: a preliminary result while a tool waits, or the answer of a tool in handle
 * mode (and of one whose wait was aborted).
 *
 * @since 0.1.0
 * @category models
 */
export const Running = Schema.Struct({
  status: Schema.Literal("pending", "working", "input_required"),
  handle: Schema.String,
  /** The server's status message, its progress message, or what to do next. */
  message: Schema.String,
  /** How far the work is (`notifications/progress`), when the server says. */
  progress: Schema.optional(Schema.Number),
  total: Schema.optional(Schema.Number),
})

/**
 * @since 0.1.0
 * @category models
 */
export const Completed = Schema.Struct({
  status: Schema.Literal("completed"),
  handle: Schema.String,
  /** The `CallToolResult` as the server sent it; `isError: true` is the tool saying no. */
  result: Schema.Record({ key: Schema.String, value: Json }),
})

/**
 * The call or its task failed with a JSON-RPC error.
 *
 * @since 0.1.0
 * @category models
 */
export const Failed = Schema.Struct({
  status: Schema.Literal("failed"),
  handle: Schema.String,
  error: Schema.Struct({ code: Schema.Number, message: Schema.String, data: Schema.optional(Json) }),
})

/**
 * The call rests without a result: cancelled, expired, or in doubt (it may or may not have run
 * on the server, and was not sent again).
 *
 * @since 0.1.0
 * @category models
 */
export const Unfinished = Schema.Struct({
  status: Schema.Literal("cancelled", "expired", "in_doubt"),
  handle: Schema.String,
  message: Schema.String,
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const ToolOutput = Schema.Union(Running, Completed, Failed, Unfinished)

/**
 * @since 0.1.0
 * @category models
 */
export type ToolOutput = typeof ToolOutput.Type

/**
 * What the model reads for a tool result (the AI SDK's `ToolResultOutput`).
 *
 * @since 0.1.0
 * @category models
 */
export type ModelOutput = ToolResultPart["output"]

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

/**
 * The output of a call that rests.
 *
 * @since 0.1.0
 * @category constructors
 */
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

/**
 * Whether the output is the call's last word (it rests), not a status on the way.
 *
 * @since 0.1.0
 * @category predicates
 */
export const rests = (output: ToolOutput): boolean =>
  output.status !== "pending" && output.status !== "working" && output.status !== "input_required"

type ContentPart = Extract<ModelOutput, { type: "content" }>["value"][number]

const contentPart = (part: unknown): ContentPart => {
  if (typeof part === "object" && part !== null) {
    const fields = part as Record<string, unknown>
    if (fields.type === "text" && typeof fields.text === "string") return { type: "text", text: fields.text }
    if (
      (fields.type === "image" || fields.type === "audio") &&
      typeof fields.data === "string" &&
      typeof fields.mimeType === "string"
    )
      return { type: "file", mediaType: fields.mimeType, data: { type: "data", data: fields.data } }
  }
  return { type: "text", text: JSON.stringify(part) }
}

const textOf = (content: ReadonlyArray<unknown>) =>
  content
    .map((part) => {
      const converted = contentPart(part)
      return converted.type === "text" ? converted.text : JSON.stringify(part)
    })
    .join("\n")

/**
 * What the model reads: a completed call's content (its structured content when it has no
 * content), a tool error (`isError`, or a failed call) as an error the model can read and act
 * on, and any other status as a JSON object with a sentence that says what happened.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toModelOutput = (output: ToolOutput): ModelOutput => {
  switch (output.status) {
    case "completed": {
      const { content, structuredContent, isError } = output.result
      const parts = Array.isArray(content) ? content : []
      if (isError === true)
        return { type: "error-text", value: textOf(parts) || "The tool reported an error." }
      if (parts.length === 0 && structuredContent !== undefined)
        return { type: "json", value: structuredContent as never }
      return { type: "content", value: parts.map(contentPart) }
    }
    case "failed":
      return {
        type: "error-text",
        value: `The tool call failed: ${output.error.message} (JSON-RPC error ${output.error.code}).`,
      }
    default:
      return { type: "json", value: output }
  }
}
