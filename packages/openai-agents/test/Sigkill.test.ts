/**
 * The agent that survives SIGKILL, through real processes: the example's driver
 * (`examples/openai-agents-sigkill`, built) runs an OpenAI Agents SDK agent as a child, kills it
 * with SIGKILL while `slow_compute` runs, and runs it again on the same directory, once with the
 * durable server and once with the SDK's stock `MCPServerStreamableHttp`. The durable call
 * attaches to its task (one launch) and its answer reaches the model; the stock server launches
 * the tool again, and the first launch's result is lost. The driver's table is printed as
 * measured.
 */
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"
import { runGroup } from "../../../scripts/testing/process-groups.mjs"

const driver = fileURLToPath(new URL("../../../examples/openai-agents-sigkill/dist/run.js", import.meta.url))

interface Report {
  readonly client: "durable" | "stock"
  readonly launches: number
  readonly firstResultDelivered: boolean
  readonly answer: string | undefined
}

it("a killed agent run again attaches to its task; the stock MCP server launches again", async () => {
  const run = await runGroup(process.execPath, [driver, "--json", "--seconds", "2"], { timeoutMs: 90_000 })
  console.log(run.stdout)
  expect(run.code, run.stderr).toBe(0)
  const { ok, reports } = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as {
    ok: boolean
    reports: ReadonlyArray<Report>
  }
  expect(ok).toBe(true)
  const [durable, stock] = reports
  expect(durable).toMatchObject({ client: "durable", launches: 1, firstResultDelivered: true })
  expect(durable?.answer).toContain("Computed durable after 2s")
  // What the stock server does instead: the agent run again launches the tool a second time, and
  // the result of the first launch reached nobody.
  expect(stock).toMatchObject({ client: "stock", launches: 2, firstResultDelivered: false })
  expect(stock?.answer).toContain("Computed stock after 2s")
}, 120_000)
