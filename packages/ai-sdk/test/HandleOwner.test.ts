/**
 * The conversation is a handle's whole first part: conversation `a` never checks or waits on a
 * call of conversation `a:b` (their ids share a prefix, not an owner), while a key derived before
 * the conversation id was escaped still resolves for its own conversation.
 */
import { describe, expect, it } from "vitest"
import { CallKey, mcpTools } from "../src/index.js"
import { callOnce, conversation, setup } from "./support.js"

const fx = setup({ tools: [{ name: "long_report", shape: "task", durationMs: 60_000, pollIntervalMs: 100 }] })

describe("a handle belongs to its whole conversation id", () => {
  it("conversation a cannot check a call of conversation a:b", async () => {
    await using client = await fx.open()
    const mine = conversation()
    const theirs = `${mine}:b`
    const their = await callOnce(
      await mcpTools(client, { server: "fake", conversationId: theirs, mode: "handle" }),
      {
        toolName: "long_report",
        toolCallId: "call-9",
      },
    )
    const handle =
      (their.steps[0]?.toolResults[0]?.output as { handle?: string } | undefined)?.handle ?? "none"
    expect(CallKey.belongsTo(theirs, handle)).toBe(true)
    const tools = await mcpTools(client, { server: "fake", conversationId: mine, mode: "handle" })
    // Their handle as they got it, and the same ids joined as they are.
    for (const asked of [handle, `${theirs}:call-9`]) {
      expect(CallKey.belongsTo(mine, asked)).toBe(false)
      const refused = await callOnce(tools, { toolName: "check_call", input: { handle: asked } })
      expect(refused.text).toContain("No call has the handle")
    }
  })

  it("a call recorded under the key an older version derived is attached to, and its own", async () => {
    await using client = await fx.open()
    const conversationId = `${conversation()}:chat`
    const legacy = `${conversationId}:call-1`
    // Recorded as the adapter derived keys before it escaped a ':' in the conversation id.
    await client.callTool("fake", "long_report", {}, { key: legacy })
    const tools = await mcpTools(client, { server: "fake", conversationId, mode: "handle" })
    const again = await callOnce(tools, { toolName: "long_report", toolCallId: "call-1" })
    expect(again.steps[0]?.toolResults[0]?.output).toMatchObject({ handle: legacy })
    expect(
      fx.server.ledger.launches.filter((launch) => launch.idempotencyKey?.startsWith(conversationId)),
    ).toHaveLength(1)
    expect(CallKey.belongsTo(conversationId, legacy)).toBe(true)
    const checked = await callOnce(tools, { toolName: "check_call", input: { handle: legacy } })
    expect(checked.text).not.toContain("No call has the handle")
  })
})
