/**
 * A run that failed mid-turn and is retried from its state (the SDK's way: `run(agent, state)`
 * again) asks the model again, and the model makes the same call again with a new tool-call id,
 * one model request later by the run's usage. It attaches to the call the failed attempt
 * launched (still running, recorded) instead of launching it a second time.
 */
import { randomUUID } from "node:crypto"
import { Agent, run, tool } from "@openai/agents-core"
import { expect, it } from "vitest"
import { durableMcpServer } from "../src/index.js"
import { runId, type Script, ScriptedModel, setup } from "./support.js"

const fx = setup()

/** A tool beside the MCP call that fails the run once (its error is not the model's to read). */
const failingOnce = () => {
  let failed = false
  return tool({
    name: "notify",
    description: "Sends a notification.",
    parameters: { type: "object", properties: {}, required: [], additionalProperties: false },
    strict: true,
    errorFunction: null,
    execute: async () => {
      if (failed) return "sent"
      failed = true
      throw new Error("notification service down")
    },
  })
}

it("a run retried after it failed mid-call attaches to the call it launched (one launch)", async () => {
  await using client = await fx.open()
  const id = runId()
  const args = { seconds: 1, label: `retried-${id}` }
  // Each model request makes the same two calls with fresh tool-call ids, as a real model does.
  const script: Script = (read) =>
    read === undefined
      ? [
          { name: "slow_compute", args, callId: `call_${randomUUID()}` },
          { name: "notify", args: {}, callId: `call_${randomUUID()}` },
        ]
      : undefined
  const agent = new Agent({
    name: "retrier",
    model: new ScriptedModel(script),
    tools: [failingOnce()],
    mcpServers: [durableMcpServer(client, { server: "fake", runId: id })],
  })
  const launches = () => fx.server.ledger.launches.filter((launch) => launch.arguments.label === args.label)
  const first = await run(agent, "Compute and notify").catch((error: unknown) => error)
  expect(String(first)).toContain("notification service down")
  const state = (first as { state: Parameters<typeof run>[1] }).state
  await expect.poll(() => launches().length, { timeout: 10_000 }).toBe(1)
  const result = await run(agent, state as never)
  expect(result.finalOutput).toBe(`final: Computed ${args.label} after 1s | sent`)
  expect(launches()).toHaveLength(1)
})
