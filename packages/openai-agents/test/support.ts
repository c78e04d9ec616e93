/**
 * The agent side of the tests: a scripted `Model` (the SDK's own interface; no network), which
 * decides its tool calls from what it read last, and a durable client on an in-process fake
 * server serving the shipped tools (`greet`, `slow_compute`, `confirm_delete`, ...).
 */
import { openTaskClient } from "@mcp-handles/core"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as Profile from "@mcp-handles/fake-server/Profile"
import { MemoryStore } from "@mcp-handles/store-memory"
import {
  Agent,
  type AgentInputItem,
  type MCPServer,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Usage,
} from "@openai/agents-core"

/** A step of the model: the tool calls it makes, given what it read last (undefined at first). */
export type Script = (
  lastResult: string | undefined,
  step: number,
) => ReadonlyArray<{ readonly name: string; readonly args: object; readonly callId?: string }> | undefined

/** What a function call's output says, as one line of text. */
const textOf = (output: unknown): string => {
  if (typeof output === "string") return output
  if (Array.isArray(output)) return output.map(textOf).join(" ")
  if (output !== null && typeof output === "object") {
    const fields = output as Record<string, unknown>
    if (typeof fields.text === "string") return fields.text
  }
  return JSON.stringify(output)
}

/** The text of the function call results at the end of the model's input. */
const lastResults = (input: string | ReadonlyArray<AgentInputItem>): string | undefined => {
  if (typeof input === "string") return undefined
  const results: Array<string> = []
  for (let at = input.length - 1; at >= 0; at--) {
    const item = input[at]
    if (item?.type !== "function_call_result") break
    results.unshift(textOf(item.output))
  }
  return results.length === 0 ? undefined : results.join(" | ")
}

/**
 * A model that makes the script's tool calls, then, once the script returns none, answers
 * `final: <what it read last>`. Its step is counted from the run's input (the calls it made so
 * far), so a run resumed from its state goes on where it was.
 */
export class ScriptedModel implements Model {
  constructor(readonly script: Script) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input = request.input
    const step = typeof input === "string" ? 0 : input.filter((item) => item.type === "function_call").length
    const read = lastResults(input)
    const calls = this.script(read, step) ?? []
    return {
      usage: new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 }),
      output:
        calls.length === 0
          ? [
              {
                type: "message",
                role: "assistant",
                status: "completed",
                content: [{ type: "output_text", text: `final: ${read ?? "nothing"}` }],
              },
            ]
          : calls.map((call, at) => ({
              type: "function_call" as const,
              callId: call.callId ?? `call-${step}-${at}`,
              name: call.name,
              arguments: JSON.stringify(call.args),
              status: "completed" as const,
            })),
    }
  }

  // biome-ignore lint/correctness/useYield: the runner streams only when asked; these tests never do
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("ScriptedModel does not stream")
  }
}

/** One tool call, then the final answer. */
export const oneCall =
  (name: string, args: object = {}): Script =>
  (_, step) =>
    step === 0 ? [{ name, args }] : undefined

/** An agent on the scripted model with the given MCP servers. */
export const agent = (script: Script, mcpServers: Array<MCPServer>) =>
  new Agent({ name: "tester", instructions: "Use the tools.", model: new ScriptedModel(script), mcpServers })

let runs = 0
/** A run id of its own for each run, so keys never meet across tests. */
export const runId = () => `run-${process.pid}-${++runs}`

/** The shipped tools, and one whose first answer is lost after the server launched it. */
export const config: Config.Config = {
  ...Profile.conformance,
  tools: [
    ...Profile.conformance.tools,
    { name: "flaky_send", shape: "task", durationMs: 200, pollIntervalMs: 50 },
  ],
  faults: [{ when: { method: "tools/call", tool: "flaky_send", nth: 1 }, fault: { kind: "drop" } }],
}

/** A fake server in process and a client on it (no input handler: the MCP server answers). */
export const setup = (serverConfig: Config.Config = config) => {
  const server = FakeServer.unsafeMake(serverConfig)
  const open = () =>
    openTaskClient({
      store: MemoryStore.layer,
      servers: [{ name: "fake", url: "http://fake.test/mcp" }],
      http: { fetch: (request, init) => server.handler(new Request(request, init)) },
      polling: { minIntervalMs: 50 },
    })
  const launchesOf = (key: string) => server.ledger.launches.filter((launch) => launch.idempotencyKey === key)
  const launchesOfTool = (tool: string) => server.ledger.launches.filter((launch) => launch.tool === tool)
  return { server, open, launchesOf, launchesOfTool }
}
