/**
 * A question asked while nobody could answer it (the run had no `onInput`, and its process is
 * gone) stays open in the store; the run started again, with the same run id, attaches to the
 * same call and answers the question once through its `onInput` and `client.answer`. One
 * launch, one `tasks/update`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { openTaskClient } from "@mcp-handles/core"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import { run } from "@openai/agents-core"
import { afterAll, expect, it } from "vitest"
import { CallKey, durableMcpServer } from "../src/index.js"
import { agent, config, oneCall } from "./support.js"

const server = FakeServer.unsafeMake(config)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openai-agents-input-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const open = () =>
  openTaskClient({
    store: SqliteStore.layer({ filename: path.join(dir, "tasks.db") }),
    servers: [{ name: "fake", url: "http://fake.test/mcp" }],
    http: { fetch: (request, init) => server.handler(new Request(request, init)) },
    polling: { minIntervalMs: 50 },
  })

it("a question left open by a dead run is answered once by the run started again", async () => {
  const runId = "input-restart"
  const args = { filename: "old.log" }
  const key = CallKey.derive({ runId, turn: 1, tool: "confirm_delete", args, ordinal: 1 })
  const script = oneCall("confirm_delete", args)

  // The first run has nobody to ask: the call waits with its question open, and the run dies.
  {
    await using client = await open()
    const stop = new AbortController()
    const running = run(agent(script, [durableMcpServer(client, { server: "fake", runId })]), "Delete", {
      signal: stop.signal,
    })
    // Counted whatever the key, so that a run that keys it otherwise fails below, not here.
    await expect
      .poll(async () => (await client.list({ statuses: ["input_required"] })).records.length, {
        timeout: 10_000,
      })
      .toBe(1)
    stop.abort()
    await running.catch(() => undefined)
  }

  // The run started again answers it, once.
  const asked: Array<string> = []
  await using client = await open()
  const durable = durableMcpServer(client, {
    server: "fake",
    runId,
    onInput: async (request) => {
      asked.push(request.inputKey)
      return { action: "accept", content: { confirm: true } }
    },
  })
  const result = await run(agent(script, [durable]), "Delete")
  expect(result.finalOutput).toBe("final: Deleted old.log")
  expect(asked).toEqual(["confirm"])
  const launches = server.ledger.launches.filter((launch) => launch.tool === "confirm_delete")
  expect(launches.map((launch) => launch.idempotencyKey)).toEqual([key])
  const [task] = server.ledger.tasks.filter((t) => t.idempotencyKey === key)
  expect(task?.updates).toHaveLength(1)
})
