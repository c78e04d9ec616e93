/**
 * The `mcp-handles` command line as a library: `run(argv)` is what the binary does.
 *
 * @since 0.1.0
 */
export { root, run, version } from "./Cli.js"
export * as ServerRegistry from "./ServerRegistry.js"
export * as StoreSpec from "./StoreSpec.js"
