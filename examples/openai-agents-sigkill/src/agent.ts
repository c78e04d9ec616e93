/**
 * The agent: one OpenAI Agents SDK `run` whose (scripted) model asks for the slow MCP tool
 * `slow_compute`, with a fresh tool-call id each time as a provider would, then answers with
 * what the tool returned. A process killed mid-call is restarted by running the same run again
 * (same run id): with the `durable` server, the call derives the same key and attaches to the
 * task the killed process started; with the SDK's `stock` `MCPServerStreamableHttp`, the tool is
 * called, and launched, again.
 *
 * Usage: node dist/agent.js durable|stock DIR MCP_URL LABEL
 * Prints one JSON line per fact: {"toolCall":id}, {"recorded":key}, {"answer":text}.
 */
import { randomUUID } from "node:crypto"
import * as path from "node:path"
import { openTaskClient } from "@mcp-handles/core"
import { durableMcpServer } from "@mcp-handles/openai-agents"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import {
  Agent,
  type MCPServer,
  MCPServerStreamableHttp,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  Usage,
} from "@openai/agents-core"
import { say, sayRecorded } from "../../../scripts/testing/sigkill.mjs"

const [kind, dir = ".", url = "", label = "tides"] = process.argv.slice(2)

// --- The model: calls slow_compute once, then answers with the text it read.
const model: Model = {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 })
    const last = typeof request.input === "string" ? undefined : request.input.at(-1)
    if (last?.type !== "function_call_result")
      return {
        usage,
        output: [
          {
            type: "function_call",
            callId: `call_${randomUUID()}`,
            name: "slow_compute",
            arguments: JSON.stringify({ seconds: Number(process.env.SLOW_SECONDS ?? 3), label }),
            status: "completed",
          },
        ],
      }
    const read = JSON.stringify(last.output)
    return {
      usage,
      output: [
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: `Here it is: ${read}` }],
        },
      ],
    }
  },
  getStreamedResponse() {
    throw new Error("not streamed")
  },
}

// --- The MCP server: durable (mcp-handles, a SQLite store in DIR) or the SDK's stock one.
const open = async (): Promise<{ readonly server: MCPServer; readonly close: () => Promise<void> }> => {
  if (kind === "stock") {
    const server = new MCPServerStreamableHttp({ url, name: "research" })
    await server.connect()
    return { server, close: () => server.close() }
  }
  const client = await openTaskClient({
    store: SqliteStore.layer({ filename: path.join(dir, "tasks.db") }),
    servers: [{ name: "research", url }],
  })
  // Says when a call's task id is on disk (for the driver that kills this process).
  sayRecorded(client)
  return {
    server: durableMcpServer(client, { server: "research", runId: `report-${label}` }),
    close: () => client.close(),
  }
}

const { server, close } = await open()
try {
  const agent = new Agent({ name: "Reporter", instructions: "Compute.", model, mcpServers: [server] })
  agent.on("agent_tool_start", (_context, _tool, { toolCall }) => {
    if (toolCall.type === "function_call") say({ toolCall: toolCall.callId })
  })
  const result = await run(agent, `Compute ${label}.`)
  say({ answer: result.finalOutput })
} finally {
  await close()
}
