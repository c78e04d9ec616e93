/**
 * What a durable tool reports of its call, as the `artifact` of the ToolMessage it returns: where
 * the call stands (`status`), under which handle (the call's key, never the server's task id),
 * and, once it rests, how it ended. `toContent` turns it into the ToolMessage's content, what the
 * model reads: a completed call's content as the MCP server wrote it, a tool error or a failed
 * call as an error (`status: "error"`), anything else as a sentence.
 *
 * @since 0.1.0
 */
import { type Outcome, Redaction } from "@mcp-handles/core"
import * as Schema from "effect/Schema"

const Json = Schema.Unknown

/**
 * The call runs on: the answer of a tool whose wait was aborted (the call was handed off).
 *
 * @since 0.1.0
 * @category models
 */
export const Running = Schema.Struct({
  status: Schema.Literal("pending", "working", "input_required"),
  handle: Schema.String,
  /** The server's status message, or what to do next. */
  message: Schema.String,
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
 * One block of a ToolMessage's content (LangChain's standard text and image blocks).
 *
 * @since 0.1.0
 * @category models
 */
export type ContentBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: { readonly url: string } }

/**
 * What the model reads: the ToolMessage's content, and whether it is an error.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelContent {
  readonly content: string | ReadonlyArray<ContentBlock>
  readonly isError: boolean
}

const textOf = (part: unknown): string => {
  if (typeof part === "object" && part !== null) {
    const fields = part as Record<string, unknown>
    if (fields.type === "text" && typeof fields.text === "string") return fields.text
  }
  return JSON.stringify(part)
}

const blockOf = (part: unknown): ContentBlock => {
  if (typeof part === "object" && part !== null) {
    const fields = part as Record<string, unknown>
    if (fields.type === "image" && typeof fields.data === "string" && typeof fields.mimeType === "string")
      return { type: "image_url", image_url: { url: `data:${fields.mimeType};base64,${fields.data}` } }
  }
  return { type: "text", text: textOf(part) }
}

/**
 * What the model reads of an output: a completed call's text (one string when all its content
 * is text, blocks otherwise; its structured content as JSON when it has no content), a tool error
 * (`isError`) or a failed call as an error it can read and act on, and any other status as the
 * JSON of the output, whose `message` says what happened.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toContent = (output: ToolOutput): ModelContent => {
  switch (output.status) {
    case "completed": {
      const { content, structuredContent, isError } = output.result
      const parts: ReadonlyArray<unknown> = Array.isArray(content) ? content : []
      if (isError === true)
        return { content: parts.map(textOf).join("\n") || "The tool reported an error.", isError: true }
      if (parts.length === 0 && structuredContent !== undefined)
        return { content: JSON.stringify(structuredContent), isError: false }
      const blocks = parts.map(blockOf)
      return blocks.every((block) => block.type === "text")
        ? { content: blocks.map((block) => block.text).join("\n"), isError: false }
        : { content: blocks, isError: false }
    }
    case "failed":
      return {
        content: `The tool call failed: ${output.error.message} (JSON-RPC error ${output.error.code}).`,
        isError: true,
      }
    default:
      return { content: JSON.stringify(output), isError: false }
  }
}
