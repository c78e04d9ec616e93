/**
 * @since 0.1.0
 */
export * as SqliteStore from "./SqliteStore.js"
