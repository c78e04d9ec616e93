/**
 * @since 0.1.0
 */
export * as Config from "./Config.js"
export * as FakeServer from "./FakeServer.js"
export * as Json from "./Json.js"
export * as Ledger from "./Ledger.js"
export * as Persistence from "./Persistence.js"
export * as Profile from "./Profile.js"
export * as ServerClock from "./ServerClock.js"
