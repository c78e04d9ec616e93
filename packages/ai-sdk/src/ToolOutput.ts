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

/**
 * The call runs on: a preliminary result while a tool waits, or the answer of a tool in handle
 * mode (and of one whose wait was aborted).
 *
 * @since 0.1.0
 * @category models
 */
export const Running = AgentTool.Running

/**
 * @since 0.1.0
 * @category models
 */
export const Completed = AgentTool.Completed

/**
 * The call or its task failed with a JSON-RPC error.
 *
 * @since 0.1.0
 * @category models
 */
export const Failed = AgentTool.Failed

/**
 * The call rests without a result: cancelled, expired, or in doubt (it may or may not have run
 * on the server, and was not sent again).
 *
 * @since 0.1.0
 * @category models
 */
export const Unfinished = AgentTool.Unfinished

/**
 * @since 0.1.0
 * @category schemas
 */
export const ToolOutput = AgentTool.ToolOutput

/**
 * @since 0.1.0
 * @category models
 */
export type ToolOutput = AgentTool.ToolOutput

/**
 * What the model reads for a tool result (the AI SDK's `ToolResultOutput`).
 *
 * @since 0.1.0
 * @category models
 */
export type ModelOutput = ToolResultPart["output"]

/**
 * The output of a call that rests.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromOutcome = AgentTool.fromOutcome

/**
 * Whether the output is the call's last word (it rests), not a status on the way.
 *
 * @since 0.1.0
 * @category predicates
 */
export const rests = AgentTool.rests

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
export const toModelOutput = (output: ToolOutput): ModelOutput => {
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
