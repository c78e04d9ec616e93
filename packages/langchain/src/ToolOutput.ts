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

/**
 * The models (`Running`, `Completed`, `Failed`, `Unfinished`: the call runs on, completed,
 * failed with a JSON-RPC error, or rests without a result), `fromOutcome` (the output of a call
 * that rests) and `rests`: core's, shared by every adapter.
 *
 * @since 0.1.0
 * @category models
 */
export {
  Completed,
  Failed,
  fromOutcome,
  Running,
  rests,
  ToolOutput,
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
