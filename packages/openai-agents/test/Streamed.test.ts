/**
 * A streamed run (`run(..., { stream: true })`, the SDK's own `ScriptedModel` streaming its
 * scripted responses) keys its calls as a non-streamed one does: the turn is counted from the
 * usage the streamed response reports before its tools run.
 */
import { Agent, run } from "@openai/agents-core"
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents-core/testing"
import { expect, it } from "vitest"
import { CallKey, durableMcpServer } from "../src/index.js"
import { runId, setup } from "./support.js"

const fx = setup()

it("a streamed run keys its calls by the same turns", async () => {
  await using client = await fx.open()
  const id = runId()
  const model = new ScriptedModel([
    [functionCall("greet", { name: "Ada" }, { callId: "call_a" })],
    [functionCall("greet", { name: "Ada" }, { callId: "call_b" })],
    [assistantMessage("done")],
  ])
  const agent = new Agent({
    name: "streamer",
    model,
    mcpServers: [durableMcpServer(client, { server: "fake", runId: id })],
  })
  const streamed = await run(agent, "Greet Ada twice", { stream: true })
  for await (const _ of streamed);
  await streamed.completed
  expect(streamed.finalOutput).toBe("done")
  const args = { name: "Ada" }
  for (const turn of [1, 2])
    expect(fx.launchesOf(CallKey.derive({ runId: id, turn, tool: "greet", args, ordinal: 1 }))).toHaveLength(
      1,
    )
})
