/**
 * The agent that survives SIGKILL (issue 30, item 5), through real processes: the example's
 * driver (`examples/ai-sdk-sigkill`, built) runs an AI SDK `generateText` agent as a child,
 * kills it with SIGKILL while a slow tool runs, and starts it again from its persisted messages,
 * once with durable tools and once with the AI SDK's stock MCP client. The durable call attaches
 * to its task (one launch) and its answer reaches the model; the stock client launches the tool
 * again, and the first launch's result is lost. The driver's table is printed as measured.
 */
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"
import { runGroup } from "../../../scripts/testing/process-groups.mjs"

const driver = fileURLToPath(new URL("../../../examples/ai-sdk-sigkill/dist/run.js", import.meta.url))

interface Report {
  readonly client: "durable" | "stock"
  readonly launches: number
  readonly firstResultDelivered: boolean
  readonly resumed: number
  readonly answer: string | undefined
}

it("a killed agent restarted from its messages attaches to its task; the stock client launches again", async () => {
  const run = await runGroup(process.execPath, [driver, "--json", "--duration-ms", "2000"], {
    timeoutMs: 90_000,
  })
  console.log(run.stdout)
  expect(run.code, run.stderr).toBe(0)
  const { ok, reports } = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as {
    ok: boolean
    reports: ReadonlyArray<Report>
  }
  expect(ok).toBe(true)
  const [durable, stock] = reports
  expect(durable).toMatchObject({ client: "durable", launches: 1, firstResultDelivered: true, resumed: 1 })
  expect(durable?.answer).toContain("a report on durable")
  // What the stock client does instead: the restarted agent launches the tool a second time, and
  // the result of the first launch reached nobody.
  expect(stock).toMatchObject({ client: "stock", launches: 2, firstResultDelivered: false, resumed: 1 })
  expect(stock?.answer).toContain("a report on stock")
}, 120_000)
