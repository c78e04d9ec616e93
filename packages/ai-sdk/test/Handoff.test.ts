/**
 * Calls that outlive a wait: an abort (here, the AI SDK's own tool timeout) hands the call off
 * and never cancels it unless asked; handle mode returns a handle at once and the companion
 * tools look again; a run picked up from its messages attaches to the call it had started.
 */
import { generateText, isStepCount, type ModelMessage } from "ai"
import { describe, expect, it } from "vitest"
import { mcpTools, pendingToolCalls, resumeToolCalls } from "../src/index.js"
import { callOnce, conversation, scriptedModel, setup, stopMidCall } from "./support.js"

const fx = setup({
  tools: [
    {
      name: "deep_report",
      shape: "task",
      durationMs: 1_000,
      pollIntervalMs: 100,
      workingMessage: "researching {{args.topic}}",
      outcome: { kind: "result", text: "a report on {{args.topic}}" },
    },
    { name: "long_report", shape: "task", durationMs: 60_000, pollIntervalMs: 100 },
  ],
})

const launchesOf = (key: string) =>
  fx.server.ledger.launches.filter((launch) => launch.idempotencyKey === key)
const taskOf = (key: string) => fx.server.ledger.tasks.find((task) => task.idempotencyKey === key)

describe("an aborted wait", () => {
  it("hands the call off: the model reads its handle, the task runs on and completes", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const key = `${conversationId}:call-1`
    const tools = await mcpTools(client, { server: "fake", conversationId })
    const result = await callOnce(
      tools,
      { toolName: "deep_report", input: { topic: "tides" } },
      { timeout: { toolMs: 300 } },
    )
    // Working, or still pending when the timeout came before the server's answer was recorded.
    const output = result.steps[0]?.toolResults[0]?.output
    expect(output).toMatchObject({ handle: key })
    expect(["pending", "working"]).toContain((output as { status: string }).status)
    expect(result.text).toContain("the call runs on")
    const outcome = await client.settle(key)
    expect(outcome._tag).toBe("Completed")
    expect(taskOf(key)?.cancels).toEqual([])
    expect(launchesOf(key)).toHaveLength(1)
  })

  it("cancels the call when onAbort is cancel", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const key = `${conversationId}:call-1`
    const tools = await mcpTools(client, { server: "fake", conversationId, onAbort: "cancel" })
    await callOnce(
      tools,
      { toolName: "deep_report", input: { topic: "tides" } },
      { timeout: { toolMs: 300 } },
    )
    expect((await client.settle(key))._tag).toBe("Cancelled")
    expect(taskOf(key)?.cancels).toHaveLength(1)
  })

  it("launches nothing when the run was aborted before the tool ran", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const tools = await mcpTools(client, { server: "fake", conversationId })
    const stop = new AbortController()
    stop.abort()
    const running = tools.deep_report?.execute?.(
      { topic: "x" },
      { toolCallId: "call-1", messages: [], abortSignal: stop.signal, context: undefined },
    )
    await expect(
      (async () => {
        for await (const _ of running as AsyncIterable<unknown>);
      })(),
    ).rejects.toThrow()
    expect(launchesOf(`${conversationId}:call-1`)).toEqual([])
    await expect(client.get(`${conversationId}:call-1`)).rejects.toMatchObject({ _tag: "UnknownKey" })
  })
})

describe("handle mode", () => {
  it("returns a handle at once; wait_for_call gets the result; no task id reaches the model", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const key = `${conversationId}:call-1`
    const tools = await mcpTools(client, { server: "fake", conversationId, mode: "handle" })
    expect(Object.keys(tools).sort()).toEqual(["check_call", "deep_report", "long_report", "wait_for_call"])
    const result = await generateText({
      model: scriptedModel((read, step) => {
        if (step === 0) return [{ toolName: "deep_report", input: { topic: "tides" }, toolCallId: "call-1" }]
        if (step > 2) return undefined
        // The model reads the handle from the tool's last answer.
        const handle = (JSON.parse(read ?? "{}") as { handle?: string }).handle
        return step === 1
          ? [{ toolName: "check_call", input: { handle } }]
          : [{ toolName: "wait_for_call", input: { handle, seconds: 10 } }]
      }),
      tools,
      prompt: "go",
      stopWhen: isStepCount(6),
    })
    const [started, checked, waited] = result.steps.map((step) => step.toolResults[0]?.output)
    expect(started).toMatchObject({ status: "working", handle: key })
    expect(checked).toMatchObject({ handle: key })
    expect(waited).toMatchObject({ status: "completed", handle: key })
    expect(result.text).toBe("final: a report on tides")
    const taskId = (await client.get(key)).taskId
    expect(taskId).not.toBeNull()
    expect(JSON.stringify(result.steps.map((step) => step.content))).not.toContain(taskId as string)
    expect(launchesOf(key)).toHaveLength(1)
  })

  it("refuses a handle of another conversation, and waits no longer than asked", async () => {
    await using client = await fx.open()
    const other = conversation()
    const mine = await mcpTools(client, { server: "fake", conversationId: conversation(), mode: "handle" })
    const theirs = await mcpTools(client, { server: "fake", conversationId: other, mode: "handle" })
    const result = await generateText({
      model: scriptedModel((read, step) => {
        if (step === 0) return [{ toolName: "long_report", input: {}, toolCallId: "call-9" }]
        if (step === 1)
          return [
            { toolName: "wait_for_call", input: { handle: JSON.parse(read ?? "{}").handle, seconds: 1 } },
          ]
        return undefined
      }),
      tools: theirs,
      prompt: "go",
      stopWhen: isStepCount(4),
    })
    expect(result.steps[1]?.toolResults[0]?.output).toMatchObject({
      status: "working",
      handle: `${other}:call-9`,
    })
    const refused = await generateText({
      model: scriptedModel((_, step) =>
        step === 0 ? [{ toolName: "check_call", input: { handle: `${other}:call-9` } }] : undefined,
      ),
      tools: mine,
      prompt: "go",
      stopWhen: isStepCount(4),
    })
    expect(refused.text).toContain("No call has the handle")
  })
})

describe("companion tools", () => {
  it("refuse to shadow a server tool of the same name", async () => {
    const clash = setup({ tools: [{ name: "check_call", shape: "direct" }] })
    await using client = await clash.open()
    await expect(
      mcpTools(client, { server: "fake", conversationId: "c", mode: "handle" }),
    ).rejects.toMatchObject({
      _tag: "CompanionNameTaken",
      tool: "check_call",
    })
    const without = await mcpTools(client, { server: "fake", conversationId: "c", mode: "handle", tools: [] })
    expect(Object.keys(without).sort()).toEqual(["check_call", "wait_for_call"])
  })
})

describe("a run picked up from its messages", () => {
  it("executes the pending tool call again and attaches to the task it had started", async () => {
    await using client = await fx.open()
    const conversationId = conversation()
    const key = `${conversationId}:call-1`
    const messages: Array<ModelMessage> = [{ role: "user", content: "Research tides" }]
    const tools = await mcpTools(client, { server: "fake", conversationId })
    // The first run stops mid-call (as a killed process would), its tool call on record.
    await stopMidCall(client, tools, messages, {
      toolName: "deep_report",
      input: { topic: "tides" },
      key,
      status: "working",
    })
    expect(pendingToolCalls(messages).map((call) => call.toolCallId)).toEqual(["call-1"])

    const resumed = await resumeToolCalls({ messages, tools })
    expect(resumed?.content).toEqual([
      {
        type: "tool-result",
        toolCallId: "call-1",
        toolName: "deep_report",
        output: { type: "content", value: [{ type: "text", text: "a report on tides" }] },
      },
    ])
    messages.push(resumed as ModelMessage)
    expect(pendingToolCalls(messages)).toEqual([])
    const second = await generateText({
      model: scriptedModel(() => undefined),
      tools,
      messages,
      stopWhen: isStepCount(4),
    })
    expect(second.text).toBe("final: a report on tides")
    expect(launchesOf(key)).toHaveLength(1)
  })
})
