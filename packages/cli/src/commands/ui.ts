/**
 * `mcp-handles ui`: a live web view of the store's calls, for the operators who look at
 * dashboards rather than terminals. The server is loaded only when this command runs.
 *
 * @since 0.5.0
 */
import { userInfo } from "node:os"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Common from "../Common.js"
import * as Spec from "../Spec.js"
import * as StoreSpec from "../StoreSpec.js"

const port = Spec.withDefault(
  Spec.integer("port", {
    placeholder: "N",
    description: "the port to listen on (0: any free port)",
    example: "--port 8080",
    minimum: 0,
  }),
  0,
  "0",
)

const host = Spec.withDefault(
  Spec.text("host", {
    placeholder: "H",
    description:
      "the address to listen on; loopback by default. Requests must name it (or a loopback name) in Host",
    example: "--host 127.0.0.1",
  }),
  "127.0.0.1",
  "127.0.0.1",
)

/** Who acts from the page, as the calls' history names it (unless --instance says otherwise). */
const defaultInstance = (): string => {
  try {
    return `ui:${userInfo().username}`
  } catch {
    return "ui"
  }
}

/**
 * @since 0.5.0
 * @category commands
 */
export const spec = Spec.command(
  "ui",
  {
    summary:
      "Serve a live web view of the calls, the fleet and the servers in the store, with cancel, reissue, abandon, answer and rebind",
    description: [
      "Serves a web page on loopback listing the calls of the store, live: counts by status, filters (status, stuck, server, scope: --scope by default, * for every one, text in the key), paging; and one call's page with its history, its arguments and result (hidden until revealed), input requests with a form to answer them, and the actions (cancel, reissue and abandon an in-doubt call), each confirmed before it is done. The fleet page shows the instances holding leases on open calls (their heartbeats) and each consumer's outcome backlog; the servers page lists the servers with their URLs and calls, and rebinds one's calls to another (as servers --rebind).",
      "The printed URL carries a random token; the browser keeps it in a cookie. Every request must name this server in Host, and every action must come from its own pages (Origin). Actions go through the client under the instance id (default ui:USER), which the call's history records. Runs until Ctrl-C.",
    ],
    examples: [
      { command: "mcp-handles ui" },
      { command: "mcp-handles ui --store postgres://ops@db/app --port 8080" },
    ],
  },
  { ...Common.common, port, host },
  (options) =>
    Effect.gen(function* () {
      const instance = Option.orElse(options.instance, () =>
        Option.some(process.env.MCP_HANDLES_INSTANCE ?? defaultInstance()),
      )
      const session = yield* Common.open({ ...options, instance }, { drives: true })
      const [Server, Guard] = yield* Effect.promise(() =>
        Promise.all([import("../ui/Server.js"), import("../ui/Guard.js")]),
      )
      const url = yield* Server.serve({
        session,
        host: options.host,
        port: options.port,
        token: Guard.token(),
        actor: Option.getOrElse(instance, () => "ui"),
      })
      process.stdout.write(`${url}\n`)
      process.stderr.write(
        `mcp-handles ui: serving ${StoreSpec.describeSpec(session.spec)}; open the URL above (Ctrl-C stops)\n`,
      )
      return yield* Effect.never
    }).pipe(Effect.scoped),
)
