/**
 * A durable client's MCP server as an AI SDK tool set. Each tool's `execute` records the call
 * under a key derived from the app's conversation id and the AI SDK's `toolCallId` before the
 * request leaves, then (in `wait` mode) follows it to its end, streaming status as preliminary
 * results, or (in `handle` mode) returns at once with the key as a handle for the companion
 * tools `check_call` and `wait_for_call`. A run restarted from its persisted messages executes
 * the same tool call again and attaches to the call already recorded: never a second launch.
 *
 * ```ts
 * const tools = await mcpTools(client, { server: "research", conversationId: chat.id })
 * const result = await generateText({ model, tools, messages, stopWhen: isStepCount(5) })
 * ```
 *
 * @since 0.1.0
 */
import { AgentTool, type Json, type PromiseClient, type Wire } from "@mcp-handles/core"
import { type JSONSchema7, jsonSchema, type ToolExecutionOptions, type ToolSet, tool } from "ai"
import * as CallKey from "./CallKey.js"
import type * as InputRouter from "./InputRouter.js"
import * as Companions from "./internal/companions.js"
import * as Follow from "./internal/follow.js"
import * as ToolOutput from "./ToolOutput.js"

/**
 * The arguments the model passes: a JSON object, checked by the server against the tool's
 * `inputSchema`.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolInput = Record<string, unknown>

/**
 * One durable tool of the set: its `execute` yields `ToolOutput`s (the last one is the result).
 *
 * @since 0.1.0
 * @category models
 */
export type McpTool = ToolSet[string]

/**
 * The tool set: the server's tools by name, and in `handle` mode `check_call` and
 * `wait_for_call`.
 *
 * @since 0.1.0
 * @category models
 */
export type McpToolSet = ToolSet

/**
 * A question of the server, with the conversation it belongs to.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolInputRequest extends PromiseClient.PromiseInputRequest {
  readonly conversationId: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The configured server's name on the client. */
  readonly server: string
  /** The app's id of this conversation or run, stable across restarts: part of every key. */
  readonly conversationId: string
  /**
   * `wait` (default): a tool returns the call's outcome. `handle`: it returns at once with a
   * handle, and `check_call` / `wait_for_call` join the set, for work longer than a model turn.
   */
  readonly mode?: "wait" | "handle" | undefined
  /** Derives a call's key; default `{conversationId}:{toolCallId}` (see `CallKey.derive`). */
  readonly key?: CallKey.Derive | undefined
  /**
   * Which handles the companion tools accept. Default: those the default key derivation gives
   * for this conversation. Set it with a custom `key`.
   */
  readonly ownsHandle?: ((handle: string) => boolean) | undefined
  /** The scope calls are recorded in. Default: the client's. */
  readonly scope?: string | undefined
  /** Only these tools of the server (default: all). */
  readonly tools?: ReadonlyArray<string> | undefined
  /**
   * What an abort (the AI SDK's `abortSignal`: the run aborted, a tool timeout) does to a call
   * being waited on: `hand-off` (default) stops the wait and leaves the call running, recorded
   * for a later look; `cancel` also cancels it on the server.
   */
  readonly onAbort?: "hand-off" | "cancel" | undefined
  /** Stream status changes and messages as preliminary results while waiting. Default true. */
  readonly progress?: boolean | undefined
  /** The router the client was opened with (`onInputRequired: input.onInputRequired`). */
  readonly input?: InputRouter.InputRouter | undefined
  /** Answers the server's questions for this conversation's calls while they are waited on. */
  readonly onInput?: ((request: ToolInputRequest) => Promise<Json.JsonInput>) | undefined
  /** Add `check_call` and `wait_for_call` in `wait` mode too. Default: only in `handle` mode. */
  readonly companions?: boolean | undefined
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

/**
 * Lists the server's tools and makes each a durable AI SDK tool.
 *
 * @since 0.1.0
 * @category constructors
 */
export const mcpTools = async (
  client: PromiseClient.PromiseTaskClient,
  options: Options,
): Promise<McpToolSet> => {
  const mode = options.mode ?? "wait"
  const derive = options.key ?? CallKey.derive
  const companions = options.companions ?? mode === "handle"
  const listed = await client.listTools(options.server)
  const wanted =
    options.tools === undefined ? listed : listed.filter((info) => options.tools?.includes(info.name))
  const route = (key: string) => {
    const { input, onInput } = options
    if (input === undefined || onInput === undefined) return undefined
    return () =>
      input.route(key, (request) => onInput({ ...request, conversationId: options.conversationId }))
  }
  const stopped = (options.onAbort ?? "hand-off") === "cancel" ? undefined : AgentTool.stopped(companions)

  const durable = (info: Wire.ToolInfo): McpTool => {
    async function* execute(
      input: ToolInput,
      { toolCallId, abortSignal }: ToolExecutionOptions<unknown>,
    ): AsyncGenerator<ToolOutput.ToolOutput> {
      // Not yet recorded: an aborted run launches nothing.
      abortSignal?.throwIfAborted()
      const identity = { conversationId: options.conversationId, toolCallId, tool: info.name }
      const derived = derive(identity)
      // A call recorded under the key an older version derived is still this tool call.
      const key =
        options.key === undefined
          ? await AgentTool.keyInUse(client, derived, CallKey.legacy(identity), options.scope)
          : derived
      // Read from before the launch: a direct call's progress comes while its answer is awaited.
      const events = (options.progress ?? true) ? Follow.feed(client, key, options.scope) : undefined
      try {
        const launching = AgentTool.launch(client, options, info.name, input, key, abortSignal)
        const launched = yield* Follow.until(launching, events, key)
        if (launched._tag === "Aborted") {
          if (stopped !== undefined) {
            yield await AgentTool.current(client, key, options.scope, stopped)
            return
          }
          // Cancelling needs the row, which the dispatch writes first.
          await launched.calling.catch(() => undefined)
          yield await AgentTool.cancelled(client, key, options.scope)
          return
        }
        if (mode === "handle" && !launched.rests) {
          yield await AgentTool.current(client, key, options.scope, AgentTool.started)
          return
        }
        yield* Follow.follow({
          client,
          key,
          scope: options.scope,
          signal: abortSignal,
          feed: events,
          route: route(key),
          stopped,
        })
      } finally {
        await events?.close()
      }
    }
    const description = AgentTool.describe(info, mode)
    return tool({
      ...(description === undefined ? {} : { description }),
      inputSchema: jsonSchema<ToolInput>(AgentTool.inputSchema(info) as JSONSchema7),
      metadata: {
        server: options.server,
        tool: info.name,
        ...(info.title === undefined ? {} : { title: info.title }),
      },
      execute,
      toModelOutput: ({ output }) => ToolOutput.toModelOutput(output),
    })
  }

  const set: McpToolSet = Object.fromEntries(wanted.map((info) => [info.name, durable(info)]))
  if (!companions) return set
  AgentTool.checkCompanionNames(options.server, Object.keys(set))
  return {
    ...set,
    ...Companions.make(client, {
      scope: options.scope,
      owns: options.ownsHandle ?? ((handle) => CallKey.belongsTo(options.conversationId, handle)),
      progress: options.progress ?? true,
      route,
    }),
  }
}
