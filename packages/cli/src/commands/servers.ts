/**
 * `mcp-handles servers`: the servers a store's calls point at, as the store keeps them (its
 * `servers` table, shared by every process on the store). Lists them; `--set NAME=URL` adds one
 * or moves a name to another URL, `--remove NAME` forgets one, `--rebind OLD=NEW` moves every
 * call of server OLD to server NEW.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import { fromKnown, usage } from "../CliError.js"
import * as Common from "../Common.js"
import * as Output from "../Output.js"
import * as Rebind from "../Rebind.js"
import * as Render from "../Render.js"
import * as ServerRegistry from "../ServerRegistry.js"
import * as Spec from "../Spec.js"

const set = Spec.repeated(
  Spec.text("set", {
    placeholder: "NAME=URL",
    description:
      "record a server under NAME, or move NAME to another URL: its calls are then polled there; a bare URL is named after its host",
    example: "--set research=https://mcp.example.com/mcp",
  }),
)
const remove = Spec.repeated(
  Spec.text("remove", {
    placeholder: "NAME",
    description: "forget a server's URL (its calls stay; they are skipped until the name is set again)",
    example: "--remove research",
  }),
)
const rebind = Spec.optional(
  Spec.text("rebind", {
    placeholder: "OLD=NEW",
    description:
      "move every call of server OLD, in every scope, to server NEW (a name the store knows): for a server replaced by another under a new name",
    example: "--rebind research=research-v2",
  }),
)

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * @since 0.3.0
 * @category commands
 */
export const spec = Spec.command(
  "servers",
  {
    summary: "List, set and remove the servers the store's calls point at",
    description: [
      "The store keeps each server's name, URL (never credentials), identity, and when it was first and last seen; every process on the store sees the same list. call and --server record servers; an application's client records its own when it starts, so its calls are resumed by name.",
      "A call keeps its server's name: --set NAME=URL with a new URL moves every call of NAME there. --rebind OLD=NEW moves the calls of one name to another (in every scope). Changes apply in the order --set, --rebind, --remove; the list is printed afterwards.",
    ],
    examples: [
      { command: "mcp-handles servers" },
      {
        command: "mcp-handles servers --set research=https://mcp.example.com/mcp",
        note: "add one, or move it",
      },
      {
        command:
          "mcp-handles servers --set research-v2=https://v2.example.com/mcp --rebind research=research-v2",
        note: "hand a server's calls to a new one",
      },
      { command: "mcp-handles servers --remove research --json" },
    ],
    exitCodes: [[2, "a malformed NAME=URL, or a name the store does not know (--remove, --rebind)"]],
  },
  { ...Common.common, set, remove, rebind, json: Common.json },
  (options) =>
    Effect.gen(function* () {
      const setting = yield* Effect.forEach(options.set, ServerRegistry.endpointFor)
      const session = yield* Common.open(options)
      const store = session.store
      let known = setting.length > 0 ? yield* ServerRegistry.remember(store, setting) : session.servers
      let rebound = 0
      if (options.rebind._tag === "Some") {
        const [from, to, ...rest] = options.rebind.value.split("=")
        if (from === undefined || to === undefined || from === "" || to === "" || rest.length > 0) {
          return yield* Effect.fail(
            usage(`--rebind: expected OLD=NEW (two server names); got ${options.rebind.value}`),
          )
        }
        const target = known.find((s) => s.name === to)
        if (target === undefined) {
          return yield* Effect.fail(
            usage(`--rebind: the store knows no server ${to}; add it first with --set ${to}=URL`),
          )
        }
        rebound = yield* Rebind.calls(session, from, target, "--rebind")
      }
      const removed: Array<string> = []
      for (const name of options.remove) {
        const gone = yield* store.removeServer(name).pipe(Effect.mapError(fromKnown))
        if (!gone) return yield* Effect.fail(usage(`--remove: the store knows no server ${name}`))
        removed.push(name)
      }
      if (removed.length > 0 || options.rebind._tag === "Some") known = yield* ServerRegistry.load(store)
      if (options.json) {
        Output.json(Output.Servers, {
          servers: known.map((s) => ({
            ...s,
            firstSeenAt: iso(s.firstSeenAt),
            lastSeenAt: iso(s.lastSeenAt),
          })),
          removed,
          rebound,
        })
        return
      }
      for (const name of removed) Output.line(`removed ${name}`)
      if (options.rebind._tag === "Some") Output.line(`moved ${rebound} call(s)`)
      if (known.length === 0) {
        Output.line("no servers in the store (call, --server NAME=URL and servers --set add them)")
        return
      }
      const now = Date.now()
      Output.line(
        Render.table(
          ["NAME", "URL", "FIRST SEEN", "LAST SEEN"],
          known.map((s) => [
            s.name,
            s.url,
            `${Render.age(s.firstSeenAt, now)} ago`,
            `${Render.age(s.lastSeenAt, now)} ago`,
          ]),
        ),
      )
    }).pipe(Effect.scoped),
)
