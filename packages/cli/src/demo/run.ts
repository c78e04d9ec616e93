/**
 * `mcp-handles demo`: the whole promise in one command. A client process launches a batch of
 * slow calls through a SQLite store, is killed with SIGKILL mid-flight, and a restarted process
 * finishes every call from the file; the fake server's ledger then checks from the outside that
 * no task was orphaned and none launched twice. The same crash with a client that keeps task
 * ids in memory shows what is lost without the store.
 *
 * @since 0.1.0
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import type * as Ledger from "@mcp-handles/fake-server/Ledger"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Render from "../Render.js"
import { calls, config } from "./batch.js"
import * as Processes from "./processes.js"

const here = dirname(fileURLToPath(import.meta.url))
const durableClient = join(here, "durable-client.js")
const naiveClient = join(here, "naive-client.js")
const missingServer =
  "the demo needs the fake MCP server (@mcp-handles/fake-server), a development dependency of @mcp-handles/cli that is not installed here; run the demo from the repository: pnpm install && pnpm demo"

/**
 * The fake server's binary, found through its package (its `bin` entry) only when the demo
 * runs: it is a development dependency, so an installed CLI may not have it.
 */
const fakeServerBin = (): string => {
  let dir: string
  try {
    dir = dirname(fileURLToPath(import.meta.resolve("@mcp-handles/fake-server")))
  } catch {
    throw new Error(missingServer)
  }
  for (;;) {
    const manifest = join(dir, "package.json")
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown; bin?: unknown }
      if (pkg.name === "@mcp-handles/fake-server") {
        const bins = typeof pkg.bin === "object" && pkg.bin !== null ? Object.values(pkg.bin) : []
        const bin = typeof pkg.bin === "string" ? pkg.bin : bins.find((b) => typeof b === "string")
        if (typeof bin !== "string" || !existsSync(join(dir, bin))) throw new Error(missingServer)
        return join(dir, bin)
      }
    }
    const parent = dirname(dir)
    if (parent === dir) throw new Error(missingServer)
    dir = parent
  }
}

const out = (line = "") => process.stdout.write(`${line}\n`)
const indent = (text: string) =>
  text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n")

/** The rows of the demo's store, read by this (parent) process between the client processes. */
const readRows = (filename: string): Promise<ReadonlyArray<HandleRecord.HandleRecord>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* HandleStore.HandleStore
      const page = yield* store.list({ scope: "default", limit: 1000 })
      return page.records
    }).pipe(Effect.provide(SqliteStore.layer({ filename }))),
  )

const ledgerOf = async (url: string): Promise<Ledger.Snapshot> =>
  (await (await fetch(new URL("/_ledger", url))).json()) as Ledger.Snapshot

const keyWidth = Math.max(...calls.map((c) => c.key.length)) + 2

/**
 * @since 0.1.0
 * @category models
 */
export interface DemoOptions {
  readonly reveal: boolean
  readonly keepFiles: boolean
}

/**
 * Runs the demo; resolves true when every invariant held.
 *
 * @since 0.1.0
 * @category demo
 */
export const run = async (options: DemoOptions): Promise<boolean> => {
  const started = Date.now()
  const serverBin = fakeServerBin()
  const dir = mkdtempSync(join(tmpdir(), "mcp-handles-demo-"))
  const db = join(dir, "tasks.db")
  const configFile = join(dir, "server.json")
  writeFileSync(configFile, JSON.stringify(config))
  const server = await Processes.fakeServer(serverBin, configFile)
  const children: Array<Processes.Child> = []
  try {
    out("mcp-handles demo: a client is killed mid-task; a new process finishes every call from the store")
    out()
    out(`  fake MCP server  ${server.url}  (child process ${server.child.pid})`)
    out(`  handle store     ${db}  (SQLite)`)
    out()

    // 1. Launch the batch; kill the client once every fast answer is on disk.
    out(
      `1. a client process launches ${calls.length} calls: direct answers, tasks, one needing input, one that will expire`,
    )
    const mustRecord = new Set(calls.filter((c) => c.inFlight !== true).map((c) => c.key))
    let killedAt = 0
    const launch = Processes.node(durableClient, ["launch", server.url, db], (event) => {
      if (event.event === "recorded") {
        const key = String(event.key)
        out(
          `   ${key.padEnd(keyWidth)}recorded: ${event.status}${event.hasTaskId === true ? ", task id on disk" : ""}`,
        )
        mustRecord.delete(key)
        if (mustRecord.size === 0 && killedAt === 0) {
          killedAt = Date.now()
          launch.process.kill("SIGKILL")
        }
      }
      if (event.event === "settled")
        out(`   ${String(event.key).padEnd(keyWidth)}settled before the crash: ${event.outcome}`)
    })
    children.push(launch)
    await launch.exited
    if (killedAt === 0) throw new Error("the launching client exited before it could be killed")
    const before = await readRows(db)
    const running = (await ledgerOf(server.url)).tasks.filter((t) => t.terminalSeenAt === null).length
    out()
    out(
      `2. SIGKILL: the client dies with ${running} task(s) running on the server and ${before.filter((r) => r.status === "pending").length} call(s) awaiting an answer`,
    )
    out()

    // 2. Restart: reconcile from the file, decide the in-doubt call, settle everything.
    out("3. a new client process starts on the same SQLite file")
    const resume = Processes.node(durableClient, ["resume", server.url, db], (event) => {
      const key = String(event.key).padEnd(keyWidth)
      if (event.event === "reconciled")
        out(
          `   reconcile: ${event.resumed} task(s) resumed, ${event.inDoubt} interrupted call(s) now in doubt`,
        )
      if (event.event === "reissued")
        out(`   ${key}in doubt: re-issued with the same key (this server deduplicates on it)`)
      if (event.event === "input")
        out(`   ${key}input requested (${event.inputKey}): answered, stored before it was sent`)
      if (event.event === "settled") out(`   ${key}${event.outcome}`)
    })
    children.push(resume)
    if ((await resume.exited) !== 0) throw new Error("the restarted client failed")
    const after = await readRows(db)
    const ledger = await ledgerOf(server.url)

    // 3. The checks, from the server's side.
    out()
    out("4. the server's ledger against the store")
    out()
    const launchesOf = (key: string) => ledger.launches.filter((l) => l.idempotencyKey === key)
    const rows = calls.map((call) => {
      const b = before.find((r) => r.key === call.key)
      const a = after.find((r) => r.key === call.key)
      const tasks = ledger.tasks.filter((t) => t.idempotencyKey === call.key)
      const onRecord =
        tasks.length === 0
          ? "no task (direct)"
          : tasks.every((t) => t.taskId === a?.taskId)
            ? `${Render.taskId(a?.taskId ?? null, options.reveal)} = server's`
            : "MISMATCH"
      return [
        call.key,
        call.shape,
        b === undefined ? "-" : b.status,
        a === undefined ? "-" : a.status,
        String(launchesOf(call.key).length),
        onRecord,
      ]
    })
    out(
      indent(
        Render.table(
          ["KEY", "SHAPE", "AT SIGKILL", "AFTER RESTART", "SERVER LAUNCHES", "TASK ID ON RECORD"],
          rows,
        ),
      ),
    )
    out()

    const ours = new Set(calls.map((c) => c.key))
    const serverTasks = ledger.tasks.filter((t) => t.idempotencyKey !== null && ours.has(t.idempotencyKey))
    const orphans = serverTasks.filter((t) => {
      const row = after.find((r) => r.key === t.idempotencyKey)
      return row === undefined || (row.taskId !== t.taskId && row.status !== "in_doubt")
    })
    const maxLaunches = Math.max(0, ...calls.map((c) => launchesOf(c.key).length))
    const resting = after.filter(
      (r) => r.status === "in_doubt" || ["completed", "failed", "cancelled", "expired"].includes(r.status),
    )
    const doubleAnswers = serverTasks.filter((t) => {
      const accepted = t.updates.flatMap((u) => u.accepted)
      return new Set(accepted).size !== accepted.length
    })
    const checks: ReadonlyArray<readonly [boolean, string]> = [
      [
        orphans.length === 0,
        `no orphan: every task the server created (${serverTasks.length}) is on record with its task id, or covered by an in-doubt row${orphans.length > 0 ? ` (${orphans.length} orphaned)` : ""}`,
      ],
      [maxLaunches <= 1, `no double launch: at most one server launch per key (max ${maxLaunches})`],
      [
        resting.length === calls.length && after.length === calls.length,
        `every call rests: ${resting.length} of ${calls.length} terminal or in doubt`,
      ],
      [doubleAnswers.length === 0, "no input request answered twice"],
    ]
    for (const [ok, text] of checks) out(`  ${ok ? "✓" : "✗"} ${text}`)
    const ok = checks.every(([passed]) => passed)
    out()

    // 4. The same crash, without the store.
    out("5. the same crash with a naive client that keeps task ids in memory")
    const naiveKeys = new Set(calls.map((c) => `naive-${c.key}`))
    const naiveMust = new Set(calls.filter((c) => c.inFlight !== true).map((c) => c.key))
    const naive = Processes.node(naiveClient, ["launch", server.url], (event) => {
      if (event.event === "recorded") {
        naiveMust.delete(String(event.key))
        if (naiveMust.size === 0) naive.process.kill("SIGKILL")
      }
    })
    children.push(naive)
    await naive.exited
    let remembered = 0
    const naiveResume = Processes.node(naiveClient, ["resume", server.url], (event) => {
      if (event.event === "reconciled") remembered = Number(event.handles)
    })
    children.push(naiveResume)
    await naiveResume.exited
    const naiveLedger = await ledgerOf(server.url)
    const naiveTasks = naiveLedger.tasks.filter(
      (t) => t.idempotencyKey !== null && naiveKeys.has(t.idempotencyKey),
    )
    const naiveOrphans = naiveTasks.filter((t) => t.terminalSeenAt === null)
    out(`   launched ${calls.length} calls; SIGKILL; restarted: ${remembered} task id(s) to resume`)
    out(
      `   server tasks it created: ${naiveTasks.length}; orphaned: ${naiveOrphans.length} (running or finished, and nobody holds their ids)`,
    )
    out()
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    out(
      ok
        ? `OK: the durable client lost nothing and launched nothing twice; the naive one orphaned ${naiveOrphans.length} task(s). (${seconds} s)`
        : "FAILED: an invariant does not hold; see the checks above.",
    )
    if (options.keepFiles) out(`\nthe store is kept: mcp-handles list --store sqlite:${db}`)
    return ok
  } finally {
    for (const child of children) if (child.process.exitCode === null) child.process.kill("SIGKILL")
    server.child.kill("SIGTERM")
    if (!options.keepFiles) rmSync(dir, { recursive: true, force: true })
  }
}
