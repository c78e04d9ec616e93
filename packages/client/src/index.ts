/**
 * mcp-handles behind plain Promises, with its own copy of Effect inside: durable MCP task calls
 * for an app on Effect 4, Effect 3, or no Effect at all. Its objects are plain data; none of
 * them is meant for Effect code (use `@mcp-handles/core` there).
 *
 * @since 0.1.0
 */

export type * from "./DurationInput.js"
/**
 * Outcomes delivered once per consumer, and live events, as async iterables.
 *
 * @since 0.1.0
 */
export type * from "./Feed.js"
/**
 * The durable record of one tool call, as plain data.
 *
 * @since 0.1.0
 */
export type * from "./HandleRecord.js"
/**
 * JSON values as the client takes and returns them.
 *
 * @since 0.1.0
 */
export type * from "./Json.js"
/**
 * The wire's requests over `node:http`, the default of `open`'s `http.request`.
 *
 * @since 0.6.0
 */
export type * from "./NodeRequest.js"
export {
  /**
   * @since 0.6.0
   * @category constructors
   */
  nodeRequest,
} from "./NodeRequest.js"
/**
 * How a client is opened: the servers, the store, and the engine's settings.
 *
 * @since 0.1.0
 */
export type * from "./OpenOptions.js"
/**
 * How a call ended, or why it rests.
 *
 * @since 0.1.0
 */
export type * from "./Outcome.js"
/**
 * What a server asks while a call waits for input.
 *
 * @since 0.2.0
 */
export type * from "./ServerRequest.js"
/**
 * Where the client keeps its calls.
 *
 * @since 0.1.0
 */
export type * from "./Store.js"
/**
 * The client: durable tool calls behind plain Promises.
 *
 * @since 0.1.0
 */
export type * from "./TaskClient.js"
export {
  /**
   * @since 0.1.0
   * @category constructors
   */
  openTaskClient,
} from "./TaskClient.js"
/**
 * A tool's result as the protocol defines it (`CallToolResult`).
 *
 * @since 0.2.0
 */
export type * from "./ToolResult.js"
