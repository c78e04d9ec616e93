/**
 * The `mcp-handles` command line as a library: `run(argv)` is what the binary does, and
 * `Output` holds the schema of each command's `--json` output, for scripts that decode it.
 *
 * @since 0.1.0
 */

export {
  /**
   * Every command's documentation.
   *
   * @since 0.2.0
   */
  docs,
  /** @since 0.1.0 */
  root,
  /** @since 0.1.0 */
  run,
  /** @since 0.1.0 */
  version,
} from "./Cli.js"

/**
 * The schema of each command's `--json` output.
 *
 * @since 0.2.0
 */
export * as Output from "./Output.js"

/**
 * The servers stored calls point at.
 *
 * @since 0.1.0
 */
export * as ServerRegistry from "./ServerRegistry.js"

/**
 * Where calls are kept, as the user names it.
 *
 * @since 0.1.0
 */
export * as StoreSpec from "./StoreSpec.js"
