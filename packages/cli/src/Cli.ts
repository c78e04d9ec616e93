/**
 * The `mcp-handles` command line: the commands, and how a run ends (one line per failure, an
 * exit code, a stack only with `--verbose`).
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { describe } from "./CliError.js"
import * as Call from "./commands/call.js"
import * as Decide from "./commands/decide.js"
import * as Demo from "./commands/demo.js"
import * as Gc from "./commands/gc.js"
import * as List from "./commands/list.js"
import * as Resume from "./commands/resume.js"
import * as Show from "./commands/show.js"

export const version = "0.1.0"

export const root = Command.make("mcp-handles").pipe(
  Command.withDescription(
    "Durable MCP task handles: call tools durably, and list, resume, cancel and clean the calls in the local store.",
  ),
  Command.withSubcommands([
    Demo.command,
    Call.command,
    Resume.command,
    List.command,
    Show.command,
    Decide.cancel,
    Decide.reissue,
    Decide.abandon,
    Gc.command,
  ]),
)

const cli = Command.run(root, { name: "mcp-handles", version })

/**
 * Runs the CLI on `argv` (without the node and script paths) and resolves to the exit code.
 * Failures are printed here: @effect/cli has already printed usage errors with help.
 */
export const run = (argv: ReadonlyArray<string>): Effect.Effect<number> => {
  const verbose = argv.includes("--verbose")
  return cli(["node", "mcp-handles", ...argv]).pipe(
    Effect.provide(NodeContext.layer),
    Effect.as(0),
    Effect.catchAllCause((cause) =>
      Effect.sync(() => {
        if (Cause.isInterruptedOnly(cause)) return 130
        const failure = Cause.failureOption(cause)
        if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) return 2
        const error = failure._tag === "Some" ? describe(failure.value) : undefined
        const line =
          error?.message ??
          `unexpected error: ${Cause.squash(cause) instanceof Error ? (Cause.squash(cause) as Error).message : String(Cause.squash(cause))}`
        process.stderr.write(`mcp-handles: ${line}\n`)
        if (verbose) process.stderr.write(`${Cause.pretty(cause)}\n`)
        return error?.exitCode ?? 1
      }),
    ),
    Effect.map((code) => (code === 0 && typeof process.exitCode === "number" ? process.exitCode : code)),
  )
}
