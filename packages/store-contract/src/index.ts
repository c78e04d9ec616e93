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
/**
 * Random writes for a SQL store's tests of the columns its spread reads (the interval, an unsent
 * cancel), shared by store-sqlite's and store-postgres' suites.
 *
 * @since 0.6.0
 * @category testing
 */
export * as SpreadWrites from "./SpreadWrites.js"
