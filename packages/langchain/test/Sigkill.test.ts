/**
 * A LangGraph agent killed with SIGKILL mid-tool-call and resumed from its checkpoint, through
 * real processes (`fixtures/sigkill-agent.mjs`, on the built packages): the fake server runs
 * here, on a socket; the agent runs `slow_compute` and is killed while it runs, then started
 * again on the same directory (a SQLite checkpointer and a SQLite store), where LangGraph
 * re-executes the pending tool call. With durable tools the call attaches to its task: one
 * launch, and the first launch's result reaches the model. With the stock
 * `@langchain/mcp-adapters` client the tool is launched a second time, and the first launch's
 * answer reaches nobody.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import * as Profile from "@mcp-handles/fake-server/Profile"
import { afterAll, beforeAll, expect, it } from "vitest"
import { spawnGroup } from "../../../scripts/testing/process-groups.mjs"

const agentJs = fileURLToPath(new URL("./fixtures/sigkill-agent.mjs", import.meta.url))
// Both generations on one endpoint: the durable client speaks 2026-07-28, the stock adapters' MCP
// SDK client 2025-11-25.
const server = FakeServer.unsafeMake({ ...Profile.conformance, generation: "both" })
let listening: { readonly url: string; readonly close: () => Promise<void> }
beforeAll(async () => {
  listening = await NodeHttp.listen(server)
})
afterAll(() => listening?.close())

/** Starts the agent; `until` resolves with the first line it prints that `pick` accepts. */
const start = (kind: string, dir: string, label: string) => {
  const child = spawnGroup(process.execPath, [agentJs, kind, dir, listening.url, label, "2"], {
    stdio: ["ignore", "pipe", "pipe"],
  })
  const lines: Array<Record<string, unknown>> = []
  const waiting: Array<() => void> = []
  let stderr = ""
  child.stderr?.on("data", (chunk) => {
    stderr += chunk
  })
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    if (line.startsWith("{")) lines.push(JSON.parse(line) as Record<string, unknown>)
    for (const wake of waiting.splice(0)) wake()
  })
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
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
          return reject(new Error(`the ${kind} agent ended first: ${stderr}`))
        waiting.push(check)
      }
      check()
    })
  return { child, lines, until, exited, stderr: () => stderr }
}

/** Runs, kills mid-call, restarts; says what the server saw. */
const killAndResume = async (kind: "durable" | "stock") => {
  const label = `${kind}-${process.pid}`
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `langchain-sigkill-${kind}-`))
  try {
    const launches = () => server.ledger.launches.filter((launch) => launch.arguments.label === label)
    const first = start(kind, dir, label)
    // The durable agent says when the task id is on disk; the stock one has nothing to say.
    if (kind === "durable") await first.until((line) => "recorded" in line)
    await expect.poll(() => launches().length, { timeout: 20_000 }).toBe(1)
    first.child.kill("SIGKILL")
    await first.exited
    const second = start(kind, dir, label)
    const code = await second.exited
    expect(code, second.stderr()).toBe(0)
    return {
      launches: launches().length,
      firstResultDelivered: launches()[0]?.responseDelivered === true,
      resumed: second.lines.some((line) => line.resumed === true),
      answer: second.lines.find((line) => "answer" in line)?.answer,
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
