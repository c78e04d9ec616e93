/**
 * Durable MCP tools for LangChain.js and LangGraph: every module of `@mcp-handles/langchain`.
 *
 * @since 0.1.0
 */

/**
 * The key a tool call is recorded under, derived from the thread and the tool-call id.
 *
 * @since 0.1.0
 * @category modules
 */
export * as CallKey from "./CallKey.js"
/**
 * A server's question as a LangGraph interrupt, answered by resuming the graph.
 *
 * @since 0.1.0
 * @category modules
 */
export * as InputInterrupt from "./InputInterrupt.js"
/**
 * A durable client's MCP server as LangChain tools.
 *
 * @since 0.1.0
 * @category modules
 */
export * as McpTools from "./McpTools.js"
export {
  /**
   * Makes a server's tools durable LangChain tools (see `McpTools`).
   *
   * @since 0.1.0
   * @category constructors
   */
  mcpTools,
} from "./McpTools.js"
/**
 * What a durable tool reports of its call, and what the model reads of it.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ToolOutput from "./ToolOutput.js"
