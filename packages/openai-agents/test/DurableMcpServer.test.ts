/**
 * The OpenAI Agents SDK's own agent loop (`run` with an `Agent` whose `mcpServers` holds the
 * durable server) and a scripted `Model`, against the fake server in process: what the model
 * reads after each tool call, and the server's ledger for how many times each call launched.
 */
import type { PromiseClient } from "@mcp-handles/core"
import { run } from "@openai/agents-core"
import { describe, expect, it } from "vitest"
import { CallKey, durableMcpServer } from "../src/index.js"
import { agent, oneCall, runId, setup } from "./support.js"

const fx = setup()
const keyOf = (id: string, tool: string, args: Record<string, unknown>, turn = 1, ordinal = 1) =>
  CallKey.derive({ runId: id, turn, tool, args, ordinal })

describe("durableMcpServer in the SDK's agent loop", () => {
  it("lists the server's tools with their input schemas", async () => {
    await using client = await fx.open()
    const server = durableMcpServer(client, { server: "fake", runId: "r" })
    const tools = await server.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["greet", "slow_compute", "confirm_delete"]),
    )
    expect(tools.find((tool) => tool.name === "greet")).toMatchObject({
      description: 'Answers "Hello, {name}!" at once',
      inputSchema: { type: "object", properties: { name: { type: "string" } } },
    })
    // As sent: additionalProperties is left to the SDK's strict mode, as its own servers do.
    expect(tools.find((tool) => tool.name === "greet")?.inputSchema).not.toHaveProperty(
      "additionalProperties",
    )
    // Cached until invalidated: the same listing.
    expect(await server.listTools()).toBe(await server.listTools())
    const listed = await server.listTools()
    await server.invalidateToolsCache()
    expect(await server.listTools()).not.toBe(listed)
  })

  it("a direct result reaches the model, launched once under the run's key", async () => {
    await using client = await fx.open()
    const id = runId()
    const server = durableMcpServer(client, { server: "fake", runId: id })
    const result = await run(agent(oneCall("greet", { name: "Ada" }), [server]), "Greet Ada")
    expect(result.finalOutput).toBe("final: Hello, Ada!")
    const key = keyOf(id, "greet", { name: "Ada" })
    expect(fx.launchesOf(key)).toHaveLength(1)
    expect((await client.get(key)).status).toBe("completed")
  })

  it("a task is followed to its result, with its task id on record", async () => {
    await using client = await fx.open()
    const id = runId()
    const server = durableMcpServer(client, { server: "fake", runId: id })
    const args = { seconds: 0.3, label: "tides" }
    const result = await run(agent(oneCall("slow_compute", args), [server]), "Compute")
    expect(result.finalOutput).toBe("final: Computed tides after 0.3s")
    const key = keyOf(id, "slow_compute", args)
    const [launch] = fx.launchesOf(key)
    expect(fx.launchesOf(key)).toHaveLength(1)
    expect(launch?.taskId).not.toBeNull()
    expect((await client.get(key)).taskId).toBe(launch?.taskId)
  })

  it("reads the run id from the run's context, and keys calls by turn and ordinal", async () => {
    await using client = await fx.open()
    const id = runId()
    const server = durableMcpServer(client, {
      server: "fake",
      runId: (runContext) => (runContext.context as { runId: string }).runId,
    })
    // Turn 1 greets Ada twice (two calls), turn 2 greets her once more.
    const script = (_: string | undefined, step: number) =>
      step === 0
        ? [
            { name: "greet", args: { name: "Ada" } },
            { name: "greet", args: { name: "Ada" } },
          ]
        : step === 2
          ? [{ name: "greet", args: { name: "Ada" } }]
          : undefined
    const result = await run(agent(script, [server]), "Greet", { context: { runId: id } })
    expect(result.finalOutput).toBe("final: Hello, Ada!")
    const args = { name: "Ada" }
    for (const key of [
      keyOf(id, "greet", args, 1, 1),
      keyOf(id, "greet", args, 1, 2),
      keyOf(id, "greet", args, 2, 1),
    ])
      expect(fx.launchesOf(key)).toHaveLength(1)
  })

  it("a tool error and a failed task come back as text the model reads", async () => {
    await using client = await fx.open()
    const server = durableMcpServer(client, { server: "fake", runId: runId() })
    const refused = await run(agent(oneCall("failing_job"), [server]), "Run the job")
    expect(refused.finalOutput).toBe("final: The job failed")
    const failed = await run(agent(oneCall("protocol_error_job"), [server]), "Run the other job")
    expect(failed.finalOutput).toBe(
      "final: The tool call failed: Internal error while running the job (JSON-RPC error -32603).",
    )
  })

  it("an input request goes to onInput once, through client.answer, and its answer reaches the task", async () => {
    await using client = await fx.open()
    const id = runId()
    const asked: Array<unknown> = []
    const server = durableMcpServer(client, {
      server: "fake",
      runId: id,
      onInput: async (request) => {
        asked.push({ runId: request.runId, inputKey: request.inputKey, tool: request.tool })
        return { action: "accept", content: { confirm: true } }
      },
    })
    const args = { filename: "notes.txt" }
    const result = await run(agent(oneCall("confirm_delete", args), [server]), "Delete notes.txt")
    expect(result.finalOutput).toBe("final: Deleted notes.txt")
    expect(asked).toEqual([{ runId: id, inputKey: "confirm", tool: "confirm_delete" }])
    const key = keyOf(id, "confirm_delete", args)
    const [task] = fx.server.ledger.tasks.filter((t) => t.idempotencyKey === key)
    expect(task?.updates).toHaveLength(1)
    const record = await client.get(key)
    expect(record.status).toBe("completed")
  })

  it("an in-doubt call is a plain sentence, never sent again", async () => {
    await using client = await fx.open()
    const id = runId()
    const server = durableMcpServer(client, { server: "fake", runId: id })
    const result = await run(agent(oneCall("flaky_send"), [server]), "Send")
    expect(result.finalOutput).toContain("may or may not have run")
    const key = keyOf(id, "flaky_send", {})
    expect(fx.launchesOf(key)).toHaveLength(1)
    expect((await client.get(key)).status).toBe("in_doubt")
  })
})

/** Aborts `stop` once the call under `key` is seen working. */
const abortOnceWorking = async (
  client: PromiseClient.PromiseTaskClient,
  key: string,
  stop: AbortController,
) => {
  await expect
    .poll(async () => (await client.get(key).catch(() => undefined))?.status, { timeout: 10_000 })
    .toBe("working")
  stop.abort()
}

describe("an aborted wait", () => {
  it("hands the call off: the task runs on and completes, never cancelled", async () => {
    await using client = await fx.open()
    const id = runId()
    const server = durableMcpServer(client, { server: "fake", runId: id })
    // Long enough to be seen working on a loaded machine.
    const args = { seconds: 3, label: "handed off" }
    const key = keyOf(id, "slow_compute", args)
    const stop = new AbortController()
    const running = run(agent(oneCall("slow_compute", args), [server]), "Compute", { signal: stop.signal })
    await expect
      .poll(async () => (await client.get(key).catch(() => undefined))?.status, { timeout: 10_000 })
      .toBe("working")
    stop.abort()
    await running.catch(() => undefined)
    expect((await client.settle(key))._tag).toBe("Completed")
    expect(fx.server.ledger.tasks.find((task) => task.idempotencyKey === key)?.cancels).toEqual([])
    expect(fx.launchesOf(key)).toHaveLength(1)
  })

  it("says where the call stands: the model is told not to call the tool again", async () => {
    await using client = await fx.open()
    const id = runId()
    const server = durableMcpServer(client, { server: "fake", runId: id })
    const stop = new AbortController()
    const calling = server.callTool("slow_compute", { seconds: 3 }, null, { signal: stop.signal })
    const key = keyOf(id, "slow_compute", { seconds: 3 }, 0)
    await expect
      .poll(async () => (await client.get(key).catch(() => undefined))?.status, { timeout: 10_000 })
      .toBe("working")
    stop.abort()
    const content = await calling
    expect(content[0]?.text).toContain("it runs on and its result is kept")
    expect(content[0]?.text).toContain("Do not call the tool again")
    expect((await client.settle(key))._tag).toBe("Completed")
  })

  it("cancels the call when onAbort is cancel: the server gets tasks/cancel once", async () => {
    await using client = await fx.open()
    const id = runId()
    const server = durableMcpServer(client, { server: "fake", runId: id, onAbort: "cancel" })
    const args = { seconds: 30, label: "cancelled" }
    const key = keyOf(id, "slow_compute", args)
    const stop = new AbortController()
    const running = run(agent(oneCall("slow_compute", args), [server]), "Compute", { signal: stop.signal })
    await abortOnceWorking(client, key, stop)
    await running.catch(() => undefined)
    await expect.poll(async () => (await client.get(key)).status, { timeout: 10_000 }).toBe("cancelled")
    expect((await client.settle(key))._tag).toBe("Cancelled")
    expect(fx.server.ledger.tasks.find((task) => task.idempotencyKey === key)?.cancels).toHaveLength(1)
    expect(fx.launchesOf(key)).toHaveLength(1)
  })

  it("with onAbort cancel, the model reads that the call was cancelled", async () => {
    await using client = await fx.open()
    const id = runId()
    const server = durableMcpServer(client, { server: "fake", runId: id, onAbort: "cancel" })
    const stop = new AbortController()
    const calling = server.callTool("slow_compute", { seconds: 30 }, null, { signal: stop.signal })
    await abortOnceWorking(client, keyOf(id, "slow_compute", { seconds: 30 }, 0), stop)
    const content = await calling
    // Cancelled, or being cancelled when the server's answer to tasks/cancel was not in yet.
    expect(content[0]?.text).toMatch(/The call was cancelled\.|the call is being cancelled/)
    const key = keyOf(id, "slow_compute", { seconds: 30 }, 0)
    expect(fx.server.ledger.tasks.find((task) => task.idempotencyKey === key)?.cancels).toHaveLength(1)
  })

  it("launches nothing when the signal aborted before the call", async () => {
    await using client = await fx.open()
    const id = runId()
    const server = durableMcpServer(client, { server: "fake", runId: id })
    const stop = new AbortController()
    stop.abort()
    await expect(server.callTool("greet", { name: "x" }, null, { signal: stop.signal })).rejects.toThrow()
    expect(fx.launchesOf(keyOf(id, "greet", { name: "x" }, 0))).toEqual([])
  })
})
