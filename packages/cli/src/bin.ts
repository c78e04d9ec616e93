#!/usr/bin/env node
/**
 * The `mcp-handles` binary. Ctrl-C interrupts the command, which hands open calls off to the
 * store (never cancels them) before the process exits.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Exit from "effect/Exit"
import { run } from "./Cli.js"
import { exitCodes } from "./CliError.js"

/** Resolves once everything written to `stream` so far has been handed to the OS. */
const drained = (stream: NodeJS.WriteStream): Promise<void> =>
  new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve()
    // Write callbacks run in order: this one runs after every earlier write went out.
    stream.write("", () => resolve())
  })

// A reader that stopped reading (`| head`): the rest of the output has nowhere to go.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(exitCodes.ok)
  throw error
})

NodeRuntime.runMain(run(process.argv.slice(2)), {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit) => {
    const code = Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : exitCodes.interrupted
    // Exit explicitly (an idle keep-alive socket or a pool must not hold a finished command
    // open), but only once stdout and stderr are drained: a pipe takes 64 KiB at a time, and
    // exiting earlier cut `list --json | cat` short.
    void Promise.all([drained(process.stdout), drained(process.stderr)]).then(() => process.exit(code))
  },
})
