/**
 * `mcp-handles list`: the local replacement for the removed `tasks/list`. The server cannot say
 * which tasks are yours; the store can. With `--stuck`, only the calls that need an on-call
 * engineer's eyes; with `--watch`, a live view.
 *
 * @since 0.1.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argv from "../Argv.js"
import { exitCodes, fromKnown, usage } from "../CliError.js"
import * as Common from "../Common.js"
import * as Output from "../Output.js"
import * as Row from "../Row.js"
import * as Screen from "../Screen.js"
import * as ServerRegistry from "../ServerRegistry.js"
import * as Spec from "../Spec.js"
import * as StoreSpec from "../StoreSpec.js"
import * as Stuck from "../Stuck.js"
import * as Troubleshooting from "../Troubleshooting.js"

const status = Spec.withDefault(
  Spec.choice("status", ["open", "terminal", "in-doubt", "all"], {
    description: "which calls: open (pending, working, input_required), terminal, in-doubt, or all",
    example: "--status open",
  }),
  "all",
  "all",
)
const server = Spec.optional(
  Spec.text("server", {
    placeholder: "NAME|[NAME=]URL",
    description:
      "only the calls to this server: its name (see mcp-handles servers), its URL, or NAME=URL for calls an application made under its own name",
    example: "--server research",
  }),
)
const allScopes = Spec.boolean("all-scopes", {
  description: "the calls of every scope, with a SCOPE column (--scope is then ignored)",
  example: "--all-scopes",
})
const stuck = Spec.boolean("stuck", {
  description: `only calls that look stuck: a lease that ran out, not polled for ${Stuck.defaults.missedIntervals} intervals, ${Stuck.defaults.failedAttempts} failed attempts in a row, input waiting over ${Stuck.defaults.inputWaitMs / 60_000} minutes; the NOTE column says why`,
  example: "--stuck",
})
const watch = Spec.boolean("watch", {
  description:
    "keep the view on screen, refreshed every --interval seconds, until Ctrl-C (with --json: one array per line)",
  example: "--watch",
})
const interval = Spec.withDefault(
  Spec.integer("interval", {
    placeholder: "SECONDS",
    description: "how often --watch refreshes",
    example: "--interval 5",
    minimum: 1,
  }),
  2,
  "2",
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

/**
 * Refuses a `--server` name that nothing in the store knows (not its server list, not a row in
 * view): a typo or another store, which an empty list would hide. The refusal names the servers
 * it knows.
 */
const checkServerName = (session: Common.Session, name: string, allScopes: boolean) =>
  Effect.gen(function* () {
    const listed = new Set(session.servers.map((s) => s.name))
    if (listed.has(name)) return
    // Rows an application wrote under a name it did not record in the server list count too.
    const rows = yield* Common.listAllScopes(session, { scope: allScopes ? undefined : session.scope })
    const known = new Set([...listed, ...rows.map((r) => ServerRegistry.displayName(r.serverId))])
    if (known.has(name)) return
    const names = [...known].sort()
    const near = Argv.suggest(name, names)
    return yield* usage(
      `list --server ${name}: no server of that name in this store (${
        names.length === 0 ? "it knows no servers yet" : `its servers: ${names.join(", ")}`
      }${near === undefined ? "" : `; did you mean ${near}?`}; see mcp-handles servers, and ${Troubleshooting.unknownServer})`,
    )
  })

/** Clears a terminal and puts the cursor at the top, for the next frame of `--watch`. */
const home = "\x1b[H\x1b[2J"

/**
 * A frame of `--watch` cut to the terminal's height: a taller one would scroll its top (the
 * title and the header) away on every refresh.
 */
const fit = (text: string): string => {
  const lines = text.trimEnd().split("\n")
  const room = Math.max(3, (process.stdout.rows ?? 24) - 3)
  if (lines.length <= room) return `${lines.join("\n")}\n`
  const hidden = lines.length - (room - 1)
  return `${lines.slice(0, room - 1).join("\n")}\n… and ${hidden} more (narrow it with --status, --stuck or --server)\n`
}

/**
 * @since 0.1.0
 * @category commands
 */
export const spec = Spec.command(
  "list",
  {
    summary: "List the calls in the store (the local replacement for tasks/list)",
    description: [
      "Every call of the scope (of every scope with --all-scopes), oldest first: its status, server (by name), task id (redacted), the instance holding its lease (OWNER: ID#driver while that instance follows the call until it rests, a bare ID while its sweep holds it for one step), when a driver last polled it and is due to next, how many polls the server answered (POLLS), its age, and the server's last word or our last problem (NOTE).",
      "list only reads: it never changes a row, and fails (naming the path) when there is no store.",
    ],
    examples: [
      { command: "mcp-handles list --status open" },
      { command: "mcp-handles list --stuck", note: "what needs attention, and why" },
      { command: "mcp-handles list --all-scopes --status in-doubt", note: "every tenant's calls in doubt" },
      {
        command: "mcp-handles list --watch --store postgres://ops@db/app",
        note: "a live view of a fleet's store",
      },
      { command: "mcp-handles list --json | jq -r '.[] | select(.status == \"in_doubt\") | .key'" },
    ],
    exitCodes: [
      [0, "listed (with --stuck: nothing looks stuck)"],
      [3, "with --stuck (without --watch): at least one call looks stuck, for alerting from cron or CI"],
    ],
  },
  {
    ...Common.common,
    status,
    server,
    allScopes,
    stuck,
    watch,
    interval,
    json: Common.json,
    reveal: Common.reveal,
  },
  (options) =>
    Effect.gen(function* () {
      const session = yield* Common.open(options)
      // A server is chosen by name: every row of that name matches, whichever URL it was written
      // against. A URL names the server `[NAME=]URL` stands for.
      const chosen = Option.getOrUndefined(options.server)
      const serverName =
        chosen === undefined || !chosen.includes("://")
          ? chosen
          : (yield* ServerRegistry.endpointFor(chosen)).name
      if (serverName !== undefined) yield* checkServerName(session, serverName, options.allScopes)
      const statuses = options.stuck ? HandleRecord.openStatuses : statusesOf(options.status)
      // A frame's text, and whether --stuck found anything (the exit status says so).
      const frame = Effect.gen(function* () {
        const listed = options.allScopes
          ? yield* Common.listAllScopes(session, { statuses })
          : yield* Common.listAll(session, statuses === undefined ? {} : { statuses }).pipe(
              Effect.mapError(fromKnown),
            )
        // A settled call is stuck only while a stray task of it is still to cancel: only those
        // have a due time, so they are found without reading settled history.
        const all = options.stuck
          ? [
              ...listed,
              ...(yield* Common.listAllScopes(session, {
                scope: options.allScopes ? undefined : session.scope,
                statuses: HandleRecord.terminalStatuses,
                scheduled: true,
              })),
            ]
          : listed
        const context = session.rowContext(options.reveal)
        const ofServer =
          serverName === undefined
            ? all
            : all.filter((r) => ServerRegistry.displayName(r.serverId) === serverName)
        const rows = options.stuck
          ? ofServer.filter((r) => Stuck.reason(r, context.now) !== undefined)
          : ofServer
        const stuck = options.stuck && rows.length > 0
        if (options.json) {
          return {
            stuck,
            text: `${Output.encode(
              Output.List,
              rows.map((r) => Row.make(r, context)),
            )}\n`,
          }
        }
        if (rows.length === 0) {
          const which = options.stuck ? "stuck " : options.status === "all" ? "" : `${options.status} `
          return {
            stuck,
            text: `no ${which}calls ${options.allScopes ? "in any scope" : `in scope ${session.scope}`}\n`,
          }
        }
        return {
          stuck,
          text: `${Row.table(rows, context, { stuck: options.stuck, allScopes: options.allScopes })}\n`,
        }
      })
      if (!options.watch) {
        const { stuck, text } = yield* frame
        process.stdout.write(text)
        if (stuck) yield* Common.exitWith(exitCodes.attention)
        return
      }
      const live = process.stdout.isTTY === true && process.env.TERM !== "dumb"
      const title = `every ${options.interval}s · ${StoreSpec.describeSpec(session.spec)} · ${options.allScopes ? "all scopes" : `scope ${session.scope}`}`
      yield* Effect.forever(
        Effect.gen(function* () {
          const { text } = yield* frame
          if (options.json) process.stdout.write(text)
          else if (live) {
            const stamp = new Date().toISOString().slice(11, 19)
            process.stdout.write(`${home}${Screen.bold(`${title} · ${stamp}`)}\n\n${fit(text)}`)
          } else process.stdout.write(`${text}\n`)
          yield* Effect.sleep(Duration.seconds(Math.max(1, options.interval)))
        }),
      )
    }).pipe(Effect.scoped),
)
