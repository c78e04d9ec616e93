/**
 * A question asked before a restart: the first process's graph stops on the interrupt and the
 * process goes away (its client closed); a new process, on the same SQLite store and the same
 * checkpoint, resumes the graph with the answer. The re-executed tool attaches to the recorded
 * call (one launch), stores the answer and sends it once (one `tasks/update`), and the model reads
 * the result. Resuming once more finds nothing left to answer or launch.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Command, MemorySaver } from "@langchain/langgraph"
import { openTaskClient } from "@mcp-handles/core"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as Profile from "@mcp-handles/fake-server/Profile"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import { afterAll, expect, it } from "vitest"
import { InputInterrupt, mcpTools } from "../src/index.js"
import { agent, interruptsOf, oneCall } from "./support.js"

const server = FakeServer.unsafeMake(Profile.conformance)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "langchain-input-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const open = () =>
  openTaskClient({
    store: SqliteStore.layer({ filename: path.join(dir, "tasks.db") }),
    servers: [{ name: "fake", url: "http://fake.test/mcp" }],
    http: { fetch: (request, init) => server.handler(new Request(request, init)) },
    polling: { minIntervalMs: 50 },
  })

it("a question asked before a restart is answered once by the resumed graph", async () => {
  const config = { configurable: { thread_id: "chat-restart" } }
  const key = "chat-restart:call-1"
  // The checkpoint outlives the process, as a SqliteSaver's file would.
  const checkpointer = new MemorySaver()
  const script = oneCall("confirm_delete", { filename: "old.txt" })
  {
    await using client = await open()
    const graph = agent(await mcpTools(client, { server: "fake" }), script, checkpointer)
    const first = await graph.invoke({ messages: [{ role: "user", content: "delete old.txt" }] }, config)
    expect(interruptsOf(first).map((asked) => InputInterrupt.is(asked.value))).toEqual([true])
  }
  await using client = await open()
  const graph = agent(await mcpTools(client, { server: "fake" }), script, checkpointer)
  const resumed = await graph.invoke(
    new Command({ resume: { action: "accept", content: { confirm: true } } }),
    config,
  )
  expect(resumed.messages.at(-1)?.content).toBe("final: Deleted old.txt")
  // Again, as a graph resumed once more would: nothing asked, answered or launched anew.
  const again = await graph.invoke(null, config)
  expect(again.messages.at(-1)?.content).toBe("final: Deleted old.txt")
  expect(server.ledger.launches.filter((launch) => launch.idempotencyKey === key)).toHaveLength(1)
  expect(server.ledger.tasks.find((task) => task.idempotencyKey === key)?.updates).toHaveLength(1)
})
