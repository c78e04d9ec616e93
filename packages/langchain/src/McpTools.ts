/**
 * A durable client's MCP server as LangChain tools. Each tool records its call under a key
 * derived from the LangGraph thread and the tool-call id before the request leaves, then (in
 * `wait` mode) follows it to its end (a direct answer, or a task polled to its result), or (in
 * `handle` mode) returns at once with the key as a handle for the companion tools `check_call`
 * and `wait_for_call`. It returns a `ToolMessage` whose content the model reads and whose
 * `artifact` is the `ToolOutput`. A graph resumed from its
 * checkpoint (after a crash, a restart, an interrupt) re-executes the same tool call and attaches
 * to the call already recorded: never a second launch.
 *
 * ```ts
 * const tools = await mcpTools(client, { server: "research" })
 * const graph = new StateGraph(MessagesAnnotation)
 *   .addNode("agent", callModel)
 *   .addNode("tools", new ToolNode(tools))
 *   // ...
 *   .compile({ checkpointer })
 * await graph.invoke({ messages }, { configurable: { thread_id: "chat-42" } })
 * ```
 *
 * @since 0.1.0
 */
import type { ToolMessage } from "@langchain/core/messages"
import { type DynamicStructuredTool, type ToolRunnableConfig, tool } from "@langchain/core/tools"
import { AgentTool, type Json, type PromiseClient, ServerRequest, type Wire } from "@mcp-handles/core"
import * as Data from "effect/Data"
import * as CallKey from "./CallKey.js"
import type * as InputInterrupt from "./InputInterrupt.js"
import * as Companions from "./internal/companions.js"
import { messageOf } from "./internal/message.js"
import type * as ToolOutput from "./ToolOutput.js"

/**
 * The arguments the model passes: a JSON object, checked against the tool's `inputSchema`.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolInput = Record<string, unknown>

/**
 * One durable tool: a `StructuredTool` whose input schema is the MCP tool's JSON Schema.
 *
 * @since 0.1.0
 * @category models
 */
export type McpTool = DynamicStructuredTool

/**
 * A question of the server, with the thread it belongs to (for `onInput`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolInputRequest extends PromiseClient.PromiseInputRequest {
  readonly threadId: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The configured server's name on the client. */
  readonly server: string
  /**
   * The thread when the RunnableConfig has none (`config.configurable.thread_id` wins): for a
   * tool run outside LangGraph. Without either, a call is refused (`MissingThreadId`).
   */
  readonly threadId?: string | undefined
  /**
   * `wait` (default): a tool returns the call's outcome. `handle`: it returns at once with a
   * handle (the call's key), and `check_call` / `wait_for_call` join the tools, for work longer
   * than a model turn. In handle mode a question of the server is not an `interrupt()`: the
   * companions report it (`input_required`, with the question) or answer it with `onInput`.
   */
  readonly mode?: "wait" | "handle" | undefined
  /** Derives a call's key; default `{threadId}:{toolCallId}` (see `CallKey.derive`). */
  readonly key?: CallKey.Derive | undefined
  /**
   * Which handles the companion tools accept, for the thread they run in. Default: those the
   * default key derivation gives for that thread (`CallKey.belongsTo`). Set it with a custom `key`.
   */
  readonly ownsHandle?: ((threadId: string, handle: string) => boolean) | undefined
  /** Add `check_call` and `wait_for_call` in `wait` mode too. Default: only in `handle` mode. */
  readonly companions?: boolean | undefined
  /** The scope calls are recorded in. Default: the client's. */
  readonly scope?: string | undefined
  /** Only these tools of the server (default: all). */
  readonly tools?: ReadonlyArray<string> | undefined
  /**
   * What an abort (`config.signal`: the run aborted, a timeout) does to a call being waited on:
   * `hand-off` (default) stops the wait and leaves the call running, recorded under its key, so
   * that running the same tool call again picks its result up; `cancel` also cancels it on the
   * server.
   */
  readonly onAbort?: "hand-off" | "cancel" | undefined
  /**
   * Answers the server's questions (outside LangGraph). Without it, a question is a LangGraph
   * `interrupt()` with an `InputInterrupt`, answered by resuming the graph. Either way the
   * answer is checked and stored before it is sent, and a question is answered once. Open the
   * client without `onInputRequired`: a client-wide handler answers first.
   */
  readonly onInput?: ((request: ToolInputRequest) => Promise<Json.JsonInput>) | undefined
}

/**
 * `@langchain/langgraph` is not installed, and a call asked a question that only an `interrupt()`
 * or an `onInput` handler can answer.
 *
 * @since 0.1.0
 * @category errors
 */
export class NoInputPath extends Data.TaggedError("NoInputPath")<{
  readonly key: string
  readonly cause: unknown
}> {
  override get message(): string {
    return `${this.key} asks for input, and neither onInput nor @langchain/langgraph's interrupt() is there to ask it; it stays open`
  }
}

export {
  /**
   * The server has a tool named like a companion tool (`check_call`, `wait_for_call`): leave it out
   * with `tools`, or the companions with `companions: false` (core's `AgentTool.CompanionNameTaken`).
   *
   * @since 0.1.0
   * @category errors
   */
  CompanionNameTaken,
} from "@mcp-handles/core/AgentTool"

const tagOf = (error: unknown): unknown => (error as { _tag?: unknown } | null)?._tag

const loadInterrupt = async (key: string): Promise<(value: InputInterrupt.InputInterrupt) => unknown> => {
  try {
    const langgraph = await import("@langchain/langgraph")
    return (value) => langgraph.interrupt(value)
  } catch (cause) {
    throw new NoInputPath({ key, cause })
  }
}

const threadOf = (config: ToolRunnableConfig, options: Options): string | undefined => {
  const configured: unknown = config.configurable?.thread_id
  if (typeof configured === "string" && configured.length > 0) return configured
  if (typeof configured === "number") return String(configured)
  return options.threadId
}

/**
 * Lists the server's tools and makes each a durable LangChain tool.
 *
 * @since 0.1.0
 * @category constructors
 */
export const mcpTools = async (
  client: PromiseClient.PromiseTaskClient,
  options: Options,
): Promise<Array<McpTool>> => {
  const mode = options.mode ?? "wait"
  const companions = options.companions ?? mode === "handle"
  const derive = options.key ?? CallKey.derive
  const scope = options.scope
  const listed = await client.listTools(options.server)
  const wanted =
    options.tools === undefined ? listed : listed.filter((info) => options.tools?.includes(info.name))

  const stopped = AgentTool.stopped(
    companions,
    "running the same tool call again (same thread, same tool call id) picks the result up",
  )

  const answer = async (key: string, inputKey: string, response: unknown) => {
    await client.answer(key, inputKey, response, scope).catch((error: unknown) => {
      // Stored already (by this tool before a restart): a question is answered once.
      if (tagOf(error) === "CannotAnswer" && (error as { reason?: unknown }).reason === "already_answered")
        return
      throw error
    })
  }

  /** Waits for the call to rest, asking its questions on the way; undefined once `signal` aborts. */
  const wait = async (
    info: Wire.ToolInfo,
    key: string,
    threadId: string,
    signal: AbortSignal | undefined,
  ): Promise<ToolOutput.ToolOutput | undefined> => {
    // Interrupts already resumed in an earlier execution of this node, replayed (see below).
    let replay: number | undefined
    const onInput = options.onInput
    for (;;) {
      const settled = await AgentTool.settle(client, key, {
        scope,
        tool: info.name,
        signal,
        onInput: onInput === undefined ? undefined : (request) => onInput({ ...request, threadId }),
        answer,
      })
      if (settled._tag === "Rested") return settled.output
      if (settled._tag === "Stopped") return undefined
      const open = settled.requests
      const interrupt = await loadInterrupt(key)
      // LangGraph re-executes the whole node on resume and hands resume values to its
      // interrupt() calls by their order. Each question answered so far was answered through one
      // interrupt, in an earlier execution: replaying that many first keeps the next one's slot.
      if (replay === undefined) {
        replay = Object.keys((await client.get(key, scope)).answers).length
        for (let slot = 0; slot < replay; slot++)
          interrupt({
            type: "mcp-handles/input",
            server: options.server,
            tool: info.name,
            key,
            inputKey: `answered-${slot}`,
            message: "answered already",
            request: { method: "unknown" },
          })
      }
      for (const request of open) {
        const response = interrupt({
          type: "mcp-handles/input",
          server: options.server,
          tool: info.name,
          key,
          inputKey: request.inputKey,
          message: ServerRequest.message(request.request),
          request: request.request as InputInterrupt.InputInterrupt["request"],
        })
        await answer(key, request.inputKey, response)
      }
    }
  }

  const own = (info: Wire.ToolInfo) =>
    AgentTool.describe({ ...info, description: info.description ?? info.title ?? info.name }, mode) ??
    info.name

  const durable = (info: Wire.ToolInfo): McpTool =>
    tool(
      async (input: ToolInput, config: ToolRunnableConfig): Promise<ToolMessage> => {
        // Not yet recorded: an aborted run launches nothing.
        config.signal?.throwIfAborted()
        const threadId = threadOf(config, options)
        if (threadId === undefined) throw new CallKey.MissingThreadId({ tool: info.name })
        const toolCallId = config.toolCall?.id
        if (toolCallId === undefined || toolCallId.length === 0)
          throw new CallKey.MissingToolCallId({ tool: info.name })
        const identity = { threadId, toolCallId, tool: info.name }
        const derived = derive(identity)
        // A call recorded under the key an older version derived is still this tool call.
        const key =
          options.key === undefined
            ? await AgentTool.keyInUse(client, derived, CallKey.legacy(identity), scope)
            : derived
        const cancelOnAbort = options.onAbort === "cancel"
        const launched = await AgentTool.launch(client, options, info.name, input, key, config.signal)
        let output: ToolOutput.ToolOutput | undefined
        if (launched._tag === "Launched" && mode === "handle" && !launched.rests)
          output = await AgentTool.current(client, key, scope, AgentTool.started)
        else if (launched._tag === "Launched") output = await wait(info, key, threadId, config.signal)
        else if (cancelOnAbort) await launched.calling.catch(() => undefined)
        output ??= cancelOnAbort
          ? await AgentTool.cancelled(client, key, scope)
          : await AgentTool.current(client, key, scope, stopped)
        return messageOf(output, info.name, toolCallId)
      },
      {
        name: info.name,
        // The tool's name when the server describes it no other way.
        description: own(info),
        schema: AgentTool.inputSchema(info),
        metadata: {
          server: options.server,
          tool: info.name,
          ...(info.title === undefined ? {} : { title: info.title }),
        },
      },
    ) as McpTool

  const tools = wanted.map(durable)
  if (!companions) return tools
  AgentTool.checkCompanionNames(
    options.server,
    tools.map((tool) => tool.name),
  )
  return [
    ...tools,
    ...Companions.make(client, {
      scope,
      threadOf: (config) => threadOf(config, options),
      missingThread: (tool) => new CallKey.MissingThreadId({ tool }),
      owns: options.ownsHandle ?? CallKey.belongsTo,
      answer,
      onInput: options.onInput,
    }),
  ]
}
