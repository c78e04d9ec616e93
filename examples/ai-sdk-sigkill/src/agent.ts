/**
 * The agent: one `generateText` loop whose (mock) model asks for a slow MCP tool, then answers
 * with what the tool returned. Its messages are written to a file before each tool runs and after
 * each step, so a process killed at any moment is restarted from them: the tool calls left
 * without a result are executed again (`resumeToolCalls`, same `toolCallId`), then the loop goes
 * on. With `durable` tools, executing the call again attaches to the task the killed process
 * started; with the AI SDK's `stock` MCP client, it launches the tool again.
 *
 * Usage: node dist/agent.js durable|stock DIR MCP_URL TOPIC
 * Prints one JSON line per fact: {"resumed":n}, {"toolCall":id}, {"recorded":key}, {"answer":text}.
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { createMCPClient } from "@ai-sdk/mcp"
import { mcpTools, resumeToolCalls } from "@mcp-handles/ai-sdk"
import { openTaskClient } from "@mcp-handles/core"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import { generateText, isStepCount, type ModelMessage, type ToolSet } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { say, sayRecorded } from "../../../scripts/testing/sigkill.mjs"

const [kind, dir = ".", url = "", topic = "tides"] = process.argv.slice(2)

// --- The conversation, on disk: written whole, then renamed, so a kill never leaves half a file.
const file = path.join(dir, "messages.json")
const load = (): Array<ModelMessage> =>
  fs.existsSync(file)
    ? (JSON.parse(fs.readFileSync(file, "utf8")) as Array<ModelMessage>)
    : [{ role: "user", content: `Write a report on ${topic}.` }]
const save = (messages: ReadonlyArray<ModelMessage>) => {
  const partial = `${file}.partial`
  const fd = fs.openSync(partial, "w")
  fs.writeSync(fd, JSON.stringify(messages))
  fs.fsyncSync(fd)
  fs.closeSync(fd)
  fs.renameSync(partial, file)
}

// --- The model: calls deep_report once (with a fresh tool-call id, as a provider would), then
// answers with the text of the tool result it reads.
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    const last = prompt.at(-1)
    if (last?.role !== "tool")
      return {
        content: [
          {
            type: "tool-call",
            toolCallId: `call_${randomUUID()}`,
            toolName: "deep_report",
            input: JSON.stringify({ topic }),
          },
        ],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      }
    const read = last.content
      .map((part) => (part.type === "tool-result" ? JSON.stringify(part.output) : ""))
      .join("")
    return {
      content: [{ type: "text", text: `Here it is: ${read}` }],
      finishReason: { unified: "stop", raw: undefined },
      usage,
      warnings: [],
    }
  },
})

// --- The tools: durable (mcp-handles, a SQLite store beside the messages) or the stock client.
const open = async (): Promise<{ readonly tools: ToolSet; readonly close: () => Promise<void> }> => {
  if (kind === "stock") {
    const client = await createMCPClient({ transport: { type: "http", url } })
    return { tools: await client.tools(), close: () => client.close() }
  }
  const client = await openTaskClient({
    store: SqliteStore.layer({ filename: path.join(dir, "tasks.db") }),
    servers: [{ name: "research", url }],
  })
  // Says when a call's task id is on disk (for the driver that kills this process).
  sayRecorded(client)
  return {
    tools: await mcpTools(client, { server: "research", conversationId: `report-${topic}` }),
    close: () => client.close(),
  }
}

const { tools, close } = await open()
try {
  const messages = load()
  const resumed = await resumeToolCalls({ messages, tools })
  if (resumed !== undefined) {
    messages.push(resumed)
    save(messages)
    say({ resumed: resumed.content.length })
  }
  const result = await generateText({
    model,
    tools,
    messages,
    stopWhen: isStepCount(4),
    // The tool call is on disk before the tool runs: a kill from here on leaves it to resume.
    onToolExecutionStart: ({ toolCall }) => {
      const { toolCallId, toolName, input } = toolCall
      save([
        ...messages,
        { role: "assistant", content: [{ type: "tool-call", toolCallId, toolName, input }] },
      ])
      say({ toolCall: toolCallId })
    },
    onStepFinish: (step) => {
      messages.push(...step.response.messages)
      save(messages)
    },
  })
  say({ answer: result.text })
} finally {
  await close()
}
