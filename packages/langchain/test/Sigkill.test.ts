/**
 * A LangGraph agent killed with SIGKILL mid-tool-call and resumed from its checkpoint, through
 * real processes (`fixtures/sigkill-agent.mjs`, on the built packages): the fake server runs
 * here, on a socket; the agent runs `slow_compute` and is killed while it runs, then started
 * again on the same directory (a SQLite checkpointer and a SQLite store), where LangGraph
 * re-executes the pending tool call. With durable tools the call attaches to its task: one
 * launch, and the first launch's result reaches the model. With the stock
 * `@langchain/mcp-adapters` client the tool is launched a second time, and the first launch's
 * answer reaches nobody. Starting, killing and restarting the agent is the SIGKILL harness every
 * adapter's run shares (`scripts/testing/sigkill.mjs`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import * as Profile from "@mcp-handles/fake-server/Profile"
import { afterAll, beforeAll, expect, it } from "vitest"
import { killMidCallAndRestart, startAgent } from "../../../scripts/testing/sigkill.mjs"

const agentJs = fileURLToPath(new URL("./fixtures/sigkill-agent.mjs", import.meta.url))
// Both generations on one endpoint: the durable client speaks 2026-07-28, the stock adapters' MCP
// SDK client 2025-11-25.
const server = FakeServer.unsafeMake({ ...Profile.conformance, generation: "both" })
let listening: { readonly url: string; readonly close: () => Promise<void> }
beforeAll(async () => {
  listening = await NodeHttp.listen(server)
})
afterAll(() => listening?.close())

/** Runs, kills mid-call, restarts (the SIGKILL harness); says what the server saw. */
const killAndResume = async (kind: "durable" | "stock") => {
  const label = `${kind}-${process.pid}`
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `langchain-sigkill-${kind}-`))
  try {
    const launches = () => server.ledger.launches.filter((launch) => launch.arguments.label === label)
    const restarted = await killMidCallAndRestart({
      start: () => startAgent(agentJs, [kind, dir, listening.url, label, "2"], { name: `the ${kind} agent` }),
      // The durable agent says when the task id is on disk; the stock one has nothing to say.
      waitFor: kind === "durable" ? [(line) => "recorded" in line] : [],
      launched: () => launches().length > 0,
    })
    return {
      launches: launches().length,
      firstResultDelivered: launches()[0]?.responseDelivered === true,
      resumed: restarted.lines.some((line) => line.resumed === true),
      answer: restarted.lines.find((line) => "answer" in line)?.answer,
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

it("a killed graph resumed from its checkpoint attaches to its task; the stock adapters launch again", async () => {
  const durable = await killAndResume("durable")
  console.log("durable (@mcp-handles/langchain):", durable)
  expect(durable).toMatchObject({ launches: 1, firstResultDelivered: true, resumed: true })
  expect(durable.answer).toContain("Here it is: Computed durable-")

  const stock = await killAndResume("stock")
  console.log("stock (@langchain/mcp-adapters):", stock)
  // What the stock client does instead: the resumed graph calls the tool a second time, and the
  // answer of the first launch reached nobody.
  expect(stock).toMatchObject({ launches: 2, firstResultDelivered: false, resumed: true })
  expect(stock.answer).toContain("Here it is: Computed stock-")
}, 120_000)
