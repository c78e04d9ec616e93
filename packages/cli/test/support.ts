/**
 * Runs the built `mcp-handles` binary as a user would: a child process, its exit code, stdout
 * and stderr. `pnpm test` builds before vitest runs, so `dist/bin.js` exists.
 */
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import type { JsonObject } from "@mcp-handles/core/Json"
import type * as Config from "@mcp-handles/fake-server/Config"
import type * as Ledger from "@mcp-handles/fake-server/Ledger"
import { afterAll, beforeAll } from "vitest"
import { killGroup, runGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"

export const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url))
/** The fake server's binary, from its package's `bin` entry (so a renamed file is still found). */
const fakeServerBin = (() => {
  const root = fileURLToPath(new URL("../../fake-server/", import.meta.url))
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: Record<string, string> }
  const [bin] = Object.values(pkg.bin)
  if (bin === undefined) throw new Error("@mcp-handles/fake-server declares no bin")
  return join(root, bin)
})()

/**
 * The timeout of a test that runs the binary. Each run is a fresh Node process that spends about
 * 1.5 s of CPU loading its modules, 3 to 6 s of wall time on a loaded two-core machine, and a
 * test here starts up to ten of them one after the other.
 */
export const processTestTimeout = 120_000

export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface Workspace {
  readonly dir: string
  readonly env: NodeJS.ProcessEnv
  readonly run: (...args: ReadonlyArray<string>) => Promise<Ran>
  /** Starts the binary without waiting for it (to kill it mid-call). */
  readonly start: (...args: ReadonlyArray<string>) => ChildProcess
  readonly dispose: () => void
}

/** A temporary directory as the working directory, so the default store lands inside it. */
export const workspace = (): Workspace => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-handles-cli-test-"))
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }
  delete env.MCP_HANDLES_STORE
  delete env.MCP_HANDLES_SERVERS
  delete env.MCP_HANDLES_INSTANCE
  return {
    dir,
    env,
    run: (...args) => runGroup(process.execPath, [bin, ...args], { cwd: dir, env }),
    start: (...args) =>
      spawnGroup(process.execPath, [bin, ...args], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] }),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  }
}

/**
 * A task tool that asks for input once (`ok`, an elicitation form) and answers with what it got:
 * `answer {{inputs.ok.content.ok}}`.
 */
export const askTool = (timing: {
  readonly durationMs: number
  readonly pollIntervalMs: number
  /** When, into the task, the question comes. */
  readonly atMs: number
}): Config.Config["tools"][number] => ({
  name: "ask",
  shape: "task",
  durationMs: timing.durationMs,
  pollIntervalMs: timing.pollIntervalMs,
  inputSteps: [
    {
      atMs: timing.atMs,
      requests: {
        ok: {
          method: "elicitation/create",
          params: { mode: "form", message: "OK?", requestedSchema: { type: "object" } },
        },
      },
    },
  ],
  outcome: { kind: "result", text: "answer {{inputs.ok.content.ok}}" },
})

export interface FakeServer {
  readonly url: string
  readonly ledger: () => Promise<Ledger.Snapshot>
  readonly stop: () => void
}

/** `fake-mcp-server` with `config`; without one, as shipped (its conformance profile). */
export const fakeServer = (dir: string, config?: Config.Config): Promise<FakeServer> =>
  new Promise((resolve, reject) => {
    const file = join(dir, "server.json")
    if (config !== undefined) writeFileSync(file, JSON.stringify(config))
    const flags = config === undefined ? [] : ["--config", file]
    const child = spawnGroup(process.execPath, [fakeServerBin, "--port", "0", ...flags], {
      stdio: ["ignore", "pipe", "inherit"],
    })
    createInterface({ input: child.stdout }).once("line", (line) => {
      const url = line.trim()
      resolve({
        url,
        ledger: async () => (await (await fetch(new URL("/_ledger", url))).json()) as Ledger.Snapshot,
        stop: () => killGroup(child, "SIGTERM"),
      })
    })
    child.once("exit", (code) => reject(new Error(`fake server exited with ${code}`)))
  })

/** Resolves once the child printed a line on stderr matching `pattern`. */
export const waitForStderr = (child: ChildProcess, pattern: RegExp): Promise<void> =>
  new Promise((resolve, reject) => {
    let seen = ""
    child.stderr?.on("data", (chunk: Buffer) => {
      seen += chunk.toString()
      if (pattern.test(seen)) resolve()
    })
    child.once("exit", (code) => reject(new Error(`exited with ${code} before ${pattern}: ${seen}`)))
  })

/** A failure a user can read: one line on stderr, no stack trace. */
export const oneLine = (ran: Ran): string => {
  const lines = ran.stderr.split("\n").filter((l) => l.trim() !== "")
  if (lines.length !== 1) throw new Error(`expected one line on stderr, got:\n${ran.stderr}`)
  if (/^\s+at /m.test(ran.stderr)) throw new Error(`stack trace on stderr:\n${ran.stderr}`)
  return lines[0] ?? ""
}

/** Where a seeded call goes, and the intent's fixed parts: tests set only what they are about. */
const seedTarget = { scope: "default", serverId: "research:0123456789abcdef", tool: "report" } as const
const seedIntent = { argumentsHash: "0".repeat(64), owner: "seed", leaseMs: 0 } as const

/**
 * A call to write straight into a store (`insertOrGet`), to the server named `research`, created
 * at `now`.
 */
export const seedCall = (key: string, now: number, args: JsonObject = {}): HandleStore.NewHandle => ({
  ...seedTarget,
  ...seedIntent,
  key,
  now,
  arguments: args,
})

/** A test file's workspace and fake server. */
export interface Fixture {
  readonly ws: Workspace
  readonly server: FakeServer
}

/**
 * A workspace and a fake server with `config` (as shipped without one), made before the file's tests and removed after
 * them (call it at the top of the file).
 */
export const fixture = (config?: Config.Config): Fixture => {
  let ws: Workspace | undefined
  let server: FakeServer | undefined
  beforeAll(async () => {
    ws = workspace()
    server = await fakeServer(ws.dir, config)
  })
  afterAll(() => {
    server?.stop()
    ws?.dispose()
  })
  const ready = <A>(value: A | undefined): A => {
    if (value === undefined) throw new Error("the fixture is used before its beforeAll ran")
    return value
  }
  return {
    get ws() {
      return ready(ws)
    },
    get server() {
      return ready(server)
    },
  }
}
