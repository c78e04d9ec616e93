/**
 * Handle mode in the SDK's own agent loop: a tool call returns a handle at once, and the
 * companion tools the durable server lists (`check_call`, `wait_for_call`) look again, only at
 * calls of their own run. The server runs on a manual clock, so "still working" and "done" are
 * where the test puts the clock, not how fast the machine is.
 */
import { openTaskClient } from "@mcp-handles/core"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as ServerClock from "@mcp-handles/fake-server/ServerClock"
import { MemoryStore } from "@mcp-handles/store-memory"
import { run } from "@openai/agents-core"
import { describe, expect, it } from "vitest"
import { CallKey, durableMcpServer } from "../src/index.js"
import { agent, runId, type Script, setup } from "./support.js"

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
// The SDK caches an MCP server's tools by its name across runs: this server's tools are not
// those of the shipped profile's, so it gets a name of its own.
const clocked = { server: "fake", name: "clocked", mode: "handle" } as const

/** What the model read, as JSON: the handle mode's `{ status, handle, message }`. */
const parsed = (read: string | undefined) =>
  JSON.parse(read ?? "{}") as {
    readonly status?: string
    readonly handle?: string
    readonly message?: string
  }

describe("handle mode in the SDK's agent loop", () => {
  it("returns a handle at once; check_call sees it working, wait_for_call gets the result", async () => {
    await using client = await open()
    const id = runId()
    const key = CallKey.derive({
      runId: id,
      turn: 1,
      tool: "deep_report",
      args: { topic: "tides" },
      ordinal: 1,
    })
    const durable = durableMcpServer(client, { ...clocked, runId: id })
    expect((await durable.listTools()).map((tool) => tool.name)).toEqual([
      "deep_report",
      "check_call",
      "wait_for_call",
    ])
    const reads: Array<string | undefined> = []
    let handle = ""
    const script: Script = (read, step) => {
      if (step > 0) reads.push(read)
      if (step === 0) return [{ name: "deep_report", args: { topic: "tides" } }]
      if (step === 1) handle = parsed(read).handle ?? "none"
      if (step === 1) return [{ name: "check_call", args: { handle } }]
      if (step === 2) {
        // The work is done on the server's clock only now, after the model looked once.
        clock.advance(61_000)
        return [{ name: "wait_for_call", args: { handle, seconds: 30 } }]
      }
      if (step === 3) return [{ name: "check_call", args: { handle } }]
      return undefined
    }
    const result = await run(agent(script, [durable]), "Research tides", { maxTurns: 10 })
    expect(handle).toBe(key)
    expect(reads.slice(0, 2).map(parsed)).toMatchObject([
      { status: "working", handle: key },
      { status: "working", handle: key },
    ])
    // wait_for_call and the last check_call read the result itself.
    expect(reads.slice(2)).toEqual(["a report on tides", "a report on tides"])
    expect(result.finalOutput).toBe("final: a report on tides")
    const taskId = (await client.get(key)).taskId
    expect(taskId).not.toBeNull()
    expect(JSON.stringify(result.history)).not.toContain(taskId as string)
    expect(launchesOf(key)).toHaveLength(1)
  })

  it("refuses a handle of another run, and one nobody recorded", async () => {
    await using client = await open()
    const other = runId()
    let theirs = ""
    await run(
      agent(
        (read, step) => {
          if (step === 1) theirs = parsed(read).handle ?? "none"
          return step === 0 ? [{ name: "deep_report", args: { topic: "theirs" } }] : undefined
        },
        [durableMcpServer(client, { ...clocked, runId: other })],
      ),
      "go",
    )
    expect(CallKey.belongsTo(other, theirs)).toBe(true)
    const mine = runId()
    let read: string | undefined
    await run(
      agent(
        (last, step) => {
          read = last
          return step === 0
            ? [
                { name: "check_call", args: { handle: theirs } },
                { name: "wait_for_call", args: { handle: theirs, seconds: 1 } },
                { name: "check_call", args: { handle: `${mine}:never` } },
              ]
            : undefined
        },
        [durableMcpServer(client, { ...clocked, runId: mine })],
      ),
      "go",
    )
    const refusal = (handle: string) => `No call has the handle ${JSON.stringify(handle)} in this run.`
    expect(read).toBe([refusal(theirs), refusal(theirs), refusal(`${mine}:never`)].join(" | "))
  })

  it("run a refuses the calls of run a:b: the run is a handle's whole first part", async () => {
    await using client = await open()
    const mine = runId()
    const theirs = `${mine}:b`
    let handle = ""
    await run(
      agent(
        (read, step) => {
          if (step === 1) handle = parsed(read).handle ?? "none"
          return step === 0 ? [{ name: "deep_report", args: { topic: "theirs" } }] : undefined
        },
        [durableMcpServer(client, { ...clocked, runId: theirs })],
      ),
      "go",
    )
    expect(CallKey.belongsTo(theirs, handle)).toBe(true)
    // Their handle as they got it, and the same parts joined as they are.
    const asked = [handle, `${theirs}:1:deep_report:1:${CallKey.hashArgs({ topic: "theirs" })}`]
    let read: string | undefined
    await run(
      agent(
        (last, step) => {
          read = last
          return step === 0 ? asked.map((one) => ({ name: "check_call", args: { handle: one } })) : undefined
        },
        [durableMcpServer(client, { ...clocked, runId: mine })],
      ),
      "go",
    )
    const refusal = (one: string) => `No call has the handle ${JSON.stringify(one)} in this run.`
    expect(read).toBe(asked.map(refusal).join(" | "))
  })

  it("refuses to list a server tool named like a companion, with a typed error", async () => {
    const clash = setup({ tools: [{ name: "wait_for_call", shape: "direct" }] })
    await using client = await clash.open()
    await expect(
      durableMcpServer(client, { server: "fake", runId: "r", mode: "handle" }).listTools(),
    ).rejects.toMatchObject({ _tag: "CompanionNameTaken", tool: "wait_for_call" })
    const plain = await durableMcpServer(client, { server: "fake", runId: "r" }).listTools()
    expect(plain.map((tool) => tool.name)).toEqual(["wait_for_call"])
  })
})

describe("a question in handle mode", () => {
  const fx = setup()

  it("is reported by wait_for_call with the question; answered, the call completes", async () => {
    await using client = await fx.open()
    const id = runId()
    const args = { filename: "notes.txt" }
    const key = CallKey.derive({ runId: id, turn: 1, tool: "confirm_delete", args, ordinal: 1 })
    const durable = durableMcpServer(client, { server: "fake", runId: id, mode: "handle" })
    const waitOnce: Script = (read, step) => {
      if (step === 0) return [{ name: "confirm_delete", args }]
      if (step === 1) return [{ name: "wait_for_call", args: { handle: parsed(read).handle, seconds: 30 } }]
      return undefined
    }
    const asked = await run(agent(waitOnce, [durable]), "Delete notes.txt")
    const waited = parsed((asked.finalOutput ?? "").replace(/^final: /, ""))
    expect(waited).toMatchObject({ status: "input_required", handle: key })
    expect(waited.message).toContain("Delete notes.txt?")
    // The app answers under the handle (as the CLI would); the next wait gets the result.
    await client.answer(key, "confirm", { action: "accept", content: { confirm: true } })
    const done = await run(
      agent(
        (_, step) =>
          step === 0 ? [{ name: "wait_for_call", args: { handle: key, seconds: 30 } }] : undefined,
        [durable],
      ),
      "Is it done?",
    )
    expect(done.finalOutput).toBe("final: Deleted notes.txt")
    expect(fx.launchesOf(key)).toHaveLength(1)
  })

  it("is answered by onInput while wait_for_call waits, once", async () => {
    await using client = await fx.open()
    const id = runId()
    const asked: Array<unknown> = []
    const durable = durableMcpServer(client, {
      server: "fake",
      runId: id,
      mode: "handle",
      onInput: async (request) => {
        asked.push({ runId: request.runId, inputKey: request.inputKey, tool: request.tool })
        return { action: "accept", content: { confirm: true } }
      },
    })
    const result = await run(
      agent(
        (read, step) => {
          if (step === 0) return [{ name: "confirm_delete", args: { filename: "notes.txt" } }]
          if (step === 1)
            return [{ name: "wait_for_call", args: { handle: parsed(read).handle, seconds: 30 } }]
          return undefined
        },
        [durable],
      ),
      "Delete notes.txt",
    )
    expect(result.finalOutput).toBe("final: Deleted notes.txt")
    expect(asked).toEqual([{ runId: id, inputKey: "confirm", tool: "confirm_delete" }])
  })
})
