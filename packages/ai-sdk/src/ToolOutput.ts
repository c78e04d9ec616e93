/**
 * What a durable tool returns to the AI SDK: one JSON object per call that says where the call
 * stands (`status`), under which handle (the call's key, never the server's task id), and, once
 * it rests, how it ended (core's `AgentTool.ToolOutput`, shared by every adapter).
 * `toModelOutput` turns it into what the model reads: a completed call's content as the MCP
 * server wrote it, a tool error as an error, anything else as a sentence.
 *
 * @since 0.1.0
 */
import { AgentTool } from "@mcp-handles/core"
import type { ToolResultPart } from "ai"

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
 * What the model reads for a tool result (the AI SDK's `ToolResultOutput`).
 *
 * @since 0.1.0
 * @category models
 */
export type ModelOutput = ToolResultPart["output"]

type ContentPart = Extract<ModelOutput, { type: "content" }>["value"][number]

const contentPart = (part: unknown): ContentPart => {
  if (typeof part === "object" && part !== null) {
    const fields = part as Record<string, unknown>
    if (
      (fields.type === "image" || fields.type === "audio") &&
      typeof fields.data === "string" &&
      typeof fields.mimeType === "string"
    )
      return { type: "file", mediaType: fields.mimeType, data: { type: "data", data: fields.data } }
  }
  return { type: "text", text: AgentTool.blockText(part) }
}

/**
 * What the model reads: a completed call's content (its structured content when it has no
 * content), a tool error (`isError`, or a failed call) as an error the model can read and act
 * on, and any other status as a JSON object with a sentence that says what happened.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toModelOutput = (output: AgentTool.ToolOutput): ModelOutput => {
  switch (output.status) {
    case "completed": {
      const { content, structuredContent, isError } = output.result
      const parts = Array.isArray(content) ? content : []
      if (isError === true) return { type: "error-text", value: AgentTool.errorText(parts) }
      if (parts.length === 0 && structuredContent !== undefined)
        return { type: "json", value: structuredContent as never }
      return { type: "content", value: parts.map(contentPart) }
    }
    case "failed":
      return { type: "error-text", value: AgentTool.failedText(output.error) }
    default:
      return { type: "json", value: output }
  }
}
