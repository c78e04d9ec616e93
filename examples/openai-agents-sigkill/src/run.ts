/**
 * The SIGKILL run: the fake MCP server in this process (its shipped tools), the agent
 * (`agent.ts`) as a child. For each MCP server, the agent starts a `slow_compute` call, is killed
 * with SIGKILL while the tool runs, and is run again on the same directory; the server's ledger
 * then says how many times the tool was launched and whether the first launch's result reached
 * anyone. Starting, killing and restarting the agent, and the table, are the SIGKILL harness
 * every adapter's run shares (`scripts/testing/sigkill.mjs`).
 *
 * Usage: node dist/run.js [--json] [--seconds 3]   (--json: the reports as a last line)
 * Exits 0 when the durable agent launched once and its answer reached the model.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import * as Profile from "@mcp-handles/fake-server/Profile"
import {
  conclude,
  killMidCallAndRestart,
  type Report,
  runMain,
  startAgent,
} from "../../../scripts/testing/sigkill.mjs"

const json = process.argv.includes("--json")
const secondsAt = process.argv.indexOf("--seconds")
const seconds = secondsAt === -1 ? 3 : Number(process.argv[secondsAt + 1])
const agentJs = fileURLToPath(new URL("./agent.js", import.meta.url))
const print = (line: string) => console.log(line)

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
    const restarted = await killMidCallAndRestart({
      start: () =>
        startAgent(agentJs, [client, dir, url, client], {
          name: `the ${client} agent`,
          env: { ...process.env, SLOW_SECONDS: String(seconds) },
        }),
      // The durable agent says when the task id is on disk; the stock one has nothing to say.
      waitFor: [
        (line) => "toolCall" in line,
        ...(client === "durable" ? [(line: object) => "recorded" in line] : []),
      ],
      launched: () => launches().length > 0,
    })
    const toolCall = restarted.seen[0]?.toolCall
    print(`   ${client}: tool call ${String(toolCall).slice(0, 13)}… launched; SIGKILL`)
    const answer = restarted.lines.find((line) => "answer" in line)?.answer
    const report: Report = {
      client,
      launches: launches().length,
      firstResultDelivered: launches()[0]?.responseDelivered === true,
      answer: typeof answer === "string" ? answer : undefined,
      afterRestartMs: restarted.afterRestartMs,
    }
    print(`   ${client}: run again, the model called slow_compute again (a new tool-call id)`)
    print(`   ${client}: the model read: ${report.answer ?? "(nothing)"}`)
    return report
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
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
    const names = {
      durable: "durable (@mcp-handles/openai-agents)",
      stock: "stock (MCPServerStreamableHttp)",
    }
    conclude({ durable, stock, ok, names, json, print })
    return ok
  } finally {
    await listening.close()
  }
}

runMain(main)
