/**
 * `mcp-handles list`: the local replacement for the removed `tasks/list`. The server cannot say
 * which tasks are yours; the store can.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { describe } from "../CliError.js"
import * as Common from "../Common.js"
import * as Render from "../Render.js"
import * as ServerRegistry from "../ServerRegistry.js"

const status = Options.choice("status", ["open", "terminal", "in-doubt", "all"]).pipe(
  Options.withDescription("which calls: open (pending, working, input_required), terminal, in-doubt, all"),
  Options.withDefault("all" as const),
)
const server = Options.text("server").pipe(
  Options.withDescription("only calls to this server URL"),
  Options.optional,
)

const statusesOf = (
  choice: "open" | "terminal" | "in-doubt" | "all",
): ReadonlyArray<HandleRecord.Status> | undefined => {
  switch (choice) {
    case "open":
      return HandleRecord.openStatuses
    case "terminal":
      return HandleRecord.terminalStatuses
    case "in-doubt":
      return ["in_doubt"]
    case "all":
      return undefined
  }
}

export const command = Command.make(
  "list",
  { ...Common.common, status, server, json: Common.json, reveal: Common.reveal },
  (options) =>
    Effect.gen(function* () {
      const session = yield* Common.open(options)
      const serverId = Option.isSome(options.server)
        ? (yield* ServerRegistry.endpointFor(options.server.value)).id
        : undefined
      const statuses = statusesOf(options.status)
      const rows = yield* Common.listAll(session, {
        ...(statuses === undefined ? {} : { statuses }),
        ...(serverId === undefined ? {} : { server: serverId }),
      }).pipe(Effect.mapError(describe))
      const nameOf = (id: string) => ServerRegistry.displayName(id, session.servers)
      if (options.json) {
        console.log(JSON.stringify(rows.map((r) => Render.recordJson(r, options.reveal, nameOf(r.serverId)))))
        return
      }
      if (rows.length === 0) {
        console.log(`no calls (${options.status}) in scope ${session.scope}`)
        return
      }
      const now = Date.now()
      console.log(
        Render.table(
          ["KEY", "STATUS", "TOOL", "SERVER", "TASK", "AGE", "NOTE"],
          rows.map((r) => [
            r.key,
            r.status,
            r.tool,
            nameOf(r.serverId),
            Render.taskId(r.taskId, options.reveal),
            Render.age(r.createdAt, now),
            Render.truncate(Render.note(r), 60),
          ]),
        ),
      )
    }).pipe(Effect.scoped),
).pipe(Command.withDescription("List the calls in the store (the local replacement for tasks/list)"))
