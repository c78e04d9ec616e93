/**
 * The SIGKILL run: the fake MCP server in this process (its shipped tools), the agent
 * (`agent.ts`) as a child. For each MCP server, the agent starts a `slow_compute` call, is killed
 * with SIGKILL while the tool runs, and is run again on the same directory; the server's ledger
 * then says how many times the tool was launched and whether the first launch's result reached
 * anyone.
 *
 * Usage: node dist/run.js [--json] [--seconds 3]   (--json: the reports as a last line)
 * Exits 0 when the durable agent launched once and its answer reached the model.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import * as Profile from "@mcp-handles/fake-server/Profile"

const json = process.argv.includes("--json")
const secondsAt = process.argv.indexOf("--seconds")
const seconds = secondsAt === -1 ? 3 : Number(process.argv[secondsAt + 1])
const agentJs = fileURLToPath(new URL("./agent.js", import.meta.url))
const print = (line: string) => console.log(line)

/** What a run of one client came to. */
export interface Report {
  readonly client: "durable" | "stock"
  /** Launches of the tool on the server for this run. */
  readonly launches: number
  /** Whether the first launch's result was delivered to a client. */
  readonly firstResultDelivered: boolean
  readonly answer: string | undefined
  /** From the restart to the answer. */
  readonly afterRestartMs: number
}

const children = new Set<ChildProcess>()

/** Starts the agent; `until` resolves with the first line it prints that `pick` accepts. */
const agent = (client: string, dir: string, url: string) => {
  const child = spawn(process.execPath, [agentJs, client, dir, url, client], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, SLOW_SECONDS: String(seconds) },
  })
  children.add(child)
  const lines: Array<Record<string, unknown>> = []
  const waiting: Array<() => void> = []
  let stderr = ""
  child.stderr?.on("data", (chunk) => {
    stderr += chunk
  })
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    lines.push(line.startsWith("{") ? JSON.parse(line) : { text: line })
    for (const wake of waiting.splice(0)) wake()
  })
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      children.delete(child)
      for (const wake of waiting.splice(0)) wake()
      resolve(code)
    }),
  )
  const until = (pick: (line: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const found = lines.find(pick)
        if (found !== undefined) return resolve(found)
        if (child.exitCode !== null || child.signalCode !== null)
          return reject(new Error(`the ${client} agent ended first: ${stderr}`))
        waiting.push(check)
      }
      check()
    })
  return { child, lines, until, exited, stderr: () => stderr }
}

const runOne = async (
  server: FakeServer.FakeServer,
  url: string,
  client: "durable" | "stock",
): Promise<Report> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `openai-agents-sigkill-${client}-`))
  try {
    const launches = () =>
      server.ledger.launches.filter(
        (launch) => launch.tool === "slow_compute" && launch.arguments.label === client,
      )
    const first = agent(client, dir, url)
    const toolCall = await first.until((line) => "toolCall" in line)
    // The durable agent says when the task id is on disk; the stock one has nothing to say.
    if (client === "durable") await first.until((line) => "recorded" in line)
    while (launches().length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
    first.child.kill("SIGKILL")
    await first.exited
    print(`   ${client}: tool call ${String(toolCall.toolCall).slice(0, 13)}… launched; SIGKILL`)

    const restartedAt = Date.now()
    const second = agent(client, dir, url)
    const code = await second.exited
    if (code !== 0) throw new Error(`the restarted ${client} agent exited ${code}: ${second.stderr()}`)
    const answer = second.lines.find((line) => "answer" in line)?.answer
    const report: Report = {
      client,
      launches: launches().length,
      firstResultDelivered: launches()[0]?.responseDelivered === true,
      answer: typeof answer === "string" ? answer : undefined,
      afterRestartMs: Date.now() - restartedAt,
    }
    print(`   ${client}: run again, the model called slow_compute again (a new tool-call id)`)
    print(`   ${client}: the model read: ${report.answer ?? "(nothing)"}`)
    return report
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const table = (reports: ReadonlyArray<Report>) => {
  const rows = [
    ["CLIENT", "LAUNCHES", "FIRST LAUNCH'S ANSWER", "ANSWER REACHED THE MODEL", "AFTER RESTART"],
    ...reports.map((report) => [
      report.client === "durable"
        ? "durable (@mcp-handles/openai-agents)"
        : "stock (MCPServerStreamableHttp)",
      String(report.launches),
      report.firstResultDelivered ? "delivered" : "lost (nobody received it)",
      report.answer === undefined ? "no" : report.launches > 1 ? "yes, from a second launch" : "yes",
      `${(report.afterRestartMs / 1000).toFixed(1)} s`,
    ]),
  ]
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? []
  return rows.map((row) =>
    `  ${row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ")}`.trimEnd(),
  )
}

const main = async () => {
  const server = FakeServer.unsafeMake(Profile.conformance)
  const listening = await NodeHttp.listen(server)
  try {
    print(`the fake MCP server at ${listening.url}; slow_compute works ${seconds} s`)
    print("1. durable: durableMcpServer over a SQLite store")
    const durable = await runOne(server, listening.url, "durable")
    print("2. the SDK's stock MCP server: new MCPServerStreamableHttp({ url })")
    const stock = await runOne(server, listening.url, "stock")
    const ok = durable.launches === 1 && durable.answer?.includes("Computed durable") === true
    print("")
    for (const line of table([durable, stock])) print(line)
    print("")
    print(
      ok
        ? `OK: the durable agent's call launched once and its answer reached the model; the stock client launched ${stock.launches} time(s).`
        : "FAILED: the durable agent launched more than once, or its answer never reached the model.",
    )
    if (json) print(JSON.stringify({ ok, reports: [durable, stock] }))
    return ok
  } finally {
    await listening.close()
  }
}

const stopChildren = () => {
  for (const child of children) child.kill("SIGKILL")
}
process.once("SIGINT", () => {
  stopChildren()
  process.exit(130)
})
main()
  .then((ok) => {
    process.exitCode = ok ? 0 : 1
  })
  .catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(stopChildren)
