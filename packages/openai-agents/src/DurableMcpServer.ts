/**
 * A durable client's MCP server as an OpenAI Agents SDK `MCPServer`: pass it in an agent's
 * `mcpServers` and every tool call the model makes is recorded in the client's store before the
 * request leaves, followed to its end (a task is polled, its questions answered), and attached to
 * again, never launched a second time, by a run resumed from its `RunState` or re-run from the
 * start after a crash.
 *
 * ```ts
 * const research = durableMcpServer(client, { server: "research", runId: "report-42" })
 * const agent = new Agent({ name: "Researcher", mcpServers: [research] })
 * const result = await run(agent, "Write a report on tides.")
 * ```
 *
 * The SDK gives an `MCPServer` no tool-call id, so calls are keyed by run, turn, tool, ordinal
 * and arguments (see `CallKey`). The key reaches `callTool` through the server's own
 * `toolMetaResolver`, the one hook where the SDK shows the run's context; it is taken out of the
 * SDK's `meta` again, whose other fields are not forwarded (the request's `_meta` is the client's
 * envelope, which carries the key as `io.github.mcp-handles/key`).
 *
 * @since 0.1.0
 */
import { AgentTool, type Json, type PromiseClient, type Wire } from "@mcp-handles/core"
import type {
  CallToolResultContent,
  MCPCallToolOptions,
  MCPServer,
  MCPToolErrorFunction,
  MCPToolFilterCallable,
  MCPToolFilterStatic,
  MCPToolMetaResolver,
  RunContext,
} from "@openai/agents-core"
import * as Data from "effect/Data"
import * as CallKey from "./CallKey.js"
import * as Companions from "./internal/companions.js"
import * as Follow from "./internal/follow.js"
import type * as ToolOutput from "./ToolOutput.js"

/**
 * A question of the server, with the call and run it belongs to.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolInputRequest extends PromiseClient.PromiseInputRequest {
  readonly runId: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options<TContext = unknown> {
  /** The configured server's name on the client. */
  readonly server: string
  /**
   * The app's id of the run or conversation, stable across restarts: part of every key. A
   * function reads it from the run's context (`runContext.context`, which a `RunState` keeps).
   */
  readonly runId: string | ((runContext: RunContext<TContext>) => string)
  /** The server's name in the SDK (tool prefixes, traces). Default: `server`. */
  readonly name?: string | undefined
  /**
   * `wait` (default): a tool call returns the call's outcome. `handle`: it returns at once with
   * a handle (the call's key), and the server also lists and serves `check_call` and
   * `wait_for_call`, for work longer than a model turn.
   */
  readonly mode?: "wait" | "handle" | undefined
  /** Derives a call's key (see `CallKey.derive`, the default). */
  readonly key?: CallKey.Derive | undefined
  /**
   * Which handles the companion tools accept, for the run they are called in. Default: those
   * the default key derivation gives for that run id (`CallKey.belongsTo`). Set it with a custom
   * `key`.
   */
  readonly ownsHandle?: ((runId: string, handle: string) => boolean) | undefined
  /** List and serve `check_call` and `wait_for_call` in `wait` mode too. Default: only in `handle` mode. */
  readonly companions?: boolean | undefined
  /** The scope calls are recorded in. Default: the client's. */
  readonly scope?: string | undefined
  /**
   * What an abort (the `signal` the SDK passes `callTool`: the run aborted) does to a call being
   * waited on: `hand-off` (default) stops the wait and leaves the call running, recorded under its
   * key, so that the run resumed or run again picks its result up; `cancel` also cancels it on the
   * server (`tasks/cancel`).
   */
  readonly onAbort?: "hand-off" | "cancel" | undefined
  /**
   * Answers the server's questions (`input_required`) while a call is waited on; each answer goes
   * through `client.answer`: checked against the request, stored before it is sent, sent once.
   * Without it, a call that asks waits until someone answers it (`mcp-handles`, another process).
   * Open the client without `onInputRequired`, or that handler answers first.
   */
  readonly onInput?: ((request: ToolInputRequest) => Promise<Json.JsonInput>) | undefined
  /** Cache `tools/list` until `invalidateToolsCache`. Default true. */
  readonly cacheToolsList?: boolean | undefined
  readonly toolFilter?: MCPToolFilterCallable | MCPToolFilterStatic | undefined
  /** Use `structuredContent` as the model's output when there is some (the SDK's option). */
  readonly useStructuredContent?: boolean | undefined
  /** The SDK's conversion of a thrown error into the model's output (`null`: rethrow). */
  readonly errorFunction?: MCPToolErrorFunction | null | undefined
}

/**
 * The server: an `MCPServer` of `@openai/agents-core`.
 *
 * @since 0.1.0
 * @category models
 */
export interface DurableMcpServer extends MCPServer {
  /** The key `callTool` records a call under, when the SDK calls it from a run. */
  readonly toolMetaResolver: MCPToolMetaResolver
}

/**
 * `callTool` was called outside a run (not by the SDK's runner) while `runId` is a function of the
 * run's context: there is no run id to key the call by. Pass a string `runId` for such calls.
 *
 * @since 0.1.0
 * @category errors
 */
export class RunIdUnknown extends Data.TaggedError("RunIdUnknown")<{
  readonly server: string
  readonly tool: string
}> {
  override get message(): string {
    return `${this.server}: ${this.tool} was called outside a run, and runId reads the run's context; pass a string runId to call tools by hand`
  }
}

export {
  /**
   * The server has a tool named like a companion tool (`check_call`, `wait_for_call`): `listTools`
   * fails with it rather than list two tools of one name. Turn the companions off
   * (`companions: false`, and `wait` mode) for such a server (core's `AgentTool.CompanionNameTaken`).
   *
   * @since 0.1.0
   * @category errors
   */
  CompanionNameTaken,
} from "@mcp-handles/core/AgentTool"

/**
 * A tool as `listTools` gives it to the SDK.
 *
 * @since 0.1.0
 * @category models
 */
export type MCPTool = Awaited<ReturnType<MCPServer["listTools"]>>[number]

/** Where the key and the run id travel from the meta resolver to `callTool`. */
const metaKey = "io.mcp-handles/key"
const metaRun = "io.mcp-handles/run"
/** The key an older version derived for the call, when it differs (see `CallKey.legacy`). */
const metaLegacy = "io.mcp-handles/legacy-key"

/**
 * The tool's input schema as the server sent it, as the SDK's own servers pass it on: the SDK
 * fills in what is missing (`type`, `properties`, `required`) and decides `additionalProperties`
 * by its strict mode, so nothing is invented here.
 */
const schemaOf = (info: Wire.ToolInfo): MCPTool["inputSchema"] =>
  AgentTool.inputSchema(info) as MCPTool["inputSchema"]

class Server implements DurableMcpServer {
  readonly name: string
  cacheToolsList: boolean
  toolFilter?: MCPToolFilterCallable | MCPToolFilterStatic
  useStructuredContent?: boolean
  errorFunction?: MCPToolErrorFunction | null
  readonly toolMetaResolver: MCPToolMetaResolver
  #tools: Promise<Array<MCPTool>> | undefined
  /** Per run context: how many calls of each (turn, tool, arguments) it made. */
  readonly #ordinals = new WeakMap<object, Map<string, number>>()
  /** Calls made outside a run (`callTool` by hand): counted per server. */
  readonly #bare = {}
  /**
   * Per run id, then per tool and arguments: the keys of calls whose invocation ended before
   * their outcome reached the run (see `#key`), oldest first.
   */
  readonly #open = new Map<string, Map<string, Array<string>>>()
  readonly #mode: "wait" | "handle"
  readonly #companions: boolean

  constructor(
    readonly client: PromiseClient.PromiseTaskClient,
    readonly options: Options<never>,
  ) {
    this.name = options.name ?? options.server
    this.cacheToolsList = options.cacheToolsList ?? true
    this.#mode = options.mode ?? "wait"
    this.#companions = options.companions ?? this.#mode === "handle"
    if (options.toolFilter !== undefined) this.toolFilter = options.toolFilter
    if (options.useStructuredContent !== undefined) this.useStructuredContent = options.useStructuredContent
    if (options.errorFunction !== undefined) this.errorFunction = options.errorFunction
    this.toolMetaResolver = ({ runContext, toolName, arguments: args }) => {
      const runId =
        typeof options.runId === "string" ? options.runId : options.runId(runContext as RunContext<never>)
      const { key, legacy } = this.#key(runContext, runId, runContext.usage.requests, toolName, args ?? {})
      return { [metaKey]: key, [metaRun]: runId, ...(legacy === undefined ? {} : { [metaLegacy]: legacy }) }
    }
  }

  /**
   * The key of a call about to be invoked. A call of this run whose invocation ended before its
   * outcome reached the run (the run failed mid-turn, its wait was stopped) is still the same
   * call when the run makes it again, whatever the turn and tool-call id are by then: a run
   * retried from its state asks the model again (one more model request in its usage) and gets
   * new tool-call ids. So such a key is taken over first, one for one: two identical calls of
   * one turn stay two calls. Otherwise the key is derived from the run, the turn, the tool, the
   * call's ordinal among the turn's identical calls, and the arguments.
   */
  #key(
    owner: object,
    runId: string,
    turn: number,
    tool: string,
    args: Record<string, unknown>,
  ): { readonly key: string; readonly legacy?: string | undefined } {
    const open = this.#open.get(runId)
    const same = `${tool}\u0000${CallKey.hashArgs(args)}`
    const again = open?.get(same)?.shift()
    if (again !== undefined) {
      if (open?.get(same)?.length === 0) open.delete(same)
      if (open?.size === 0) this.#open.delete(runId)
      return { key: again }
    }
    const counts = this.#ordinals.get(owner) ?? new Map<string, number>()
    this.#ordinals.set(owner, counts)
    const counted = `${turn}\u0000${tool}\u0000${CallKey.hashArgs(args)}`
    const ordinal = (counts.get(counted) ?? 0) + 1
    counts.set(counted, ordinal)
    const identity = { runId, turn, tool, args, ordinal }
    if (this.options.key !== undefined) return { key: this.options.key(identity) }
    const key = CallKey.derive(identity)
    const legacy = CallKey.legacy(identity)
    return legacy === key ? { key } : { key, legacy }
  }

  async connect(): Promise<void> {
    // The client is open already, and its own: nothing to connect.
  }

  async close(): Promise<void> {
    // The client belongs to the app, which closes it; its calls run on.
  }

  listTools(): Promise<Array<MCPTool>> {
    if (this.cacheToolsList && this.#tools !== undefined) return this.#tools
    const listing = this.client
      .listTools(this.options.server)
      .then((infos) => {
        if (!this.#companions) return infos
        // Two tools of one name: the SDK would call one for the other.
        AgentTool.checkCompanionNames(
          this.options.server,
          infos.map((info) => info.name),
        )
        return infos
      })
      .then((infos) =>
        infos
          .map(
            (info): MCPTool => ({
              name: info.name,
              ...(info.description === undefined ? {} : { description: info.description }),
              inputSchema: schemaOf(info),
            }),
          )
          .concat(this.#companions ? Companions.tools() : []),
      )
    if (this.cacheToolsList) {
      this.#tools = listing
      listing.catch(() => {
        if (this.#tools === listing) this.#tools = undefined
      })
    }
    return listing
  }

  async invalidateToolsCache(): Promise<void> {
    this.#tools = undefined
  }

  async callTool(
    toolName: string,
    args: Record<string, unknown> | null,
    meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions,
  ): Promise<CallToolResultContent> {
    const { content, ...metadata } = await this.callToolResult(toolName, args, meta, options)
    // As the SDK's own servers do: the result's other fields ride on the content array, unlisted.
    for (const [field, value] of Object.entries(metadata))
      if (value !== undefined)
        Object.defineProperty(content, field, { value, enumerable: false, configurable: true })
    return content as CallToolResultContent
  }

  async callToolResult(
    toolName: string,
    args: Record<string, unknown> | null,
    meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions,
  ): Promise<ToolOutput.CallToolResult> {
    const input = args ?? {}
    const given = meta?.[metaKey]
    const givenRun = meta?.[metaRun]
    const givenLegacy = meta?.[metaLegacy]
    let derived: { readonly key: string; readonly legacy?: string | undefined }
    let runId: string
    if (typeof given === "string" && typeof givenRun === "string") {
      derived = { key: given, legacy: typeof givenLegacy === "string" ? givenLegacy : undefined }
      runId = givenRun
    } else {
      // Called by hand, outside a run: no run context to read a run id from.
      if (typeof this.options.runId !== "string")
        throw new RunIdUnknown({ server: this.name, tool: toolName })
      runId = this.options.runId
      derived = this.#key(this.#bare, runId, 0, toolName, input)
    }
    const onInput =
      this.options.onInput === undefined
        ? undefined
        : (request: PromiseClient.PromiseInputRequest) =>
            (this.options.onInput as NonNullable<Options<never>["onInput"]>)({ ...request, runId })
    if (this.#companions && AgentTool.isCompanion(toolName))
      return await Companions.call({
        client: this.client,
        scope: this.options.scope,
        tool: toolName,
        args: input,
        owns: (handle) => (this.options.ownsHandle ?? CallKey.belongsTo)(runId, handle),
        signal: options?.signal,
        onInput,
      })
    // A call recorded under the key an older version derived is still this tool call.
    const key =
      derived.legacy === undefined
        ? derived.key
        : await AgentTool.keyInUse(this.client, derived.key, derived.legacy, this.options.scope)
    let delivered = false
    try {
      const result = await Follow.call({
        client: this.client,
        server: this.options.server,
        scope: this.options.scope,
        tool: toolName,
        args: input,
        key,
        signal: options?.signal,
        mode: this.#mode,
        onAbort: this.options.onAbort ?? "hand-off",
        onInput,
      })
      // A wait the signal stopped gives the run no outcome: it failed or was aborted.
      delivered = options?.signal?.aborted !== true
      return result
    } finally {
      if (!delivered) this.#reopen(runId, toolName, input, key)
    }
  }

  /** The call's outcome did not reach the run: the run making the call again takes its key. */
  #reopen(runId: string, tool: string, args: Record<string, unknown>, key: string): void {
    const open = this.#open.get(runId) ?? new Map<string, Array<string>>()
    this.#open.set(runId, open)
    const same = `${tool}\u0000${CallKey.hashArgs(args)}`
    const keys = open.get(same) ?? []
    if (!keys.includes(key)) keys.push(key)
    open.set(same, keys)
  }
}

/**
 * Makes a durable client's configured server an `MCPServer` for the OpenAI Agents SDK.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <TContext = unknown>(
  client: PromiseClient.PromiseTaskClient,
  options: Options<TContext>,
): DurableMcpServer => new Server(client, options as Options<never>)
