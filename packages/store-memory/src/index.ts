/**
 * @since 0.1.0
 */
export * as MemoryStore from "./MemoryStore.js"
