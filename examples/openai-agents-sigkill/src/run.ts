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
import { fileURLToPath } from "node:url"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import * as Profile from "@mcp-handles/fake-server/Profile"
import { conclude, type Report, runClient, runMain, startAgent } from "../../../scripts/testing/sigkill.mjs"

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
  const { lines: _, ...report } = await runClient({
    client,
    prefix: "openai-agents-sigkill",
    start: (dir) =>
      startAgent(agentJs, [client, dir, url, client], {
        name: `the ${client} agent`,
        env: { ...process.env, SLOW_SECONDS: String(seconds) },
      }),
    launches: () =>
      server.ledger.launches.filter(
        (launch) => launch.tool === "slow_compute" && launch.arguments.label === client,
      ),
    print,
  })
  print(`   ${client}: run again, the model called slow_compute again (a new tool-call id)`)
  print(`   ${client}: the model read: ${report.answer ?? "(nothing)"}`)
  return report
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
