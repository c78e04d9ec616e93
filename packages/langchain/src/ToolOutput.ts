/**
 * What a durable tool reports of its call, as the `artifact` of the ToolMessage it returns: where
 * the call stands (`status`), under which handle (the call's key, never the server's task id),
 * and, once it rests, how it ended (core's `AgentTool.ToolOutput`, shared by every adapter).
 * `toContent` turns it into the ToolMessage's content, what the
 * model reads: a completed call's content as the MCP server wrote it, a tool error or a failed
 * call as an error (`status: "error"`), anything else as a sentence.
 *
 * @since 0.1.0
 */
import { AgentTool } from "@mcp-handles/core"

export {
  /**
   * The output of a call that completed: the server's result (core's `AgentTool.Completed`).
   *
   * @since 0.1.0
   * @category models
   */
  Completed,
  /**
   * The output of a call that failed with a JSON-RPC error (core's `AgentTool.Failed`).
   *
   * @since 0.1.0
   * @category models
   */
  Failed,
  /**
   * The output of a call that rests, from its outcome (core's `AgentTool.fromOutcome`).
   *
   * @since 0.1.0
   * @category conversions
   */
  fromOutcome,
  /**
   * The output of a call that runs on, under its key (core's `AgentTool.Running`).
   *
   * @since 0.1.0
   * @category models
   */
  Running,
  /**
   * Whether an output is one of a call that rests (core's `AgentTool.rests`).
   *
   * @since 0.1.0
   * @category guards
   */
  rests,
  /**
   * Any of the outputs above (core's `AgentTool.ToolOutput`).
   *
   * @since 0.1.0
   * @category models
   */
  ToolOutput,
  /**
   * The output of a call that rests without a result: cancelled, expired, in doubt (core's `AgentTool.Unfinished`).
   *
   * @since 0.1.0
   * @category models
   */
  Unfinished,
} from "@mcp-handles/core/AgentTool"

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

const blockOf = (part: unknown): ContentBlock => {
  if (typeof part === "object" && part !== null) {
    const fields = part as Record<string, unknown>
    if (fields.type === "image" && typeof fields.data === "string" && typeof fields.mimeType === "string")
      return { type: "image_url", image_url: { url: `data:${fields.mimeType};base64,${fields.data}` } }
  }
  return { type: "text", text: AgentTool.blockText(part) }
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
export const toContent = (output: AgentTool.ToolOutput): ModelContent => {
  switch (output.status) {
    case "completed": {
      const { content, structuredContent, isError } = output.result
      const parts: ReadonlyArray<unknown> = Array.isArray(content) ? content : []
      if (isError === true) return { content: AgentTool.errorText(parts), isError: true }
      if (parts.length === 0 && structuredContent !== undefined)
        return { content: JSON.stringify(structuredContent), isError: false }
      const blocks = parts.map(blockOf)
      return blocks.every((block) => block.type === "text")
        ? { content: blocks.map((block) => block.text).join("\n"), isError: false }
        : { content: blocks, isError: false }
    }
    case "failed":
      return { content: AgentTool.failedText(output.error), isError: true }
    default:
      return { content: JSON.stringify(output), isError: false }
  }
}
