/**
 * mcp-handles behind plain Promises, with its own copy of Effect inside: durable MCP task calls
 * for an app on Effect 4, Effect 3, or no Effect at all. Its objects are plain data; none of
 * them is meant for Effect code (use `@mcp-handles/core` there).
 *
 * @since 0.1.0
 */

export type * from "./DurationInput.js"
export type * from "./Feed.js"
export type * from "./HandleRecord.js"
export type * from "./Json.js"
export type * from "./OpenOptions.js"
export type * from "./Outcome.js"
export type * from "./ServerRequest.js"
export type * from "./Store.js"
export type * from "./TaskClient.js"
/**
 * @since 0.1.0
 * @category constructors
 */
export { openTaskClient } from "./TaskClient.js"
export type * from "./ToolResult.js"
