/**
 * The durable-call example: a client process starts slow tool calls, is killed with SIGKILL
 * while they run, and a new process picks every one of them up from the SQLite file and follows
 * it to its result. The fake server's ledger proves, from the outside, that no task was orphaned
 * and none was launched twice.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type { FakeServerConfig, LedgerSnapshot } from "@mcp-handles/fake-server"

const here = dirname(fileURLToPath(import.meta.url))
const fakeServerBin = join(here, "..", "..", "packages", "fake-server", "dist", "bin", "fake-mcp-server.js")
const clientProcess = join(here, "client-process.js")

const config: FakeServerConfig = {
  tools: [
    {
      name: "report",
      description: "Writes one chapter of a report: slow, so it runs as a task.",
      shape: "task",
      durationMs: 4_000,
      pollIntervalMs: 500,
      outcome: { kind: "result", text: "chapter {{args.chapter}} written" },
    },
  ],
}

/** Lines of a child's stdout, as they come. */
const lines = (child: ChildProcess) => createInterface({ input: child.stdout as NodeJS.ReadableStream })

const firstLine = (child: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    lines(child).once("line", resolve)
    child.once("exit", (code) => reject(new Error(`exited with ${code} before printing`)))
  })

const runClient = (args: ReadonlyArray<string>, onLine: (event: Record<string, unknown>) => void) => {
  const child = spawn(process.execPath, [clientProcess, ...args], { stdio: ["ignore", "pipe", "inherit"] })
  lines(child).on("line", (line) => onLine(JSON.parse(line) as Record<string, unknown>))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, exited }
}

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-handles-example-"))
  const db = join(dir, "tasks.db")
  writeFileSync(join(dir, "server.json"), JSON.stringify(config))
  const server = spawn(
    process.execPath,
    [fakeServerBin, "--port", "0", "--config", join(dir, "server.json")],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  )
  try {
    const url = await firstLine(server)
    const keys = ["chapter-1", "chapter-2", "chapter-3"]
    console.log(`fake MCP server at ${url}; handles in ${db}\n`)

    // 1. Launch, and kill the client once every task id is on disk, while the tasks still run.
    const launch = runClient(["launch", url, db, keys.join(",")], (event) => {
      if (event.event === "recorded")
        console.log(`  launched ${event.key}: ${event.status}, task id recorded`)
      if (event.event === "all-recorded") {
        launch.child.kill("SIGKILL")
        console.log("\n  SIGKILL: the client died with every task still running on the server\n")
      }
      if (event.event === "settled")
        console.log(`  (the first client saw ${event.key} settle: too late to kill)`)
    })
    await launch.exited

    // 2. A new process: reconcile, then settle each call.
    const outcomes: Array<Record<string, unknown>> = []
    const resume = runClient(["resume", url, db, keys.join(",")], (event) => {
      if (event.event === "reconciled")
        console.log(`  restarted: reconcile resumed ${event.resumed} open task(s)`)
      if (event.event === "settled") outcomes.push(event)
    })
    if ((await resume.exited) !== 0) throw new Error("the resuming client failed")

    // 3. Check from the server's side.
    const ledger = (await (await fetch(new URL("/_ledger", url))).json()) as LedgerSnapshot
    console.log("\n  key         outcome     launches (server)   task id matches")
    let ok = true
    for (const key of keys) {
      const outcome = outcomes.find((o) => o.key === key)
      const launches = ledger.launches.filter((l) => l.idempotencyKey === key)
      const matches = launches.length === 1 && launches[0]?.taskId === outcome?.taskId
      ok &&= outcome?.outcome === "Completed" && matches
      console.log(
        `  ${key.padEnd(11)} ${String(outcome?.outcome).padEnd(11)} ${String(launches.length).padEnd(19)} ${matches}`,
      )
    }
    const orphans = ledger.tasks.filter((task) => !outcomes.some((o) => o.taskId === task.taskId))
    ok &&= orphans.length === 0
    console.log(`\n  server tasks: ${ledger.tasks.length}, orphaned: ${orphans.length}`)
    console.log(ok ? "\nOK: nothing lost, nothing launched twice." : "\nFAILED: see the table above.")
    process.exitCode = ok ? 0 : 1
  } finally {
    server.kill("SIGTERM")
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
