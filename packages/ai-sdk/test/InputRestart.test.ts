/**
 * A question asked while nobody can answer it (the run was stopped, its process gone) stays open
 * in the store; the restarted run, resumed from its messages, answers it once through its
 * `onInput`, and the task ends with that answer. One launch, one `tasks/update`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { openTaskClient } from "@mcp-handles/core"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import type { ModelMessage } from "ai"
import { afterAll, expect, it } from "vitest"
import { InputRouter, mcpTools, resumeToolCalls } from "../src/index.js"
import { confirmDelete, stopMidCall } from "./support.js"

const server = FakeServer.unsafeMake({
  tools: [confirmDelete],
})
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ai-sdk-input-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const open = (input: InputRouter.InputRouter) =>
  openTaskClient({
    store: SqliteStore.layer({ filename: path.join(dir, "tasks.db") }),
    servers: [{ name: "fake", url: "http://fake.test/mcp" }],
    http: { fetch: (request, init) => server.handler(new Request(request, init)) },
    polling: { minIntervalMs: 50 },
    onInputRequired: input.onInputRequired,
  })

it("a question left open by a stopped run is answered once by the restarted one", async () => {
  const conversationId = "chat-input"
  const key = `${conversationId}:call-1`
  const messages: Array<ModelMessage> = [{ role: "user", content: "Delete it" }]

  // The first run has nobody to ask: its tool call is recorded, the question stays open.
  const first = InputRouter.make()
  {
    await using client = await open(first)
    const tools = await mcpTools(client, { server: "fake", conversationId })
    await stopMidCall(client, tools, messages, { toolName: "confirm_delete", key, status: "input_required" })
  }

  // The restarted run answers it, once.
  const asked: Array<string> = []
  const second = InputRouter.make()
  await using client = await open(second)
  const tools = await mcpTools(client, {
    server: "fake",
    conversationId,
    input: second,
    onInput: async (request) => {
      asked.push(request.inputKey)
      return { action: "accept", content: { confirmed: true } }
    },
  })
  const resumed = await resumeToolCalls({ messages, tools })
  expect(resumed?.content[0]).toMatchObject({
    output: { type: "content", value: [{ type: "text", text: "deleted it: true" }] },
  })
  expect(asked).toEqual(["confirm"])
  const [task] = server.ledger.tasks.filter((t) => t.idempotencyKey === key)
  expect(task?.updates).toHaveLength(1)
  expect(server.ledger.launches.filter((launch) => launch.idempotencyKey === key)).toHaveLength(1)
})
