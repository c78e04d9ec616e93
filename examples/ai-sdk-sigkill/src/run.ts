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
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import {
  conclude,
  killMidCallAndRestart,
  type Report,
  runMain,
  startAgent,
} from "../../../scripts/testing/sigkill.mjs"

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
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `ai-sdk-sigkill-${client}-`))
  try {
    const launches = () => server.ledger.launches.filter((launch) => launch.arguments.topic === client)
    const restarted = await killMidCallAndRestart({
      start: () => startAgent(agentJs, [client, dir, url, client], { name: `the ${client} agent` }),
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
    const resumed = restarted.lines.find((line) => "resumed" in line)?.resumed
    const report: Resumed = {
      client,
      launches: launches().length,
      firstResultDelivered: launches()[0]?.responseDelivered === true,
      resumed: typeof resumed === "number" ? resumed : 0,
      answer: typeof answer === "string" ? answer : undefined,
      afterRestartMs: restarted.afterRestartMs,
    }
    print(`   ${client}: restarted from messages.json, ${report.resumed} tool call(s) executed again`)
    print(`   ${client}: the model read: ${report.answer ?? "(nothing)"}`)
    return report
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
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
