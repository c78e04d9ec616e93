/**
 * The SIGKILL run: the fake MCP server in this process, the agent (`agent.ts`) as a child. For
 * each client, the agent starts a slow tool call, is killed with SIGKILL while the tool runs, and
 * is started again on the same directory; the server's ledger then says how many times the tool
 * was launched and whether the first launch's result reached anyone. Starting, killing and
 * restarting the agent, and the table, are the SIGKILL harness every adapter's run shares
 * (`scripts/testing/sigkill.mjs`).
 *
 * Usage: node dist/run.js [--json] [--duration-ms 3000]   (--json: the reports as a last line)
 * Exits 0 when the durable agent launched once and its answer reached the model.
 */
import { fileURLToPath } from "node:url"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import { conclude, type Report, runClient, runMain, startAgent } from "../../../scripts/testing/sigkill.mjs"

const json = process.argv.includes("--json")
const durationAt = process.argv.indexOf("--duration-ms")
const durationMs = durationAt === -1 ? 3_000 : Number(process.argv[durationAt + 1])
const agentJs = fileURLToPath(new URL("./agent.js", import.meta.url))
const print = (line: string) => console.log(line)

/** What a run of one client came to: also how many tool calls the restart executed again. */
export interface Resumed extends Report {
  /** Tool calls the restarted agent executed again from its messages. */
  readonly resumed: number
}

const runOne = async (
  server: FakeServer.FakeServer,
  url: string,
  client: "durable" | "stock",
): Promise<Resumed> => {
  const { lines, ...report } = await runClient({
    client,
    prefix: "ai-sdk-sigkill",
    start: (dir) => startAgent(agentJs, [client, dir, url, client], { name: `the ${client} agent` }),
    launches: () => server.ledger.launches.filter((launch) => launch.arguments.topic === client),
    print,
  })
  const said = lines.find((line) => "resumed" in line)?.resumed
  const resumed = typeof said === "number" ? said : 0
  print(`   ${client}: restarted from messages.json, ${resumed} tool call(s) executed again`)
  print(`   ${client}: the model read: ${report.answer ?? "(nothing)"}`)
  return { ...report, resumed }
}

const main = async () => {
  const server = FakeServer.unsafeMake({
    tools: [
      {
        name: "deep_report",
        description: "Writes a report on a topic (slow).",
        inputSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
        shape: "task",
        durationMs,
        pollIntervalMs: 200,
        outcome: { kind: "result", text: "a report on {{args.topic}}" },
      },
    ],
  })
  const listening = await NodeHttp.listen(server)
  try {
    print(`the fake MCP server at ${listening.url}; deep_report takes ${durationMs / 1000} s`)
    print("1. durable tools: mcpTools over a SQLite store")
    const durable = await runOne(server, listening.url, "durable")
    print("2. the AI SDK's stock MCP client: createMCPClient(...).tools()")
    const stock = await runOne(server, listening.url, "stock")
    const ok = durable.launches === 1 && durable.answer?.includes("a report on durable") === true
    const names = { durable: "durable (@mcp-handles/ai-sdk)", stock: "stock (@ai-sdk/mcp)" }
    conclude({ durable, stock, ok, names, json, print })
    return ok
  } finally {
    await listening.close()
  }
}

runMain(main)
