/**
 * `mcp-handles demo`: see `demo/run.ts`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { exitCodes, failed } from "../CliError.js"
import * as Common from "../Common.js"
import * as Spec from "../Spec.js"

const keep = Spec.boolean("keep", {
  description: "keep the demo's SQLite store, to look at it with list and show",
  example: "--keep",
})

/**
 * @since 0.1.0
 * @category commands
 */
export const spec = Spec.command(
  "demo",
  {
    summary:
      "Kill a client mid-task with SIGKILL, restart it, and check against the server's ledger that nothing was lost",
    description: [
      "Starts the fake MCP server on a loopback port, launches a batch of calls through a SQLite store in a temporary directory, kills the client with SIGKILL mid-flight, and finishes every call from a new process; then checks the server's ledger: no orphan, no double launch, every call rests, no input answered twice. The same crash with a naive client shows what is lost without the store.",
      "The fake server is a development dependency: run the demo from the repository (pnpm demo).",
    ],
    examples: [
      { command: "mcp-handles demo" },
      { command: "mcp-handles demo --keep", note: "then look at the store with list and show" },
    ],
    exitCodes: [
      [0, "every invariant held"],
      [1, "one did not, or the fake server is not installed"],
    ],
  },
  { reveal: Common.reveal, keep, verbose: Common.verbose },
  (options) =>
    Effect.tryPromise({
      try: () =>
        import("../demo/run.js").then((demo) =>
          demo.run({ reveal: options.reveal, keepFiles: options.keep }),
        ),
      catch: (error) => failed(`demo: ${error instanceof Error ? error.message : String(error)}`),
    }).pipe(Effect.flatMap((ok) => Common.exitWith(ok ? exitCodes.ok : exitCodes.failed))),
)
