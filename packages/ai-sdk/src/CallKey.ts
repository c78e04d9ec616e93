/**
 * The durable key of a tool call: the idempotency key its row is stored under and the handle the
 * model sees. It is derived from the conversation (or run) id the app passes and the AI SDK's
 * `toolCallId`, both of which a restarted run finds again in its persisted messages: executing the
 * same tool call again derives the same key, and so attaches to the call already recorded
 * instead of launching it a second time.
 *
 * @since 0.1.0
 */
import { AgentTool } from "@mcp-handles/core"

/**
 * What a key is derived from.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallIdentity {
  /** The app's id of the conversation or run (a chat id, a job id). */
  readonly conversationId: string
  /** The AI SDK's id of the tool call, as the model's step produced it. */
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
 * The default: `{conversationId}:{toolCallId}`, with a `:` in either written `%3A` (and `%` as
 * `%25`), so that the conversation is the key's whole first part; ids with neither are written as
 * they are. A key reused for a call with other arguments is refused (`KeyReused`), never
 * attached to: a provider that numbers its tool calls afresh each turn (`call_0`, `call_1`)
 * needs a key that also names the step.
 *
 * @since 0.1.0
 * @category constructors
 */
export const derive: Derive = ({ conversationId, toolCallId }) =>
  AgentTool.keyOf(conversationId, [toolCallId])

/**
 * The default key as versions before the escaping derived it (`{conversationId}:{toolCallId}` as
 * they are): a call recorded under it is attached to, not launched again.
 *
 * @since 0.2.0
 * @category constructors
 */
export const legacy: Derive = ({ conversationId, toolCallId }) =>
  AgentTool.legacyKeyOf(conversationId, [toolCallId])

/**
 * Whether `handle` is a key the default derivation gives for `conversationId`: the companion
 * tools look only at the calls of their own conversation (conversation `a` never at those of
 * `a:b`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const belongsTo = (conversationId: string, handle: string): boolean =>
  AgentTool.belongsTo(conversationId, handle)
