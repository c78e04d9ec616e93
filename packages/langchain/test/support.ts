/**
 * The agent side of the tests: `@langchain/core`'s fake chat model, scripted from the messages it
 * is given (so a graph resumed from its checkpoint behaves as the first run would have), inside a
 * real LangGraph graph (model node, `ToolNode`, `toolsCondition`, a checkpointer), and a client on
 * an in-process fake server.
 */
import { AIMessage, type BaseMessage, isToolMessage, type ToolMessage } from "@langchain/core/messages"
import type { ChatResult } from "@langchain/core/outputs"
import type { StructuredToolInterface } from "@langchain/core/tools"
import { FakeChatModel } from "@langchain/core/utils/testing"
import {
  type BaseCheckpointSaver,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph"
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt"
import { openTaskClient } from "@mcp-handles/core"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { MemoryStore } from "@mcp-handles/store-memory"

/** A step of the model: the tool calls it makes, given what it read last (undefined at first). */
export type Script = (
  lastResult: ToolMessage | undefined,
  step: number,
) => ReadonlyArray<{ readonly name: string; readonly args: object; readonly id: string }> | undefined

const textOf = (message: BaseMessage) =>
  typeof message.content === "string" ? message.content : JSON.stringify(message.content)

/**
 * `@langchain/core`'s fake chat model, scripted: while `script` returns tool calls, it makes
 * them; once it returns none, it answers `final: <what it read last>`. The step is counted from
 * the messages (the AI messages so far), so a resumed graph takes the same steps.
 */
export class ScriptedChatModel extends FakeChatModel {
  constructor(private readonly script: Script) {
    super({})
  }
  override bindTools() {
    return this
  }
  override async _generate(messages: Array<BaseMessage>): Promise<ChatResult> {
    const step = messages.filter((message) => message.getType() === "ai").length
    const last = messages.at(-1)
    const read = last !== undefined && isToolMessage(last) ? last : undefined
    const calls = this.script(read, step) ?? []
    const message =
      calls.length === 0
        ? new AIMessage(`final: ${read === undefined ? "nothing" : textOf(read)}`)
        : new AIMessage({
            content: "",
            tool_calls: calls.map((call) => ({
              ...call,
              args: { ...call.args },
              type: "tool_call" as const,
            })),
          })
    return { generations: [{ text: textOf(message), message }] }
  }
}

/** One tool call, then the final answer. */
export const oneCall =
  (name: string, args: object = {}, id = "call-1"): Script =>
  (_, step) =>
    step === 0 ? [{ name, args, id }] : undefined

/** A LangGraph agent: the scripted model, a ToolNode with `tools`, a checkpointer. */
export const agent = (
  tools: ReadonlyArray<StructuredToolInterface>,
  script: Script,
  checkpointer: BaseCheckpointSaver = new MemorySaver(),
) => {
  const model = new ScriptedChatModel(script)
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", new ToolNode([...tools]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer })
}

/** The tool messages of a run, in order. */
export const toolMessages = (messages: ReadonlyArray<BaseMessage>): Array<ToolMessage> =>
  messages.filter((message): message is ToolMessage => isToolMessage(message))

let threads = 0
/** A thread id of its own for each run, so keys never meet across tests. */
export const thread = () => `thread-${process.pid}-${++threads}`

/** A fake server in process and a client on it (no input handler: questions are interrupts). */
export const setup = (config: Config.Config) => {
  const server = FakeServer.unsafeMake(config)
  const open = () =>
    openTaskClient({
      store: MemoryStore.layer,
      servers: [{ name: "fake", url: "http://fake.test/mcp" }],
      http: { fetch: (request, init) => server.handler(new Request(request, init)) },
      polling: { minIntervalMs: 50 },
    })
  const launchesOf = (key: string) => server.ledger.launches.filter((launch) => launch.idempotencyKey === key)
  const taskOf = (key: string) => server.ledger.tasks.find((task) => task.idempotencyKey === key)
  return { server, open, launchesOf, taskOf }
}

/** The interrupts a run stopped on (LangGraph's `__interrupt__`), if any. */
export const interruptsOf = (result: object): ReadonlyArray<{ readonly value?: unknown }> =>
  (result as { readonly __interrupt__?: ReadonlyArray<{ readonly value?: unknown }> }).__interrupt__ ?? []
