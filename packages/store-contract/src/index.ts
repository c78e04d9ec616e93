/**
 * The HandleStore contract suite. Every store, ours or a third party's, proves itself by running
 * it from a vitest test file:
 *
 * ```ts
 * import { handleStoreContract } from "@mcp-handles/store-contract"
 * handleStoreContract("my store", MyStore.layer(...))
 * ```
 *
 * The layer must build a fresh, empty store each time it is provided: every test provides it
 * anew.
 *
 * @since 0.2.0
 */
export {
  /**
   * Runs the contract against a store layer (see the module's overview).
   *
   * @since 0.2.0
   * @category testing
   */
  handleStoreContract,
} from "./HandleStoreContract.js"
