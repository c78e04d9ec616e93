/**
 * Durable MCP servers for the OpenAI Agents SDK: every module of `@mcp-handles/openai-agents`.
 *
 * @since 0.1.0
 */

/**
 * The key a tool call is recorded under, derived from the run, the turn, the tool, an ordinal
 * and the arguments.
 *
 * @since 0.1.0
 * @category modules
 */
export * as CallKey from "./CallKey.js"
/**
 * A durable client's MCP server as an OpenAI Agents SDK `MCPServer`.
 *
 * @since 0.1.0
 * @category modules
 */
export * as DurableMcpServer from "./DurableMcpServer.js"
export {
  /**
   * Makes a durable client's server an `MCPServer` (see `DurableMcpServer`).
   *
   * @since 0.1.0
   * @category constructors
   */
  make as durableMcpServer,
} from "./DurableMcpServer.js"
/**
 * What a durable call gives the SDK, and what the model reads of it.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ToolOutput from "./ToolOutput.js"
