#!/usr/bin/env node
/**
 * The `mcp-handles` binary. Ctrl-C interrupts the command, which hands open calls off to the
 * store (never cancels them) before the process exits.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Exit from "effect/Exit"
import { run } from "./Cli.js"

NodeRuntime.runMain(run(process.argv.slice(2)), {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    const code = Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : 130
    // Exit explicitly: an idle keep-alive socket or a pool must not hold a finished command open.
    onExit(code)
    process.exit(code)
  },
})
