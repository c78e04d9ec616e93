import { openTaskClient } from "@mcp-handles/core"
import { makeFakeServer } from "@mcp-handles/fake-server"
import { MemoryStore } from "@mcp-handles/store-memory"
import { describe, expect, it } from "vitest"

// The facade in real time, with short tasks: plain async code, no Effect in sight.
describe("openTaskClient", () => {
  const server = makeFakeServer({
    tools: [
      {
        name: "slow",
        shape: "task",
        durationMs: 600,
        pollIntervalMs: 250,
        outcome: { kind: "result", text: "done" },
      },
      {
        name: "ask",
        shape: "task",
        durationMs: 300,
        pollIntervalMs: 250,
        inputSteps: [
          { atMs: 100, requests: { name: { method: "elicitation/create", params: { message: "Name?" } } } },
        ],
        outcome: { kind: "result", text: "hi {{inputs.name.content.name}}" },
      },
    ],
  })
  const open = () =>
    openTaskClient({
      store: MemoryStore.layer,
      servers: [{ name: "fake", url: "http://fake.test/mcp" }],
      http: { fetch: (input, init) => server.handler(new Request(input, init)) },
      onInputRequired: async (request) => ({ action: "accept", content: { name: `${request.inputKey}!` } }),
    })

  it("calls, settles, answers input, lists, and closes", async () => {
    const client = await open()
    try {
      const handle = await client.callTool("fake", "slow", { n: 1 }, { key: "p1" })
      expect(handle.launched).toBe(true)
      expect(handle.record.taskId).not.toBeNull()
      const outcome = await handle.outcome()
      expect(outcome._tag === "Completed" && outcome.result.content).toEqual([{ type: "text", text: "done" }])
      expect(await client.settle("p1")).toEqual(outcome)

      const asked = await client.callTool("fake", "ask", {})
      const answered = await asked.outcome()
      expect(answered._tag === "Completed" && answered.result.content).toEqual([
        { type: "text", text: "hi name!" },
      ])

      const page = await client.list({ statuses: ["completed"] })
      expect(page.records.map((r) => r.key)).toContain("p1")
    } finally {
      await client.close()
    }
  })

  it("rejects with typed errors", async () => {
    const client = await open()
    try {
      await expect(client.callTool("fake", "slow", { f: () => 1 })).rejects.toMatchObject({
        _tag: "InvalidJson",
      })
      await expect(client.settle("missing")).rejects.toMatchObject({ _tag: "UnknownKey" })
      await expect(client.reissue("p-none")).rejects.toMatchObject({ _tag: "UnknownKey" })
    } finally {
      await client.close()
    }
  })
})
