/**
 * The `mcp-handles` command line as a library: `run(argv)` is what the binary does, and
 * `Output` holds the schema of each command's `--json` output, for scripts that decode it.
 *
 * @since 0.1.0
 */
export { docs, root, run, version } from "./Cli.js"
export * as Output from "./Output.js"
export * as ServerRegistry from "./ServerRegistry.js"
export * as StoreSpec from "./StoreSpec.js"
