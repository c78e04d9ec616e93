#!/usr/bin/env node
/**
 * The `fake-mcp-server` binary: serves a fake server over HTTP (see the package README for its
 * options and tools).
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import * as Either from "effect/Either"
import * as Config from "./Config.js"
import * as FakeServer from "./FakeServer.js"
import { listen } from "./internal/nodeHttp.js"
import * as Persistence from "./Persistence.js"
import * as Profile from "./Profile.js"

const usage = `Usage: fake-mcp-server [--port N] [--host H] [--config FILE | --profile conformance] [--state FILE]
                       [--generation 2026-07-28 | 2025-11-25 | both]

  --port N        port to listen on (0 picks a free one; default 0)
  --host H        interface to bind (default 127.0.0.1)
  --config FILE   a Config (see Config.ts) as JSON; an unknown key is refused, naming the key meant
  --profile NAME  a built-in configuration: "conformance"
  --state FILE    keep tasks in this JSON file, so they survive a restart of the process
  --path P        MCP endpoint path in the printed URL (default /mcp; every non-control path serves MCP)
  --notify-every-ms N
                  how often open subscriptions/listen streams are checked for changes (default 100)
  --allowed-host NAME
                  a host name requests may name in Host/Origin, on top of the config's allowedHosts
                  (default: the loopback names); repeat it for several, "*" for any (DNS-rebinding
                  protection: serving on another interface, name it here)
  --generation G  the protocol generation served: 2026-07-28 (default), 2025-11-25 (initialize
                  and sessions, CreateTaskResult, tasks/result), or both (each request in the
                  generation it speaks, one ledger); overrides the config's
  --exit-with-parent
                  stop (as on SIGTERM) once the process that started this one is gone, however it
                  ended (SIGKILL too): for harnesses, so that no server outlives its run

Prints the MCP endpoint URL on its first line. The ledger is at GET <origin>/_ledger.`

const main = async () => {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
      config: { type: "string" },
      profile: { type: "string" },
      state: { type: "string" },
      path: { type: "string", default: "/mcp" },
      "notify-every-ms": { type: "string" },
      "allowed-host": { type: "string", multiple: true },
      generation: { type: "string" },
      "exit-with-parent": { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  })
  if (values.help) {
    console.log(usage)
    return
  }
  const loaded = loadConfig(values.config, values.profile)
  const extraHosts = values["allowed-host"] ?? []
  const config =
    extraHosts.length === 0
      ? loaded
      : { ...loaded, allowedHosts: [...(loaded.allowedHosts ?? Config.defaults.allowedHosts), ...extraHosts] }
  const generation = values.generation
  if (generation !== undefined && !isGeneration(generation)) {
    throw new Error(`invalid --generation ${generation} (2026-07-28, 2025-11-25 or both)`)
  }
  const port = Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${values.port}`)
  const notifyEveryMs =
    values["notify-every-ms"] === undefined ? undefined : Number(values["notify-every-ms"])
  if (notifyEveryMs !== undefined && !(notifyEveryMs >= 0)) {
    throw new Error(`invalid --notify-every-ms ${values["notify-every-ms"]}`)
  }
  const server = FakeServer.unsafeMake(generation === undefined ? config : { ...config, generation }, {
    persistence: values.state === undefined ? undefined : Persistence.jsonFile(values.state),
    ...(notifyEveryMs === undefined ? {} : { notifyEveryMs }),
  })
  const listening = await listen(server, { port, host: values.host, path: values.path })
  console.log(listening.url)
  const shutdown = () => {
    void listening.close().then(() => process.exit(0))
  }
  process.once("SIGTERM", shutdown)
  process.once("SIGINT", shutdown)
  if (values["exit-with-parent"]) exitWithParent(shutdown)
}

const isGeneration = (value: string): value is NonNullable<Config.Config["generation"]> =>
  value === "2026-07-28" || value === "2025-11-25" || value === "both"

/** How often `--exit-with-parent` looks for the parent. */
const PARENT_CHECK_MS = 500

/**
 * Calls `stop` once this process's parent is gone. A parent killed with SIGKILL runs no cleanup
 * of its own, so the child has to notice: it is re-parented (to init or a subreaper), and its
 * parent pid changes. The check is a timer that does not keep the process alive.
 */
const exitWithParent = (stop: () => void) => {
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    stop()
  }, PARENT_CHECK_MS)
  timer.unref()
}

const loadConfig = (file: string | undefined, profile: string | undefined): Config.Config => {
  if (file !== undefined && profile !== undefined) throw new Error("use either --config or --profile")
  if (profile !== undefined) {
    if (profile !== "conformance") throw new Error(`unknown profile ${profile}`)
    return Profile.conformance
  }
  if (file === undefined) return Profile.conformance
  const text = readFileSync(file, "utf8")
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw new Error(`${file}: not JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  const decoded = Config.decode(parsed)
  if (Either.isLeft(decoded)) {
    const { problems } = decoded.left
    throw new Error(
      problems.length === 1
        ? `${file}: ${problems[0]}`
        : `${file}: ${problems.length} problems:\n${problems.map((problem) => `  ${problem}`).join("\n")}`,
    )
  }
  return decoded.right
}

main().catch((error: unknown) => {
  console.error(`fake-mcp-server: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
