/**
 * LangGraph's own agent loop (a StateGraph with the fake chat model, `ToolNode`, `toolsCondition`
 * and a checkpointer) against the fake server's shipped tools (`greet`, `slow_compute`,
 * `confirm_delete`, ...): every call the model makes goes through a durable client, and what the
 * model reads next is checked, with the server's ledger for how many times each call launched.
 */
import { Command } from "@langchain/langgraph"
import * as Profile from "@mcp-handles/fake-server/Profile"
import { describe, expect, it } from "vitest"
import { InputInterrupt, mcpTools } from "../src/index.js"
import { agent, interruptsOf, oneCall, setup, thread, toolMessages } from "./support.js"

const fx = setup(Profile.conformance)

describe("mcpTools in a LangGraph agent", () => {
  it("names, describes and shapes each tool as tools/list does", async () => {
    await using client = await fx.open()
    const tools = await mcpTools(client, { server: "fake", tools: ["greet", "slow_compute"] })
    expect(tools.map((tool) => tool.name)).toEqual(["greet", "slow_compute"])
    expect(tools[0]?.description).toBe('Answers "Hello, {name}!" at once')
    expect(tools[1]?.schema).toMatchObject({
      type: "object",
      properties: { seconds: { type: "number" }, label: { type: "string" } },
    })
    expect((await mcpTools(client, { server: "fake" })).length).toBeGreaterThan(10)
  })

  it("a direct result reaches the model, launched once under {thread_id}:{tool_call_id}", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const graph = agent(
      await mcpTools(client, { server: "fake" }),
      oneCall("greet", { name: "Ada" }, "call-7"),
    )
    const result = await graph.invoke(
      { messages: [{ role: "user", content: "greet Ada" }] },
      { configurable: { thread_id: threadId } },
    )
    expect(result.messages.at(-1)?.content).toBe("final: Hello, Ada!")
    const key = `${threadId}:call-7`
    expect(fx.launchesOf(key)).toHaveLength(1)
    const [message] = toolMessages(result.messages)
    expect(message?.status).toBe("success")
    expect(message?.artifact).toMatchObject({ status: "completed", handle: key })
  })

  it("a task is followed to its result, with its task id on record", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const graph = agent(
      await mcpTools(client, { server: "fake" }),
      oneCall("slow_compute", { seconds: 0.3, label: "tides" }),
    )
    const result = await graph.invoke(
      { messages: [{ role: "user", content: "go" }] },
      { configurable: { thread_id: threadId } },
    )
    expect(result.messages.at(-1)?.content).toBe("final: Computed tides after 0.3s")
    const key = `${threadId}:call-1`
    const [launch] = fx.launchesOf(key)
    expect(fx.launchesOf(key)).toHaveLength(1)
    expect(launch?.taskId).toBeDefined()
    expect((await client.get(key)).taskId).toBe(launch?.taskId)
  })

  it("a tool error and a failed task are error ToolMessages the model reads", async () => {
    await using client = await fx.open()
    const tools = await mcpTools(client, { server: "fake" })
    const refused = await agent(tools, oneCall("failing_job")).invoke(
      { messages: [{ role: "user", content: "go" }] },
      { configurable: { thread_id: thread() } },
    )
    expect(toolMessages(refused.messages)[0]?.status).toBe("error")
    expect(refused.messages.at(-1)?.content).toBe("final: The job failed")
    const failed = await agent(tools, oneCall("protocol_error_job")).invoke(
      { messages: [{ role: "user", content: "go" }] },
      { configurable: { thread_id: thread() } },
    )
    expect(toolMessages(failed.messages)[0]?.status).toBe("error")
    expect(failed.messages.at(-1)?.content).toBe(
      "final: The tool call failed: Internal error while running the job (JSON-RPC error -32603).",
    )
  })

  it("a question is an interrupt; the resumed answer is stored and sent once", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const config = { configurable: { thread_id: threadId } }
    const key = `${threadId}:call-1`
    const graph = agent(
      await mcpTools(client, { server: "fake" }),
      oneCall("confirm_delete", { filename: "notes.txt" }),
    )
    const first = await graph.invoke({ messages: [{ role: "user", content: "delete notes.txt" }] }, config)
    const [asked] = interruptsOf(first)
    expect(InputInterrupt.is(asked?.value)).toBe(true)
    expect(asked?.value).toMatchObject({
      type: "mcp-handles/input",
      key,
      inputKey: "confirm",
      message: "Delete notes.txt?",
      request: { method: "elicitation/create" },
    })
    expect((await client.get(key)).status).toBe("input_required")
    const second = await graph.invoke(
      new Command({ resume: { action: "accept", content: { confirm: true } } }),
      config,
    )
    expect(second.messages.at(-1)?.content).toBe("final: Deleted notes.txt")
    expect(fx.launchesOf(key)).toHaveLength(1)
    expect(fx.taskOf(key)?.updates).toHaveLength(1)
    expect((await client.get(key)).answers.confirm?.response).toEqual({
      action: "accept",
      content: { confirm: true },
    })
  })

  it("two questions, two interrupts: a re-executed tool replays the answered one and never answers it again", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const config = { configurable: { thread_id: threadId } }
    const key = `${threadId}:call-1`
    const graph = agent(await mcpTools(client, { server: "fake" }), oneCall("multi_input"))
    const asked: Array<unknown> = []
    let run = await graph.invoke({ messages: [{ role: "user", content: "go" }] }, config)
    for (let round = 0; round < 4 && interruptsOf(run).length > 0; round++) {
      const value = interruptsOf(run)[0]?.value as InputInterrupt.InputInterrupt
      asked.push(value.inputKey)
      // Different answers, so that an answer sent to the wrong question shows.
      const resume = { action: "accept", content: { confirm: value.inputKey === "first" } }
      run = await graph.invoke(new Command({ resume }), config)
    }
    expect(asked).toEqual(["first", "second"])
    expect(run.messages.at(-1)?.content).toBe("final: Both answers received")
    expect(fx.launchesOf(key)).toHaveLength(1)
    // One tasks/update per question: the first answer, seen again by the re-executed tool, was
    // not sent a second time.
    expect(fx.taskOf(key)?.updates).toHaveLength(2)
    const { answers } = await client.get(key)
    expect(answers.first?.response).toEqual({ action: "accept", content: { confirm: true } })
    expect(answers.second?.response).toEqual({ action: "accept", content: { confirm: false } })
  })

  it("an in-process onInput answers outside LangGraph, once", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const asked: Array<unknown> = []
    const [confirm] = await mcpTools(client, {
      server: "fake",
      tools: ["confirm_delete"],
      threadId,
      onInput: async (request) => {
        asked.push({ threadId: request.threadId, inputKey: request.inputKey })
        return { action: "accept", content: { confirm: true } }
      },
    })
    const message = await confirm?.invoke({
      id: "call-3",
      name: "confirm_delete",
      args: { filename: "a" },
      type: "tool_call",
    })
    expect(message?.content).toBe("Deleted a")
    expect(asked).toEqual([{ threadId, inputKey: "confirm" }])
    expect(fx.taskOf(`${threadId}:call-3`)?.updates).toHaveLength(1)
  })

  it("refuses a call without a thread id or a tool call id, and launches nothing", async () => {
    await using client = await fx.open()
    const [greet] = await mcpTools(client, { server: "fake", tools: ["greet"] })
    const before = fx.server.ledger.launches.length
    await expect(
      greet?.invoke({ id: "call-1", name: "greet", args: { name: "x" }, type: "tool_call" }),
    ).rejects.toMatchObject({ _tag: "MissingThreadId", tool: "greet" })
    await expect(greet?.invoke({ name: "x" }, { configurable: { thread_id: "t" } })).rejects.toMatchObject({
      _tag: "MissingToolCallId",
    })
    expect(fx.server.ledger.launches.length).toBe(before)
    // The documented fallback: the threadId option, for a tool run outside LangGraph.
    const [fallback] = await mcpTools(client, { server: "fake", tools: ["greet"], threadId: "outside" })
    const message = await fallback?.invoke({
      id: "call-1",
      name: "greet",
      args: { name: "x" },
      type: "tool_call",
    })
    expect(message?.content).toBe("Hello, x!")
    expect(fx.launchesOf("outside:call-1")).toHaveLength(1)
  })

  it("a call cancelled while the model waits ends as a cancelled result", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const key = `${threadId}:call-1`
    const graph = agent(await mcpTools(client, { server: "fake" }), oneCall("slow_compute", { seconds: 60 }))
    const running = graph.invoke(
      { messages: [{ role: "user", content: "go" }] },
      { configurable: { thread_id: threadId } },
    )
    await expect.poll(async () => (await client.get(key).catch(() => undefined))?.status).toBe("working")
    await client.cancel(key)
    const result = await running
    expect(toolMessages(result.messages)[0]?.artifact).toMatchObject({ status: "cancelled", handle: key })
    expect(fx.taskOf(key)?.cancels).toHaveLength(1)
  })
})

describe("an aborted run", () => {
  it("hands the call off: the task runs on, and the resumed graph attaches to it", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const config = { configurable: { thread_id: threadId } }
    const key = `${threadId}:call-1`
    const graph = agent(
      await mcpTools(client, { server: "fake" }),
      oneCall("slow_compute", { seconds: 1.5, label: "x" }),
    )
    const stop = new AbortController()
    const running = graph.invoke(
      { messages: [{ role: "user", content: "go" }] },
      { ...config, signal: stop.signal },
    )
    await expect.poll(async () => (await client.get(key).catch(() => undefined))?.status).toBe("working")
    stop.abort()
    await expect(running).rejects.toThrow()
    // Not cancelled: the task completes on the server.
    expect((await client.settle(key))._tag).toBe("Completed")
    expect(fx.taskOf(key)?.cancels).toEqual([])
    // The graph resumed from its checkpoint re-executes the tool call, which picks the result up.
    const resumed = await graph.invoke(null, config)
    expect(resumed.messages.at(-1)?.content).toBe("final: Computed x after 1.5s")
    expect(fx.launchesOf(key)).toHaveLength(1)
  })

  it("outside a graph too: the invocation is aborted, the call runs on, the same ToolCall picks it up", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const key = `${threadId}:call-1`
    const [slow] = await mcpTools(client, { server: "fake", tools: ["slow_compute"], threadId })
    const call = { id: "call-1", name: "slow_compute", args: { seconds: 1 }, type: "tool_call" as const }
    const stop = new AbortController()
    const running = slow?.invoke(call, { signal: stop.signal })
    await expect.poll(async () => (await client.get(key).catch(() => undefined))?.status).toBe("working")
    stop.abort()
    // LangChain races the invocation against its signal: it rejects at once.
    await expect(running).rejects.toMatchObject({ name: "AbortError" })
    expect((await client.settle(key))._tag).toBe("Completed")
    expect(fx.taskOf(key)?.cancels).toEqual([])
    const again = await slow?.invoke(call)
    expect(again?.content).toBe("Computed result after 1s")
    expect(fx.launchesOf(key)).toHaveLength(1)
  })

  it("cancels the call when onAbort is cancel", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const key = `${threadId}:call-1`
    const [slow] = await mcpTools(client, {
      server: "fake",
      tools: ["slow_compute"],
      threadId,
      onAbort: "cancel",
    })
    const stop = new AbortController()
    const running = slow?.invoke(
      { id: "call-1", name: "slow_compute", args: { seconds: 30 }, type: "tool_call" },
      { signal: stop.signal },
    )
    await expect.poll(async () => (await client.get(key).catch(() => undefined))?.status).toBe("working")
    stop.abort()
    await running?.catch(() => undefined)
    await expect.poll(async () => (await client.get(key)).status).toBe("cancelled")
    expect(fx.taskOf(key)?.cancels).toHaveLength(1)
  })
})

describe("an in-doubt call", () => {
  const flaky = setup({
    tools: [{ name: "flaky_send", shape: "task", durationMs: 200, pollIntervalMs: 50 }],
    // The answer to the first call is lost after the server launched it.
    faults: [{ when: { method: "tools/call", tool: "flaky_send", nth: 1 }, fault: { kind: "drop" } }],
  })

  it("is a plain sentence the model reads, never sent again", async () => {
    await using client = await flaky.open()
    const threadId = thread()
    const key = `${threadId}:call-1`
    const result = await agent(await mcpTools(client, { server: "fake" }), oneCall("flaky_send")).invoke(
      { messages: [{ role: "user", content: "go" }] },
      { configurable: { thread_id: threadId } },
    )
    expect(toolMessages(result.messages)[0]?.artifact).toMatchObject({ status: "in_doubt", handle: key })
    expect(result.messages.at(-1)?.content).toContain("may or may not have run")
    expect(flaky.launchesOf(key)).toHaveLength(1)
  })
})
