/**
 * What a durable call gives the OpenAI Agents SDK: an MCP `CallToolResult`, whatever happened.
 * A completed call's result is the server's own (a tool error, `isError: true`, stays one: the
 * model reads its text); a failed call or task, a cancelled, expired or in-doubt call, and a wait
 * that was stopped become one text block with a sentence the model can read and act on. Only an
 * error of the client itself (the store unreachable) is thrown, for the SDK's `errorFunction`.
 *
 * @since 0.1.0
 */
import { AgentTool, type Outcome, type ToolResult } from "@mcp-handles/core"

/**
 * The SDK's `CallToolResult` (`@openai/agents-core`), the shape `callToolResult` returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallToolResult {
  content: Array<{ type: string; [key: string]: unknown }>
  _meta?: Record<string, unknown>
  structuredContent?: Record<string, unknown>
  isError?: boolean
}

/**
 * One text block the model reads; an error when `isError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (sentence: string, isError: boolean): CallToolResult => ({
  content: [{ type: "text", text: sentence }],
  ...(isError ? { isError: true } : {}),
})

/**
 * What the model reads of a `ToolOutput` (core's `AgentTool`, shared by every adapter): a
 * completed call's result as the server sent it; a failed, cancelled, expired or in-doubt call
 * as an error sentence; a call that runs on as `running`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromOutput = (output: AgentTool.ToolOutput): CallToolResult => {
  switch (output.status) {
    case "completed":
      return fromResult(output.result as unknown as ToolResult.CallToolResult)
    case "failed":
      return text(AgentTool.failedText(output.error), true)
    case "cancelled":
    case "expired":
    case "in_doubt":
      return text(output.message, true)
    default:
      return running(output.handle, output.status, output.message)
  }
}

/**
 * The result the model reads for a call that rests.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromOutcome = (outcome: Outcome.Outcome): CallToolResult =>
  fromOutput(AgentTool.fromOutcome(outcome))

/**
 * The server's result as the SDK types it: content blocks are JSON objects with a `type`. Its
 * related-task references are shortened already (`AgentTool.fromOutcome`): the model never needs
 * a task id, and a transcript must not hold one (task ids may be credentials).
 */
const fromResult = ({
  content,
  structuredContent,
  isError,
  _meta,
}: ToolResult.CallToolResult): CallToolResult => {
  return {
    content: content.map((block) => ({ ...block }) as { type: string; [key: string]: unknown }),
    ...(structuredContent === undefined ? {} : { structuredContent: { ...structuredContent } }),
    ...(isError === undefined ? {} : { isError }),
    ...(_meta === undefined ? {} : { _meta: { ..._meta } }),
  }
}

/**
 * What the model reads when the wait for a call stopped (the run was aborted, a tool timeout)
 * before it came to rest: the call runs on, recorded under `key`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handedOff = (key: string, status: string): CallToolResult =>
  text(
    `Stopped waiting (the call was ${status}); it runs on and its result is kept under ${JSON.stringify(key)}. ` +
      "Do not call the tool again for it.",
    false,
  )

/**
 * Where a call that has not come to rest stands, in handle mode: `{ status, handle, message }` as
 * JSON text (what the model reads: the handle to pass to `check_call` / `wait_for_call`) and as
 * `structuredContent`. The handle is the call's key, never the server's task id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const running = (key: string, status: string, message: string): CallToolResult => {
  const fields = { status, handle: key, message }
  return { content: [{ type: "text", text: JSON.stringify(fields) }], structuredContent: fields }
}

/**
 * A companion tool's refusal (a handle of another run, or none on record): an error the model
 * reads.
 *
 * @since 0.1.0
 * @category constructors
 */
export const refused = (sentence: string): CallToolResult => text(sentence, true)
