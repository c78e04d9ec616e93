/**
 * @since 0.1.0
 */
export * as Config from "./Config.js"
/**
 * The fake MCP Tasks server: its web-standard handler and its controls.
 *
 * @since 0.1.0
 * @category modules
 */
export * as FakeServer from "./FakeServer.js"
/**
 * JSON values as they travel on the wire.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Json from "./Json.js"
/**
 * The record of everything a fake server did, for tests to assert on.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Ledger from "./Ledger.js"
/**
 * Where a durable fake server keeps its tasks across restarts.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Persistence from "./Persistence.js"
/**
 * Built-in configurations the binary serves with `--profile NAME`.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Profile from "./Profile.js"
/**
 * The server's only source of time.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ServerClock from "./ServerClock.js"
