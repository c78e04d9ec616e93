/** `mcp-handles demo`: see `demo/run.ts`. */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { failed } from "../CliError.js"
import * as Common from "../Common.js"

const keep = Options.boolean("keep").pipe(
  Options.withDescription("keep the demo's SQLite store, to look at it with list and show"),
)

export const command = Command.make(
  "demo",
  { reveal: Common.reveal, keep, verbose: Common.verbose },
  (options) =>
    Effect.tryPromise({
      try: () =>
        import("../demo/run.js").then((demo) =>
          demo.run({ reveal: options.reveal, keepFiles: options.keep }),
        ),
      catch: (error) => failed(`demo: ${error instanceof Error ? error.message : String(error)}`),
    }).pipe(Effect.flatMap((ok) => Common.exitWith(ok ? 0 : 1))),
).pipe(
  Command.withDescription(
    "Kill a client mid-task with SIGKILL, restart it, and check against the server's ledger that nothing was lost",
  ),
)
