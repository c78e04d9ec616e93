/**
 * The durable key of a tool call: the idempotency key its row is stored under and the handle the
 * model sees. It is derived from the LangGraph thread (`config.configurable.thread_id`) and the id
 * of the tool call LangChain passes when a tool is invoked with a ToolCall (as `ToolNode` does),
 * both of which a graph resumed from its checkpoint finds again: re-executing the same tool call
 * derives the same key, and so attaches to the call already recorded instead of launching it a
 * second time.
 *
 * @since 0.1.0
 */
import { AgentTool } from "@mcp-handles/core"
import * as Data from "effect/Data"

/**
 * What a key is derived from.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallIdentity {
  /** The LangGraph thread (`config.configurable.thread_id`), or the `threadId` option. */
  readonly threadId: string
  /** The id of the ToolCall the tool was invoked with (`config.toolCall.id`). */
  readonly toolCallId: string
  /** The tool's name on the MCP server. */
  readonly tool: string
}

/**
 * Derives a key. A custom one must be stable for a tool call (the same inputs give the same key
 * after a restart) and distinct across tool calls.
 *
 * @since 0.1.0
 * @category models
 */
export type Derive = (call: CallIdentity) => string

/**
 * The default: `{threadId}:{toolCallId}`, with a `:` in either written `%3A` (and `%` as `%25`),
 * so that the thread is the key's whole first part; ids with neither are written as they are. A
 * key reused for a call with other arguments is refused (`KeyReused`), never attached to.
 *
 * @since 0.1.0
 * @category constructors
 */
export const derive: Derive = ({ threadId, toolCallId }) => AgentTool.keyOf(threadId, [toolCallId])

/**
 * The default key as versions before the escaping derived it (`{threadId}:{toolCallId}` as they
 * are): a call recorded under it is attached to, not launched again.
 *
 * @since 0.2.0
 * @category constructors
 */
export const legacy: Derive = ({ threadId, toolCallId }) => AgentTool.legacyKeyOf(threadId, [toolCallId])

/**
 * Whether `handle` is a key the default derivation gives for `threadId`: the companion tools of
 * handle mode look only at the calls of their own thread (thread `a` never at those of `a:b`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const belongsTo = (threadId: string, handle: string): boolean => AgentTool.belongsTo(threadId, handle)

/**
 * The tool ran without a thread id: neither `config.configurable.thread_id` nor the `threadId`
 * option. Nothing was recorded or sent: a key without a thread would not be found again by a
 * resumed graph, whose re-executed call would then launch a second time.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingThreadId extends Data.TaggedError("MissingThreadId")<{
  readonly tool: string
}> {
  override get message(): string {
    return `the durable tool ${this.tool} needs a thread id (config.configurable.thread_id, or the threadId option of mcpTools) to key its call; nothing was sent`
  }
}

/**
 * The tool was invoked with bare arguments, not with a ToolCall (`{ id, name, args }`), so no
 * tool-call id reaches it. Nothing was recorded or sent: a key without it would not tell this call
 * from the next one.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingToolCallId extends Data.TaggedError("MissingToolCallId")<{
  readonly tool: string
}> {
  override get message(): string {
    return `the durable tool ${this.tool} was invoked without a tool call id: invoke it with a ToolCall ({ id, name, args, type: "tool_call" }), as ToolNode does; nothing was sent`
  }
}
