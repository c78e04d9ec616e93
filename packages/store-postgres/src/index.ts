/**
 * @since 0.1.0
 */
export * as PgStore from "./PgStore.js"
