/**
 * The HandleStore contract suite. Every adapter, ours or a third party's, proves itself by
 * running it:
 *
 * ```ts
 * import { handleStoreContract } from "@mcp-handles/core/testing"
 * handleStoreContract("my store", MyStore.layer(...))
 * ```
 *
 * The layer must build a fresh, empty store each time it is provided: every test provides it
 * anew.
 *
 * @since 0.1.0
 */
export { handleStoreContract } from "./internal/contract.js"
