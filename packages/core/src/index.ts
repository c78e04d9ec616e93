/**
 * @since 0.1.0
 */
export * as HandleRecord from "./HandleRecord.js"
export * as HandleStore from "./HandleStore.js"
export * as Json from "./Json.js"
