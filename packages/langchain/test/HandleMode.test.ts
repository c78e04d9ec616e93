/**
 * Handle mode in LangGraph's own agent loop: a tool returns a handle at once, and the companion
 * tools `check_call` / `wait_for_call` look again, only at calls of their own thread. The server
 * runs on a manual clock, so "still working" and "done" are where the test puts the clock, not
 * how fast the machine is.
 */
import { openTaskClient } from "@mcp-handles/core"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as Profile from "@mcp-handles/fake-server/Profile"
import * as ServerClock from "@mcp-handles/fake-server/ServerClock"
import { MemoryStore } from "@mcp-handles/store-memory"
import { describe, expect, it } from "vitest"
import { mcpTools, type ToolOutput } from "../src/index.js"
import { agent, interruptsOf, setup, thread, toolMessages } from "./support.js"

const clock = ServerClock.manual(Date.now())
const server = FakeServer.unsafeMake(
  {
    tools: [
      {
        name: "deep_report",
        shape: "task",
        durationMs: 60_000,
        pollIntervalMs: 50,
        outcome: { kind: "result", text: "a report on {{args.topic}}" },
      },
    ],
  },
  { clock, sleep: clock.sleep },
)
const open = () =>
  openTaskClient({
    store: MemoryStore.layer,
    servers: [{ name: "fake", url: "http://fake.test/mcp" }],
    http: { fetch: (request, init) => server.handler(new Request(request, init)) },
    polling: { minIntervalMs: 50 },
  })
const launchesOf = (key: string) => server.ledger.launches.filter((launch) => launch.idempotencyKey === key)

const handleOf = (message: { readonly artifact?: unknown } | undefined) =>
  (message?.artifact as ToolOutput.ToolOutput | undefined)?.handle ?? "none"

describe("handle mode in a LangGraph agent", () => {
  it("returns a handle at once; check_call sees it working, wait_for_call gets the result", async () => {
    await using client = await open()
    const threadId = thread()
    const key = `${threadId}:call-1`
    const tools = await mcpTools(client, { server: "fake", mode: "handle" })
    expect(tools.map((tool) => tool.name)).toEqual(["deep_report", "check_call", "wait_for_call"])
    const graph = agent(tools, (read, step) => {
      if (step === 0) return [{ name: "deep_report", args: { topic: "tides" }, id: "call-1" }]
      const handle = handleOf(read)
      if (step === 1) return [{ name: "check_call", args: { handle }, id: "check-1" }]
      if (step === 2) {
        // The work is done on the server's clock only now, after the model looked once.
        clock.advance(61_000)
        return [{ name: "wait_for_call", args: { handle, seconds: 30 }, id: "wait-1" }]
      }
      if (step === 3) return [{ name: "check_call", args: { handle }, id: "check-2" }]
      return undefined
    })
    const result = await graph.invoke(
      { messages: [{ role: "user", content: "Research tides" }] },
      { configurable: { thread_id: threadId } },
    )
    const [started, checked, waited, checkedAgain] = toolMessages(result.messages).map(
      (message) => message.artifact,
    )
    expect(started).toMatchObject({ status: "working", handle: key })
    expect(checked).toMatchObject({ status: "working", handle: key })
    expect(waited).toMatchObject({ status: "completed", handle: key })
    expect(checkedAgain).toMatchObject({ status: "completed", handle: key })
    expect(result.messages.at(-1)?.content).toBe("final: a report on tides")
    // The handle is the key: the server's task id never reaches the model.
    const taskId = (await client.get(key)).taskId
    expect(taskId).not.toBeNull()
    expect(JSON.stringify(result.messages)).not.toContain(taskId as string)
    expect(launchesOf(key)).toHaveLength(1)
  })

  it("refuses a handle of another thread, and one nobody recorded", async () => {
    await using client = await open()
    const other = thread()
    const tools = await mcpTools(client, { server: "fake", mode: "handle" })
    const started = await agent(tools, (_, step) =>
      step === 0 ? [{ name: "deep_report", args: { topic: "theirs" }, id: "call-9" }] : undefined,
    ).invoke({ messages: [{ role: "user", content: "go" }] }, { configurable: { thread_id: other } })
    const theirs = handleOf(toolMessages(started.messages)[0])
    expect(theirs).toBe(`${other}:call-9`)
    const mine = thread()
    const refused = await agent(tools, (_, step) =>
      step === 0
        ? [
            { name: "check_call", args: { handle: theirs }, id: "check-1" },
            { name: "wait_for_call", args: { handle: theirs, seconds: 1 }, id: "wait-1" },
            { name: "check_call", args: { handle: `${mine}:never` }, id: "check-2" },
          ]
        : undefined,
    ).invoke({ messages: [{ role: "user", content: "go" }] }, { configurable: { thread_id: mine } })
    const answers = toolMessages(refused.messages)
    expect(answers.map((message) => [message.status, message.content])).toEqual([
      ["error", `No call has the handle ${JSON.stringify(theirs)} in this thread.`],
      ["error", `No call has the handle ${JSON.stringify(theirs)} in this thread.`],
      ["error", `No call has the handle ${JSON.stringify(`${mine}:never`)} in this thread.`],
    ])
    expect(answers.every((message) => message.artifact === undefined)).toBe(true)
  })

  it("thread a refuses the calls of thread a:b: the thread is a handle's whole first part", async () => {
    await using client = await open()
    const mine = thread()
    const theirs = `${mine}:b`
    const tools = await mcpTools(client, { server: "fake", mode: "handle" })
    const started = await agent(tools, (_, step) =>
      step === 0 ? [{ name: "deep_report", args: { topic: "theirs" }, id: "call-9" }] : undefined,
    ).invoke({ messages: [{ role: "user", content: "go" }] }, { configurable: { thread_id: theirs } })
    const handle = handleOf(toolMessages(started.messages)[0])
    // Their handle as they got it, and the same ids joined as they are.
    const asked = [handle, `${theirs}:call-9`]
    const refused = await agent(tools, (_, step) =>
      step === 0
        ? asked.map((one, at) => ({ name: "check_call", args: { handle: one }, id: `check-${at}` }))
        : undefined,
    ).invoke({ messages: [{ role: "user", content: "go" }] }, { configurable: { thread_id: mine } })
    expect(toolMessages(refused.messages).map((message) => [message.status, message.content])).toEqual(
      asked.map((one) => ["error", `No call has the handle ${JSON.stringify(one)} in this thread.`]),
    )
  })

  it("refuses to shadow a server tool named like a companion, with a typed error", async () => {
    const clash = setup({ tools: [{ name: "check_call", shape: "direct" }] })
    await using client = await clash.open()
    await expect(mcpTools(client, { server: "fake", mode: "handle" })).rejects.toMatchObject({
      _tag: "CompanionNameTaken",
      tool: "check_call",
    })
    const without = await mcpTools(client, { server: "fake", mode: "handle", tools: [] })
    expect(without.map((tool) => tool.name)).toEqual(["check_call", "wait_for_call"])
  })
})

describe("a question in handle mode", () => {
  const fx = setup(Profile.conformance)

  it("is reported by wait_for_call with the question, not an interrupt; answered, the call completes", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const key = `${threadId}:call-1`
    const config = { configurable: { thread_id: threadId } }
    const tools = await mcpTools(client, { server: "fake", mode: "handle" })
    const script = (read: Parameters<Parameters<typeof agent>[1]>[0], step: number) => {
      if (step === 0) return [{ name: "confirm_delete", args: { filename: "notes.txt" }, id: "call-1" }]
      if (step === 1)
        return [{ name: "wait_for_call", args: { handle: handleOf(read), seconds: 30 }, id: "w1" }]
      return undefined
    }
    const asked = await agent(tools, script).invoke(
      { messages: [{ role: "user", content: "Delete notes.txt" }] },
      config,
    )
    expect(interruptsOf(asked)).toEqual([])
    const waited = toolMessages(asked.messages)[1]
    expect(waited?.artifact).toMatchObject({ status: "input_required", handle: key })
    expect(waited?.content).toContain("Delete notes.txt?")
    // The app answers under the handle (as the CLI would); the next wait gets the result.
    await client.answer(key, "confirm", { action: "accept", content: { confirm: true } })
    const done = await agent(tools, (_, step) =>
      step === 0 ? [{ name: "wait_for_call", args: { handle: key, seconds: 30 }, id: "w2" }] : undefined,
    ).invoke(
      { messages: [{ role: "user", content: "Is it done?" }] },
      { configurable: { thread_id: threadId } },
    )
    expect(done.messages.at(-1)?.content).toBe("final: Deleted notes.txt")
    expect(fx.launchesOf(key)).toHaveLength(1)
    expect(fx.taskOf(key)?.updates).toHaveLength(1)
  })

  it("is answered by onInput while wait_for_call waits, once", async () => {
    await using client = await fx.open()
    const threadId = thread()
    const key = `${threadId}:call-1`
    const asked: Array<{ readonly threadId: string; readonly inputKey: string }> = []
    const tools = await mcpTools(client, {
      server: "fake",
      mode: "handle",
      tools: ["confirm_delete"],
      onInput: async (request) => {
        asked.push({ threadId: request.threadId, inputKey: request.inputKey })
        return { action: "accept", content: { confirm: true } }
      },
    })
    const result = await agent(tools, (read, step) => {
      if (step === 0) return [{ name: "confirm_delete", args: { filename: "notes.txt" }, id: "call-1" }]
      if (step === 1)
        return [{ name: "wait_for_call", args: { handle: handleOf(read), seconds: 30 }, id: "w1" }]
      return undefined
    }).invoke(
      { messages: [{ role: "user", content: "Delete notes.txt" }] },
      { configurable: { thread_id: threadId } },
    )
    expect(result.messages.at(-1)?.content).toBe("final: Deleted notes.txt")
    expect(asked).toEqual([{ threadId, inputKey: "confirm" }])
    expect(fx.taskOf(key)?.updates).toHaveLength(1)
  })
})
