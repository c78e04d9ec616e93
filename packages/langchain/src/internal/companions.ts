/**
 * The companion tools of handle mode (core's `AgentTool` companions) as LangChain tools: only
 * handles of their own thread.
 *
 * A question of the server is never an `interrupt()` here: a companion runs in a LangGraph task
 * of its own, a later one than the tool that started the call, so a resumed graph would re-run it
 * with no interrupt to replay and no way to tell which answer belongs to which question. It
 * reports `input_required` with the question instead, or answers through `onInput` when there is
 * one; the answer itself goes through `client.answer` (checked, stored before it is sent, once).
 */
import { ToolMessage } from "@langchain/core/messages"
import { type DynamicStructuredTool, type ToolRunnableConfig, tool } from "@langchain/core/tools"
import { AgentTool, type Json, type PromiseClient } from "@mcp-handles/core"
import { messageOf } from "./message.js"

/** @internal */
export interface Options {
  readonly scope: string | undefined
  /** The thread of a run, or undefined when it has none (the tool refuses: `MissingThreadId`). */
  readonly threadOf: (config: ToolRunnableConfig) => string | undefined
  readonly missingThread: (tool: string) => Error
  readonly owns: (threadId: string, handle: string) => boolean
  readonly answer: (key: string, inputKey: string, response: Json.JsonInput) => Promise<void>
  readonly onInput:
    | ((
        request: PromiseClient.PromiseInputRequest & { readonly threadId: string },
      ) => Promise<Json.JsonInput>)
    | undefined
}

/** @internal */
export const make = (
  client: PromiseClient.PromiseTaskClient,
  options: Options,
): Array<DynamicStructuredTool> =>
  AgentTool.companionNames.map(
    (name) =>
      tool(
        async (input: unknown, config: ToolRunnableConfig): Promise<ToolMessage> => {
          const toolCallId = config.toolCall?.id ?? ""
          const threadId = options.threadOf(config)
          if (threadId === undefined) throw options.missingThread(name)
          const { onInput } = options
          const served = await AgentTool.serveCompanion(client, name, input, {
            scope: options.scope,
            owns: (handle) => options.owns(threadId, handle),
            within: "thread",
            signal: config.signal,
            onInput: onInput === undefined ? undefined : (request) => onInput({ ...request, threadId }),
            answer: options.answer,
          })
          // A refusal the model reads (and may correct), never a thrown error that would end the run.
          return served._tag === "Refused"
            ? new ToolMessage({ content: served.message, status: "error", tool_call_id: toolCallId, name })
            : messageOf(served.output, name, toolCallId)
        },
        {
          name,
          description: AgentTool.companions[name].description,
          schema: AgentTool.companions[name].inputSchema as Record<string, unknown>,
        },
      ) as DynamicStructuredTool,
  )
