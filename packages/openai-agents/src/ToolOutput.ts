/**
 * What a durable call gives the OpenAI Agents SDK: an MCP `CallToolResult`, whatever happened.
 * A completed call's result is the server's own (a tool error, `isError: true`, stays one: the
 * model reads its text); a failed call or task, a cancelled, expired or in-doubt call, and a wait
 * that was stopped become one text block with a sentence the model can read and act on. Only an
 * error of the client itself (the store unreachable) is thrown, for the SDK's `errorFunction`.
 *
 * @since 0.1.0
 */
import { type Outcome, Redaction, type ToolResult } from "@mcp-handles/core"

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

const reasonOf = (reason: string | null) => (reason === null ? "" : ` (${reason})`)

/**
 * The result the model reads for a call that rests.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromOutcome = (outcome: Outcome.Outcome): CallToolResult => {
  switch (outcome._tag) {
    case "Completed":
      return fromResult(outcome.result)
    case "Failed":
      return text(
        `The tool call failed: ${outcome.error.message} (JSON-RPC error ${outcome.error.code}).`,
        true,
      )
    case "Cancelled":
      return text(`The call was cancelled${reasonOf(outcome.reason)}.`, true)
    case "Expired":
      return text(
        `The server no longer knows this call's task${reasonOf(outcome.reason)}; its result is lost.`,
        true,
      )
    case "InDoubt":
      return text(
        `The server may or may not have run this call${reasonOf(outcome.reason)}. It was not sent ` +
          "again, so that it cannot run twice: ask the user before calling the tool again.",
        true,
      )
  }
}

/**
 * The server's result as the SDK types it: content blocks are JSON objects with a `type`. A
 * related-task reference in any `_meta` names the task's id, which the model never needs and a
 * transcript must not hold (task ids may be credentials): it is shortened, as every output of
 * the library shortens it.
 */
const fromResult = (result: ToolResult.CallToolResult): CallToolResult => {
  const { content, structuredContent, isError, _meta } = Redaction.value(result, [])
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
