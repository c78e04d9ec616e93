/**
 * Options every command takes, and the client session built from them.
 */
import * as Options from "@effect/cli/Options"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Polling from "@mcp-handles/core/Polling"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import * as Wire from "@mcp-handles/core/Wire"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { type CliError, describe } from "./CliError.js"
import * as ServerRegistry from "./ServerRegistry.js"
import * as StoreSpec from "./StoreSpec.js"

export const store = Options.text("store").pipe(
  Options.withDescription(
    `sqlite:PATH or postgres://user:pass@host/db (default: $${StoreSpec.environmentVariable}, else sqlite:${StoreSpec.defaultPath})`,
  ),
  Options.optional,
)
export const scope = Options.text("scope").pipe(
  Options.withDescription("the scope (tenant) of the calls"),
  Options.withDefault("default"),
)
export const instance = Options.text("instance").pipe(
  Options.withDescription(
    "lease owner name; processes sharing a store at the same time need distinct names (default: $MCP_HANDLES_INSTANCE, else local)",
  ),
  Options.optional,
)
export const verbose = Options.boolean("verbose").pipe(
  Options.withDescription("print the full cause of a failure"),
)
export const reveal = Options.boolean("reveal").pipe(
  Options.withDescription("print task ids in full (they may be bearer credentials)"),
)
export const json = Options.boolean("json").pipe(Options.withDescription("print JSON instead of text"))
/** Servers added by hand, for rows whose server this store's server list does not know. */
export const servers = Options.text("server").pipe(
  Options.withDescription(
    "a server that stored calls point at: URL, or NAME=URL for calls an application made under its own server name (repeatable)",
  ),
  Options.repeated,
)

export const common = { store, scope, instance, verbose }

export interface CommonOptions {
  readonly store: Option.Option<string>
  readonly scope: string
  readonly instance: Option.Option<string>
  readonly verbose: boolean
}

/** Counts `tasks/get` per task id as they leave, for the live status line. */
export interface PollCounter {
  readonly polls: (taskId: string | null) => number
}

export interface Session {
  readonly client: TaskClient.TaskClient
  readonly spec: StoreSpec.StoreSpec
  readonly servers: ReadonlyArray<ServerRegistry.KnownServer>
  readonly registryFile: string
  readonly counter: PollCounter
  readonly wire: Wire.Wire
  readonly scope: string
}

export interface SessionOptions {
  /** Server URLs to add to the store's server list before the client starts. */
  readonly addServers?: ReadonlyArray<string>
  /** Answers input requests (only commands that drive calls pass one). */
  readonly onInputRequired?: TaskClient.InputHandler
}

const countingWire = (wire: Wire.Wire) => {
  const counts = new Map<string, number>()
  const counted: Wire.Wire = {
    ...wire,
    getTask: (server, taskId) =>
      Effect.suspend(() => {
        counts.set(taskId, (counts.get(taskId) ?? 0) + 1)
        return wire.getTask(server, taskId)
      }),
  }
  return { counted, counter: { polls: (id: string | null) => (id === null ? 0 : (counts.get(id) ?? 0)) } }
}

/**
 * Opens the store and a client over it, configured with every server the store's server list
 * knows. The background reconciler is off: each command drives exactly the calls it names
 * (`resume` reconciles explicitly), so `list` never changes a row and `call` never touches
 * another call.
 */
export const open = (
  options: CommonOptions,
  sessionOptions: SessionOptions = {},
): Effect.Effect<Session, CliError, Scope.Scope> =>
  Effect.gen(function* () {
    const spec = yield* StoreSpec.parse(options.store)
    const registryFile = ServerRegistry.pathFor(spec)
    const added = yield* Effect.forEach(sessionOptions.addServers ?? [], ServerRegistry.endpointFor)
    const store = yield* Layer.build(StoreSpec.layer(spec))
    // Only once the store opened: a bad --store must not leave a server list behind.
    const known =
      added.length > 0
        ? yield* ServerRegistry.remember(registryFile, added)
        : yield* ServerRegistry.load(registryFile)
    const wire = yield* HttpWire.make({ clientCapabilities: { elicitation: {} } })
    const { counted, counter } = countingWire(wire)
    const instanceId = Option.getOrUndefined(options.instance) ?? process.env.MCP_HANDLES_INSTANCE ?? "local"
    const clientLayer = TaskClient.layer({
      servers: ServerRegistry.endpoints(known),
      instanceId,
      defaultScope: options.scope,
      background: false,
      ...(sessionOptions.onInputRequired === undefined
        ? {}
        : { onInputRequired: sessionOptions.onInputRequired }),
    }).pipe(
      Layer.provide(
        Layer.mergeAll(Layer.succeedContext(store), Layer.succeed(Wire.Wire, counted), Polling.layer()),
      ),
    )
    const context = yield* Layer.build(clientLayer).pipe(Effect.mapError(describe))
    return {
      client: Context.get(context, TaskClient.TaskClient),
      spec,
      servers: known,
      registryFile,
      counter,
      wire: counted,
      scope: options.scope,
    }
  })

/** Every row of the scope with these statuses, all pages. */
export const listAll = (
  session: Session,
  filter: Omit<TaskClient.ListOptions, "cursor" | "limit" | "scope"> = {},
) =>
  Effect.gen(function* () {
    const out = []
    let cursor: string | undefined
    for (;;) {
      const page = yield* session.client.list({
        ...filter,
        scope: session.scope,
        limit: 500,
        ...(cursor === undefined ? {} : { cursor }),
      })
      out.push(...page.records)
      if (page.nextCursor === null) return out
      cursor = page.nextCursor
    }
  })

/** The exit status a command ends with, when it is not an error (`bin` reads it at the end). */
export const exitWith = (code: number): Effect.Effect<void> =>
  Effect.sync(() => {
    process.exitCode = code
  })
