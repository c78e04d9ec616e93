/**
 * What the agent adapters share (`AgentTool`), against the fake server in process: a completed
 * output holds no task id whole; a launch given up on goes on; `settle` answers questions once,
 * in order, stops on its signal, and reports questions nobody here answers; the companions let
 * in only their owner's recorded handles and wait no longer than asked.
 */
import { AgentTool, openTaskClient, Redaction } from "@mcp-handles/core"
import type * as Outcome from "@mcp-handles/core/Outcome"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { MemoryStore } from "@mcp-handles/store-memory"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"

const server = FakeServer.unsafeMake({
  tools: [
    { name: "greet", shape: "direct", outcome: { kind: "result", text: "hi" } },
    { name: "long", shape: "task", durationMs: 60_000, pollIntervalMs: 100 },
    {
      name: "two_questions",
      shape: "task",
      durationMs: 400,
      pollIntervalMs: 50,
      inputSteps: [
        {
          atMs: 50,
          requests: {
            b_color: { method: "elicitation/create", params: { message: "Color?" } },
            a_name: { method: "elicitation/create", params: { message: "Name?" } },
          },
        },
      ],
      outcome: { kind: "result", text: "{{inputs.a_name.content.v}} likes {{inputs.b_color.content.v}}" },
    },
  ],
})
const open = () =>
  openTaskClient({
    store: MemoryStore.layer,
    servers: [{ name: "fake", url: "http://fake.test/mcp" }],
    http: { fetch: (input, init) => server.handler(new Request(input, init)) },
    polling: { minIntervalMs: 50 },
  })
let keys = 0
const fresh = (owner = "conv") => `${owner}:${process.pid}-${++keys}`
const taskOf = (key: string) => server.ledger.tasks.find((task) => task.idempotencyKey === key)
const related = (taskId: string) => ({ [Redaction.relatedTaskMeta]: { taskId } })

describe("ToolOutput", () => {
  it("shortens a related-task reference however deep the server nested it, and keeps the rest", () => {
    // A `_meta` under any path of the structured content: the output is kept in the app's messages.
    const nested = (path: ReadonlyArray<string>, leaf: object): object =>
      path.reduceRight<object>((inner, key) => ({ [key]: inner }), leaf)
    fc.assert(
      fc.property(
        fc.string({ minLength: 9, maxLength: 40 }).filter((id) => !id.includes("…")),
        fc.array(fc.constantFrom("a", "items", "0", "_meta"), { maxLength: 4 }),
        fc.string(),
        (taskId, path, text) => {
          const result = {
            content: [{ type: "text", text }],
            structuredContent: nested(path, { _meta: related(taskId), text }),
          }
          const output = AgentTool.fromOutcome({
            _tag: "Completed",
            key: "k",
            result,
          } as unknown as Outcome.Outcome)
          const seen = JSON.stringify(output)
          expect(seen).toContain(JSON.stringify(Redaction.taskId(taskId)))
          expect(seen.includes(JSON.stringify(taskId))).toBe(false)
          expect(output).toMatchObject({ status: "completed", handle: "k", result: { content: [{ text }] } })
          expect(AgentTool.rests(output)).toBe(true)
        },
      ),
    )
  })

  it("says what happened to a call that rests without a result", () => {
    const of = (outcome: object) => AgentTool.fromOutcome(outcome as Outcome.Outcome)
    expect(of({ _tag: "InDoubt", key: "k", reason: null })).toMatchObject({
      status: "in_doubt",
      message: expect.stringContaining("ask the user before calling the tool again"),
    })
    expect(of({ _tag: "Cancelled", key: "k", reason: "by user" })).toEqual({
      status: "cancelled",
      handle: "k",
      message: "The call was cancelled (by user).",
    })
    expect(AgentTool.failedText({ code: -32603, message: "boom" })).toBe(
      "The tool call failed: boom (JSON-RPC error -32603).",
    )
    expect(AgentTool.errorText([])).toBe("The tool reported an error.")
    expect(
      AgentTool.errorText([
        { type: "text", text: "no" },
        { type: "image", data: "x" },
      ]),
    ).toBe('no\n{"type":"image","data":"x"}')
  })
})

describe("one call", () => {
  it("launch: a direct answer rests at once; a task does not", async () => {
    await using client = await open()
    const direct = await AgentTool.launch(client, { server: "fake" }, "greet", {}, fresh(), undefined)
    expect(direct).toEqual({ _tag: "Launched", rests: true })
    const key = fresh()
    const task = await AgentTool.launch(client, { server: "fake" }, "long", {}, key, undefined)
    expect(task).toEqual({ _tag: "Launched", rests: false })
    expect(await AgentTool.current(client, key, undefined, "later")).toMatchObject({
      status: "working",
      handle: key,
    })
    await client.cancel(key)
  })

  it("launch given up on by an abort: the call is recorded and goes on, never cancelled", async () => {
    await using client = await open()
    const key = fresh()
    const stop = new AbortController()
    stop.abort()
    const launched = await AgentTool.launch(client, { server: "fake" }, "long", {}, key, stop.signal)
    expect(launched._tag).toBe("Aborted")
    if (launched._tag === "Aborted") await launched.calling
    expect((await client.get(key)).status).toBe("working")
    expect(taskOf(key)?.cancels).toEqual([])
    // Asked to: cancelled on the server, once.
    const output = await AgentTool.cancelled(client, key, undefined)
    expect(["working", "cancelled"]).toContain(output.status)
    await expect.poll(async () => (await client.get(key)).status).toBe("cancelled")
    expect(taskOf(key)?.cancels).toHaveLength(1)
  })

  it("current: a key not recorded yet is pending", async () => {
    await using client = await open()
    expect(await AgentTool.current(client, fresh(), undefined, "wait")).toEqual({
      status: "pending",
      handle: expect.any(String),
      message: "wait",
    })
  })

  it("settle answers each question once, in inputKey order, and rests", async () => {
    await using client = await open()
    const key = fresh()
    await client.callTool("fake", "two_questions", {}, { key })
    const asked: Array<string> = []
    const settled = await AgentTool.settle(client, key, {
      scope: undefined,
      tool: "two_questions",
      onInput: async (request) => {
        asked.push(request.inputKey)
        return { action: "accept", content: { v: request.inputKey === "a_name" ? "Ada" : "teal" } }
      },
    })
    expect(asked).toEqual(["a_name", "b_color"])
    expect(settled).toMatchObject({
      _tag: "Rested",
      output: { status: "completed", result: { content: [{ text: "Ada likes teal" }] } },
    })
    // Each sent once, in one tasks/update or two.
    expect(
      taskOf(key)
        ?.updates.flatMap((update) => update.keys)
        .sort(),
    ).toEqual(["a_name", "b_color"])
  })

  it("settle without a handler reports the questions; with a signal it stops, and the call runs on", async () => {
    await using client = await open()
    const asking = fresh()
    await client.callTool("fake", "two_questions", {}, { key: asking })
    const settled = await AgentTool.settle(client, asking, { scope: undefined, tool: "two_questions" })
    expect(settled._tag).toBe("Asked")
    if (settled._tag === "Asked")
      expect(settled.requests.map((open) => open.inputKey)).toEqual(["a_name", "b_color"])
    const said = await AgentTool.current(client, asking, undefined, "Answer it.")
    expect(said).toMatchObject({ status: "input_required", message: expect.stringContaining("Name?") })

    const running = fresh()
    await client.callTool("fake", "long", {}, { key: running })
    const stop = new AbortController()
    const waiting = AgentTool.settle(client, running, { scope: undefined, tool: "long", signal: stop.signal })
    stop.abort()
    expect(await waiting).toEqual({ _tag: "Stopped" })
    expect((await client.get(running)).status).toBe("working")
    await client.cancel(running)
  })
})

describe("companions", () => {
  it("decode the model's input at the boundary", () => {
    expect(Either.isRight(AgentTool.decodeCompanionInput("check_call", { handle: "h" }))).toBe(true)
    expect(Either.isLeft(AgentTool.decodeCompanionInput("check_call", { handle: "" }))).toBe(true)
    const tooLong = AgentTool.decodeCompanionInput("wait_for_call", {
      handle: "h",
      seconds: AgentTool.maxWaitSeconds + 1,
    })
    expect(Either.isLeft(tooLong)).toBe(true)
    expect(AgentTool.companions.wait_for_call.inputSchema.properties.seconds).toMatchObject({
      maximum: AgentTool.maxWaitSeconds,
    })
  })

  it("let in only their owner's recorded handles", async () => {
    await using client = await open()
    const key = fresh("mine")
    await client.callTool("fake", "greet", {}, { key })
    const where = {
      scope: undefined,
      owns: (handle: string) => AgentTool.belongsTo("mine", handle),
      within: "run",
    }
    expect(await AgentTool.admit(client, "check_call", { handle: key }, where)).toMatchObject({
      _tag: "Admitted",
      tool: "greet",
    })
    const theirs = await AgentTool.admit(client, "check_call", { handle: fresh("theirs") }, where)
    expect(theirs).toMatchObject({ _tag: "Refused", message: expect.stringContaining("in this run") })
    const unrecorded = await AgentTool.admit(client, "check_call", { handle: fresh("mine") }, where)
    expect(unrecorded._tag).toBe("Refused")
    const served = await AgentTool.serveCompanion(
      client,
      "check_call",
      { handle: key },
      {
        ...where,
        signal: undefined,
        onInput: undefined,
      },
    )
    expect(served).toMatchObject({ _tag: "Output", output: { status: "completed", handle: key } })
  })

  it("wait_for_call waits no longer than asked, and the call runs on", async () => {
    await using client = await open()
    const key = fresh()
    await client.callTool("fake", "long", {}, { key })
    const served = await AgentTool.serveCompanion(
      client,
      "wait_for_call",
      { handle: key, seconds: 1 },
      {
        scope: undefined,
        owns: () => true,
        within: "conversation",
        signal: undefined,
        onInput: undefined,
      },
    )
    expect(served).toMatchObject({
      _tag: "Output",
      output: { status: "working", message: expect.stringContaining(AgentTool.waitAgain) },
    })
    expect(taskOf(key)?.cancels).toEqual([])
    await client.cancel(key)
  })

  it("a server tool named like a companion is a typed error", () => {
    expect(() => AgentTool.checkCompanionNames("s", ["greet", "wait_for_call"])).toThrow(
      expect.objectContaining({ _tag: "CompanionNameTaken", tool: "wait_for_call" }),
    )
    expect(() => AgentTool.checkCompanionNames("s", ["greet"])).not.toThrow()
  })

  it("a handle belongs to its whole owner: never to an owner its id merely starts with", () => {
    // The ids of one owner can be another's prefix: `a` and `a:b`.
    expect(AgentTool.belongsTo("a", AgentTool.keyOf("a:b", ["call-1"]))).toBe(false)
    expect(AgentTool.belongsTo("a", "a:b:call-1")).toBe(false)
    // A key derived before the owner was escaped is still its owner's; a plain id's key is as it was.
    expect(AgentTool.belongsTo("a:b", "a:b:call-1")).toBe(true)
    expect(AgentTool.keyOf("conv-1", ["call-1"])).toBe("conv-1:call-1")
    const part = fc.string({ minLength: 1 })
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.array(part, { minLength: 1, maxLength: 4 }),
        (owner, other, parts) => {
          const key = AgentTool.keyOf(owner, parts)
          expect(AgentTool.belongsTo(owner, key, parts.length)).toBe(true)
          if (other !== owner) expect(AgentTool.belongsTo(other, key, parts.length)).toBe(false)
          expect(AgentTool.belongsTo(owner, `${AgentTool.keyOf(owner, [])}:`, parts.length)).toBe(false)
        },
      ),
    )
  })
})
