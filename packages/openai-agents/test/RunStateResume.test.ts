/**
 * A run resumed from its serialised `RunState` after its process died mid-call attaches to the
 * call it had started: the same turn, tool, ordinal and arguments derive the same key, so the
 * restarted process waits for the task already running instead of launching it again. The "kill"
 * here is in process (the run aborted, its client closed, the task left running on the server);
 * `Sigkill.test.ts` does it with real processes.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { openTaskClient } from "@mcp-handles/core"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import { Agent, RunState, run, tool } from "@openai/agents-core"
import { afterAll, expect, it } from "vitest"
import { CallKey, durableMcpServer } from "../src/index.js"
import { config, type Script, ScriptedModel } from "./support.js"

const server = FakeServer.unsafeMake(config)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openai-agents-runstate-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const open = () =>
  openTaskClient({
    store: SqliteStore.layer({ filename: path.join(dir, "tasks.db") }),
    servers: [{ name: "fake", url: "http://fake.test/mcp" }],
    http: { fetch: (request, init) => server.handler(new Request(request, init)) },
    polling: { minIntervalMs: 50 },
  })

// Long enough to be seen working on a loaded machine.
const args = { seconds: 3, label: "resumed" }
// The model asks the user first (a tool that needs approval: the run stops, its state is saved),
// then computes.
const script: Script = (_, step) =>
  step === 0 ? [{ name: "ask_user", args: {} }] : step === 1 ? [{ name: "slow_compute", args }] : undefined

/** The agent as each process builds it: the same definition, a client of its own. */
const agentOn = (client: Awaited<ReturnType<typeof open>>, steps: Script = script, id = "resume-1") =>
  new Agent({
    name: "resumer",
    model: new ScriptedModel(steps),
    tools: [
      tool({
        name: "ask_user",
        description: "Asks the user to go on.",
        parameters: { type: "object", properties: {}, required: [], additionalProperties: false },
        strict: true,
        needsApproval: true,
        execute: async () => "go on",
      }),
    ],
    mcpServers: [durableMcpServer(client, { server: "fake", runId: id })],
  })

it("a run resumed twice from the same RunState launches its MCP call once", async () => {
  // The first process runs until the approval: the state is what the app saves.
  let saved: string
  {
    await using client = await open()
    const result = await run(agentOn(client), "Compute after asking")
    expect(result.interruptions).toHaveLength(1)
    saved = result.state.toString()
  }
  // The second turn's call (the model's second request). Launches are counted by what they do,
  // whatever key they came with.
  const key = CallKey.derive({ runId: "resume-1", turn: 2, tool: "slow_compute", args, ordinal: 1 })
  const launches = () => server.ledger.launches.filter((launch) => launch.arguments.label === args.label)
  const working = async (client: Awaited<ReturnType<typeof open>>) =>
    (await client.list({ statuses: ["working"] })).records.length

  // A process resumes from the saved state, launches the call, and dies while it runs.
  {
    await using client = await open()
    const agent = agentOn(client)
    const state = await RunState.fromString(agent, saved)
    for (const interruption of state.getInterruptions()) state.approve(interruption)
    const stop = new AbortController()
    const running = run(agent, state, { signal: stop.signal })
    await expect.poll(() => working(client), { timeout: 10_000 }).toBe(1)
    stop.abort()
    await running.catch(() => undefined)
  }
  expect(launches()).toHaveLength(1)

  // The restarted process resumes from the same saved state: it attaches to the running task.
  await using client = await open()
  const agent = agentOn(client)
  const state = await RunState.fromString(agent, saved)
  for (const interruption of state.getInterruptions()) state.approve(interruption)
  const result = await run(agent, state)
  expect(result.finalOutput).toBe("final: Computed resumed after 3s")
  expect(launches()).toHaveLength(1)
  expect(launches()[0]?.idempotencyKey).toBe(key)
  expect(launches()[0]?.taskId).toBe((await client.get(key)).taskId)
})

it("a resumed run's call is not taken for an identical call of an earlier turn", async () => {
  // Greets Ada, asks the user (the state is saved there), then greets Ada again: the same tool,
  // the same arguments, the first of its turn both times.
  const greetTwice: Script = (_, step) =>
    step === 0 || step === 2
      ? [{ name: "greet", args: { name: "Ada" } }]
      : step === 1
        ? [{ name: "ask_user", args: {} }]
        : undefined
  let saved: string
  {
    await using client = await open()
    const result = await run(agentOn(client, greetTwice, "resume-2"), "Greet Ada twice")
    expect(result.interruptions).toHaveLength(1)
    saved = result.state.toString()
  }
  // Another process resumes: a new run context, whose ordinals start again at 1.
  await using client = await open()
  const agent = agentOn(client, greetTwice, "resume-2")
  const state = await RunState.fromString(agent, saved)
  for (const interruption of state.getInterruptions()) state.approve(interruption)
  const result = await run(agent, state)
  expect(result.finalOutput).toBe("final: Hello, Ada!")
  // Two greetings, two launches: the turn (carried in the state's usage) tells them apart.
  const greetings = server.ledger.launches.filter((launch) => launch.idempotencyKey?.startsWith("resume-2:"))
  expect(greetings.map((launch) => launch.idempotencyKey)).toEqual([
    CallKey.derive({ runId: "resume-2", turn: 1, tool: "greet", args: { name: "Ada" }, ordinal: 1 }),
    CallKey.derive({ runId: "resume-2", turn: 3, tool: "greet", args: { name: "Ada" }, ordinal: 1 }),
  ])
})
