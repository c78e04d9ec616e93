/**
 * The AI SDK's own agent loop (`generateText` with tools and `stopWhen`, `streamText` for the
 * preliminary results) and its mock model, against the fake server in process: every call the
 * model makes goes through a durable client, and what the model reads next is checked, with the
 * server's ledger for how many times each call launched.
 */
import { isStepCount, streamText } from "ai"
import { describe, expect, it } from "vitest"
import { mcpTools, ToolOutput } from "../src/index.js"
import { callOnce, confirmDelete, conversation, oneCall, scriptedModel, setup } from "./support.js"

const fx = setup({
  tools: [
    {
      name: "lookup",
      description: "Looks a word up.",
      inputSchema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
      shape: "direct",
      outcome: { kind: "result", text: "{{args.word}}: the rise and fall of the sea" },
    },
    {
      name: "deep_report",
      title: "Deep report",
      shape: "task",
      // Long enough for the event feed (a store read every 500 ms) to see its status message.
      durationMs: 1_500,
      pollIntervalMs: 100,
      workingMessage: "researching {{args.topic}}",
      outcome: { kind: "result", text: "a report on {{args.topic}}" },
    },
    {
      name: "refuse",
      shape: "task",
      durationMs: 100,
      pollIntervalMs: 50,
      outcome: { kind: "result", text: "no such topic", isError: true },
    },
    {
      name: "broken",
      shape: "task",
      durationMs: 100,
      pollIntervalMs: 50,
      outcome: { kind: "error", code: -32603, message: "disk full" },
    },
    {
      name: "count_up",
      shape: "direct",
      durationMs: 900,
      progress: { steps: [0, 50, 100], total: 100, intervalMs: 300, message: "counted {{progress}}" },
      outcome: { kind: "result", text: "counted" },
    },
    confirmDelete,
    { name: "long_job", shape: "task", durationMs: 60_000, pollIntervalMs: 100 },
    { name: "flaky_send", shape: "task", durationMs: 200, pollIntervalMs: 50 },
  ],
  // The answer to the first call of flaky_send is lost after the server launched it.
  faults: [{ when: { method: "tools/call", tool: "flaky_send", nth: 1 }, fault: { kind: "drop" } }],
})

const launchesOf = (key: string) =>
  fx.server.ledger.launches.filter((launch) => launch.idempotencyKey === key)

describe("mcpTools in wait mode, in the AI SDK's agent loop", () => {
  it("names, describes and shapes each tool as tools/list does", async () => {
    await using client = await fx.open()
    const tools = await mcpTools(client, { server: "fake", conversationId: conversation() })
    expect(Object.keys(tools).sort()).toEqual([
      "broken",
      "confirm_delete",
      "count_up",
      "deep_report",
      "flaky_send",
      "long_job",
      "lookup",
      "refuse",
    ])
    expect(tools.lookup?.description).toBe("Looks a word up.")
    // The fake server describes a tool that has no description of its own.
    expect(tools.deep_report?.description).toBe("Fake tool deep_report")
    const schema = await (tools.lookup?.inputSchema as { jsonSchema: unknown } | undefined)?.jsonSchema
    expect(schema).toMatchObject({ type: "object", required: ["word"] })
    expect(
      Object.keys(await mcpTools(client, { server: "fake", conversationId: "c", tools: ["lookup"] })),
    ).toEqual(["lookup"])
  })

  it("a direct result reaches the model, launched once under {conversationId}:{toolCallId}", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const tools = await mcpTools(client, { server: "fake", conversationId })
    const result = await callOnce(tools, {
      toolName: "lookup",
      input: { word: "tides" },
      toolCallId: "call-7",
    })
    expect(result.text).toBe("final: tides: the rise and fall of the sea")
    const key = `${conversationId}:call-7`
    expect(launchesOf(key)).toHaveLength(1)
    expect((await client.get(key)).status).toBe("completed")
    const output = result.steps[0]?.toolResults[0]?.output
    expect(output).toMatchObject({ status: "completed", handle: key })
  })

  it("a task is followed to its result, with its task id on record", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const tools = await mcpTools(client, { server: "fake", conversationId })
    const result = await callOnce(tools, { toolName: "deep_report", input: { topic: "tides" } })
    expect(result.text).toBe("final: a report on tides")
    const key = `${conversationId}:call-1`
    const [launch] = launchesOf(key)
    expect(launchesOf(key)).toHaveLength(1)
    expect((await client.get(key)).taskId).toBe(launch?.taskId)
  })

  it("streams the task's status as preliminary results (streamText), then the result", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const tools = await mcpTools(client, { server: "fake", conversationId })
    const model = scriptedModel(oneCall("deep_report", { topic: "waves" }))
    const run = streamText({ model, tools, prompt: "Research waves", stopWhen: isStepCount(4) })
    const seen: Array<ToolOutput.ToolOutput> = []
    let preliminary = 0
    for await (const part of run.fullStream) {
      if (part.type !== "tool-result") continue
      seen.push(part.output as ToolOutput.ToolOutput)
      if (part.preliminary === true) preliminary++
    }
    expect(await run.text).toBe("final: a report on waves")
    expect(preliminary).toBeGreaterThan(0)
    // The AI SDK reports an iterable's last value twice: as preliminary, then as the result.
    expect(seen.slice(0, -2).every((output) => !ToolOutput.rests(output))).toBe(true)
    expect(seen.at(-2)).toEqual(seen.at(-1))
    expect(seen.map((output) => "message" in output && output.message)).toContain("researching waves")
    expect(seen.at(-1)).toMatchObject({ status: "completed" })
  })

  it("streams a direct call's progress while its answer is on the way", async () => {
    await using client = await fx.open()
    const tools = await mcpTools(client, { server: "fake", conversationId: conversation() })
    const run = streamText({
      model: scriptedModel(oneCall("count_up")),
      tools,
      prompt: "Count",
      stopWhen: isStepCount(4),
    })
    const progress: Array<unknown> = []
    for await (const part of run.fullStream) {
      if (part.type === "tool-result" && part.preliminary === true) {
        const output = part.output as ToolOutput.ToolOutput
        if ("progress" in output && output.progress !== undefined)
          progress.push({ progress: output.progress, total: output.total, message: output.message })
      }
    }
    expect(await run.text).toBe("final: counted")
    expect(progress).toContainEqual({ progress: 50, total: 100, message: "counted 50" })
  })

  it("a tool error and a failed task stay errors the model reads", async () => {
    await using client = await fx.open()
    const tools = await mcpTools(client, { server: "fake", conversationId: conversation() })
    const refused = await callOnce(tools, { toolName: "refuse", input: { topic: "x" } })
    expect(refused.text).toBe("final: error: no such topic")
    const failed = await callOnce(tools, { toolName: "broken", input: {}, toolCallId: "call-2" })
    expect(failed.text).toBe("final: error: The tool call failed: disk full (JSON-RPC error -32603).")
  })

  it("an input request goes to onInput once, and its answer reaches the task", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const asked: Array<unknown> = []
    const tools = await mcpTools(client, {
      server: "fake",
      conversationId,
      input: fx.input,
      onInput: async (request) => {
        asked.push({
          conversationId: request.conversationId,
          inputKey: request.inputKey,
          request: request.request,
        })
        return { action: "accept", content: { confirmed: true } }
      },
    })
    const result = await callOnce(tools, { toolName: "confirm_delete", input: { file: "notes.txt" } })
    expect(result.text).toBe("final: deleted notes.txt: true")
    expect(asked).toEqual([
      {
        conversationId,
        inputKey: "confirm",
        request: {
          method: "elicitation/create",
          params: {
            message: "Delete notes.txt?",
            requestedSchema: {
              type: "object",
              properties: { confirmed: { type: "boolean" } },
              required: ["confirmed"],
            },
          },
        },
      },
    ])
    const [task] = fx.server.ledger.tasks.filter((t) => t.idempotencyKey === `${conversationId}:call-1`)
    expect(task?.updates).toHaveLength(1)
  })

  it("a call cancelled while the model waits ends as a cancelled result", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const key = `${conversationId}:call-1`
    const tools = await mcpTools(client, { server: "fake", conversationId })
    const running = callOnce(tools, { toolName: "long_job" })
    await expect.poll(async () => (await client.get(key).catch(() => undefined))?.status).toBe("working")
    await client.cancel(key)
    const result = await running
    expect(result.steps[0]?.toolResults[0]?.output).toMatchObject({ status: "cancelled", handle: key })
    expect(result.text).toContain('"status":"cancelled"')
    expect(fx.server.ledger.tasks.find((t) => t.idempotencyKey === key)?.cancels).toHaveLength(1)
  })

  it("an in-doubt call is a clear result, never sent again", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const key = `${conversationId}:call-1`
    const tools = await mcpTools(client, { server: "fake", conversationId })
    const result = await callOnce(tools, { toolName: "flaky_send" })
    expect(result.steps[0]?.toolResults[0]?.output).toMatchObject({ status: "in_doubt", handle: key })
    expect(result.text).toContain("may or may not have run")
    expect(launchesOf(key)).toHaveLength(1)
    expect((await client.get(key)).status).toBe("in_doubt")
  })
})
