/**
 * Durable MCP tools for the Vercel AI SDK: every module of `@mcp-handles/ai-sdk`.
 *
 * @since 0.1.0
 */

/**
 * The key a tool call is recorded under, derived from the conversation and the tool-call id.
 *
 * @since 0.1.0
 * @category modules
 */
export * as CallKey from "./CallKey.js"
/**
 * The client's input handler, routing each question to the tool set whose call asked it.
 *
 * @since 0.1.0
 * @category modules
 */
export * as InputRouter from "./InputRouter.js"
/**
 * A durable client's MCP server as an AI SDK tool set.
 *
 * @since 0.1.0
 * @category modules
 */
export * as McpTools from "./McpTools.js"
export {
  /**
   * Makes a server's tools durable AI SDK tools (see `McpTools`).
   *
   * @since 0.1.0
   * @category constructors
   */
  mcpTools,
} from "./McpTools.js"
/**
 * Picking a run up from its persisted messages: its pending tool calls, executed again.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Resume from "./Resume.js"
export {
  /**
   * The tool calls a killed run left without results (see `Resume`).
   *
   * @since 0.1.0
   * @category getters
   */
  pendingToolCalls,
  /**
   * Executes the tool calls a killed run left without results (see `Resume`).
   *
   * @since 0.1.0
   * @category constructors
   */
  resumeToolCalls,
} from "./Resume.js"
/**
 * What a durable tool returns, and what the model reads of it.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ToolOutput from "./ToolOutput.js"
