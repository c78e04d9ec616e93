/**
 * The companion tools of handle mode (core's `AgentTool` companions): the server lists them
 * beside its own tools and serves them in `callTool`, for handles of their own run only.
 */
import { AgentTool, type Json, type PromiseClient } from "@mcp-handles/core"
import type { MCPServer } from "@openai/agents-core"
import * as ToolOutput from "../ToolOutput.js"

type MCPTool = Awaited<ReturnType<MCPServer["listTools"]>>[number]

/** The companions as `listTools` gives them to the SDK. */
export const tools = (): Array<MCPTool> =>
  AgentTool.companionNames.map((name) => {
    const { description, inputSchema } = AgentTool.companions[name]
    return { name, description, inputSchema: inputSchema as MCPTool["inputSchema"] }
  })

/** @internal */
export interface Call {
  readonly client: PromiseClient.PromiseTaskClient
  readonly scope: string | undefined
  readonly tool: AgentTool.CompanionName
  readonly args: Record<string, unknown>
  readonly owns: (handle: string) => boolean
  readonly signal: AbortSignal | undefined
  readonly onInput: ((request: PromiseClient.PromiseInputRequest) => Promise<Json.JsonInput>) | undefined
}

/**
 * Serves a companion call. Its input is decoded here (the SDK does not check it against the
 * schema); a bad input, a handle of another run or one nobody recorded is a refusal the model
 * reads.
 */
export const call = async (call: Call): Promise<ToolOutput.CallToolResult> => {
  const served = await AgentTool.serveCompanion(call.client, call.tool, call.args, {
    scope: call.scope,
    owns: call.owns,
    within: "run",
    signal: call.signal,
    onInput: call.onInput,
  })
  return served._tag === "Refused" ? ToolOutput.refused(served.message) : ToolOutput.fromOutput(served.output)
}
