/**
 * Options every command takes, and the client session built from them.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import * as EncryptedStore from "@mcp-handles/core/EncryptedStore"
import * as Encryption from "@mcp-handles/core/Encryption"
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Json from "@mcp-handles/core/Json"
import * as Polling from "@mcp-handles/core/Polling"
import * as Redaction from "@mcp-handles/core/Redaction"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import * as Wire from "@mcp-handles/core/Wire"
import { NodeCipher } from "@mcp-handles/platform-node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Auth from "./Auth.js"
import { type CliError, fromKnown, usage } from "./CliError.js"
import type * as Input from "./Input.js"
import * as Render from "./Render.js"
import type * as Row from "./Row.js"
import * as ServerRegistry from "./ServerRegistry.js"
import * as Spec from "./Spec.js"
import * as StoreSpec from "./StoreSpec.js"

/**
 * @since 0.1.0
 * @category options
 */
export const store = Spec.optional(
  Spec.text("store", {
    placeholder: "STORE",
    description: `where calls are kept: sqlite:PATH, or postgres://user:pass@host/db (default: $${StoreSpec.environmentVariable}, else sqlite:${StoreSpec.defaultPath}). Only call creates a store; the other commands fail on a missing one`,
    example: "--store sqlite:./ops/tasks.db",
    completeFiles: true,
  }),
)

/**
 * @since 0.1.0
 * @category options
 */
export const scope = Spec.withDefault(
  Spec.text("scope", {
    placeholder: "NAME",
    description: "the scope (tenant, principal) whose calls to act on",
    example: "--scope acme",
  }),
  "default",
  "default",
)

/**
 * @since 0.1.0
 * @category options
 */
export const instance = Spec.optional(
  Spec.text("instance", {
    placeholder: "ID",
    description:
      "the lease owner name; processes sharing a store at the same time need distinct names (default: $MCP_HANDLES_INSTANCE, else local)",
    example: "--instance ops-laptop",
  }),
)

/**
 * @since 0.1.0
 * @category options
 */
export const verbose = Spec.boolean("verbose", {
  description: "print the full cause of a failure, and debug logs, on stderr",
  example: "--verbose",
})

/**
 * @since 0.1.0
 * @category options
 */
export const reveal = Spec.boolean("reveal", {
  description: "print task ids in full (they may be bearer credentials)",
  example: "--reveal",
})

/**
 * @since 0.1.0
 * @category options
 */
export const json = Spec.boolean("json", {
  description: "print JSON on stdout instead of text (one document per line; docs/cli.md gives its shape)",
  example: "--json",
})

/**
 * Servers added by hand, for rows whose server this store's server list does not know.
 *
 * @since 0.1.0
 * @category options
 */
export const servers = Spec.repeated(
  Spec.text("server", {
    placeholder: "[NAME=]URL",
    description:
      "a server that stored calls point at: URL, or NAME=URL for calls an application made under its own server name",
    example: "--server research=https://mcp.example.com/mcp",
  }),
)

/**
 * Whether a command that follows calls listens for their status (`subscriptions/listen`) where
 * the server offers it, polling as the safety net; `off` only polls. On by default, as in the
 * library.
 *
 * @since 0.4.0
 * @category options
 */
export const push = Spec.withDefault(
  Spec.choice("push", ["on", "off"], {
    description:
      "listen for the calls' status where the server offers subscriptions/listen (polling only as a safety net, and where it does not); off only polls",
    example: "--push off",
  }),
  "on",
  "on",
)

/**
 * @since 0.1.0
 * @category options
 */
export const keyEnv = Spec.optional(
  Spec.text("key-env", {
    placeholder: "NAME",
    description:
      "the environment variable holding the store's encryption keys (id:base64, newest first, comma-separated); never pass a key itself",
    example: "--key-env MCP_HANDLES_KEY",
  }),
)

/**
 * @since 0.5.0
 * @category options
 */
export const keyFile = Spec.optional(
  Spec.text("key-file", {
    placeholder: "PATH",
    description: "a file holding the store's encryption keys (id:base64 per line, newest first)",
    example: "--key-file /run/secrets/mcp-handles-key",
    completeFiles: true,
  }),
)

/**
 * @since 0.1.0
 * @category options
 */
export const common = { store, scope, instance, verbose, keyEnv, keyFile }

/**
 * @since 0.1.0
 * @category models
 */
export interface CommonOptions {
  readonly store: Option.Option<string>
  readonly scope: string
  readonly instance: Option.Option<string>
  readonly verbose: boolean
  readonly keyEnv: Option.Option<string>
  readonly keyFile: Option.Option<string>
  /** A command's `--reveal`: refused on an encrypted store without its key. */
  readonly reveal?: boolean | undefined
}

/**
 * The encryption the options ask for: none, or the keys of `--key-env` / `--key-file` (read
 * here; the CLI never takes a key on its command line nor writes one).
 *
 * @since 0.5.0
 */
export const encryption = (
  options: Pick<CommonOptions, "keyEnv" | "keyFile">,
): Effect.Effect<Option.Option<Encryption.Encryption>, CliError> => {
  if (Option.isSome(options.keyEnv) && Option.isSome(options.keyFile)) {
    return Effect.fail(usage("--key-env and --key-file: give one of them"))
  }
  const provider = Option.isSome(options.keyEnv)
    ? Encryption.layerEnv(options.keyEnv.value)
    : Option.isSome(options.keyFile)
      ? Encryption.layerText(
          Effect.try(() => readFileSync((options.keyFile as Option.Some<string>).value, "utf8")),
        )
      : undefined
  if (provider === undefined) return Effect.succeedNone
  return Encryption.Encryption.pipe(
    // node:crypto rather than WebCrypto: the same envelopes, without a thread-pool round trip each.
    Effect.provide(Encryption.layer.pipe(Layer.provide(Layer.merge(provider, NodeCipher.layer)))),
    Effect.asSome,
    Effect.mapError((error) => usage(error.message)),
  )
}

/**
 * Counts `tasks/get` per task id as they leave, for the live status line.
 *
 * @since 0.1.0
 * @category models
 */
export interface PollCounter {
  readonly polls: (taskId: string | null) => number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Session {
  readonly client: TaskClient.TaskClient
  readonly spec: StoreSpec.StoreSpec
  /** The store's servers (its `servers` table), as of when the session opened. */
  readonly servers: ReadonlyArray<ServerRegistry.KnownServer>
  /** The store itself, for what the client does not do: servers, pages across every scope. */
  readonly store: HandleStore.HandleStore
  readonly counter: PollCounter
  readonly wire: Wire.Wire
  readonly scope: string
  /**
   * Lets the command's headers go to these servers (by identity). Until a command says which
   * servers it acts on, headers go nowhere: a credential for one server must never reach another.
   */
  readonly authorize: (serverIds: Iterable<string>) => void
  /** What `Row.make` needs, with the time of the call. */
  readonly rowContext: (reveal: boolean) => Row.Context
}

/**
 * @since 0.1.0
 * @category models
 */
export interface SessionOptions {
  /** `read` (the default) fails on a missing store; only `create` makes one. */
  readonly mode?: StoreSpec.Mode | undefined
  /** Servers (`[NAME=]URL`) to record in the store before the client starts. */
  readonly addServers?: ReadonlyArray<string> | undefined
  /** Answers input requests (only commands that drive calls pass one). */
  readonly input?: Input.Input | undefined
  /** Request headers, sent only to the servers the command `authorize`s. */
  readonly headers?: Auth.Headers | undefined
  /**
   * The command drives calls (polls, dispatches, cancels, decides): it takes its instance id on
   * the store, and is refused while a live process holds it. The other commands only read (or
   * edit the server list, or delete settled rows) and run beside a live application.
   */
  readonly drives?: boolean | undefined
  /** `--push`, for the commands that follow calls; the others keep the client's default. */
  readonly push?: "on" | "off" | undefined
  /** The largest arguments a call may send, in bytes (`call --max-args-bytes`). */
  readonly maxArgsBytes?: number | undefined
}

const countingWire = (wire: Wire.Wire) => {
  const counts = new Map<string, number>()
  const counted: Wire.Wire = {
    ...wire,
    // The row's origin goes through: a 2025-11-25 task is asked for in its own generation.
    getTask: (server, taskId, origin) =>
      Effect.suspend(() => {
        counts.set(taskId, (counts.get(taskId) ?? 0) + 1)
        return wire.getTask(server, taskId, origin)
      }),
  }
  return { counted, counter: { polls: (id: string | null) => (id === null ? 0 : (counts.get(id) ?? 0)) } }
}

const isSealed = (record: HandleRecord.HandleRecord) => EncryptedStore.keyIds(record).size > 0

/**
 * `store`, failing with `refusal` (as a store error's cause, which the CLI reports as it is) as
 * soon as any record it reads is sealed: the check covers every row the command touches, not a
 * sample.
 */
const refuseSealed = (store: HandleStore.HandleStore, refusal: CliError): HandleStore.HandleStore => {
  const check =
    (operation: string) =>
    (record: HandleRecord.HandleRecord): Effect.Effect<void, HandleStore.StoreError> =>
      isSealed(record)
        ? Effect.fail(new HandleStore.StoreError({ operation, message: refusal.message, cause: refusal }))
        : Effect.void
  return HandleStore.HandleStore.of({
    ...store,
    insertOrGet: (handle) =>
      Effect.tap(store.insertOrGet(handle), (inserted) => check("insertOrGet")(inserted.record)),
    get: (scope, key) =>
      Effect.tap(store.get(scope, key), Option.match({ onNone: () => Effect.void, onSome: check("get") })),
    claimDue: (options) =>
      Effect.tap(store.claimDue(options), (records) => Effect.forEach(records, check("claimDue"))),
    list: (filter) => Effect.tap(store.list(filter), (page) => Effect.forEach(page.records, check("list"))),
    claimOutcomes: (options) =>
      Effect.tap(store.claimOutcomes(options), (deliveries) =>
        Effect.forEach(deliveries, (delivery) => check("claimOutcomes")(delivery.record)),
      ),
  })
}

/**
 * Opens the store and a client over it, configured with every server the store's server list
 * knows. The background reconciler is off: each command drives exactly the calls it names
 * (`resume` reconciles explicitly), so `list` never changes a row and `call` never touches
 * another call. A command that drives holds its instance id meanwhile (see `drives`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (
  options: CommonOptions,
  sessionOptions: SessionOptions = {},
): Effect.Effect<Session, CliError, Scope.Scope> =>
  Effect.gen(function* () {
    const spec = yield* StoreSpec.parse(options.store)
    const added = yield* Effect.forEach(sessionOptions.addServers ?? [], ServerRegistry.endpointFor)
    const keys = yield* encryption(options)
    const opened = yield* Layer.build(StoreSpec.layer(spec, sessionOptions.mode ?? "read"))
    const plain = Context.get(opened, HandleStore.HandleStore)
    // Without the key the sealed fields show as `encrypted`: there is nothing to reveal, and a
    // command that writes would write a row it cannot read.
    const refusal =
      Option.isNone(keys) && (options.reveal === true || sessionOptions.drives === true)
        ? usage(
            `${options.reveal === true ? "--reveal" : "this command"}: this store is encrypted; give its keys with --key-env NAME or --key-file PATH${options.reveal === true ? " to read task ids, arguments and results" : ""}`,
          )
        : undefined
    if (refusal !== undefined) {
      // The first row answers at once for a store encrypted from the start; `refuseSealed`
      // catches a sealed row further on (a store that had encryption turned on later).
      const sample = yield* plain.list({ limit: 1 }).pipe(Effect.mapError(fromKnown))
      if (sample.records.some(isSealed)) return yield* Effect.fail(refusal)
    }
    // Every record the command reads or writes tells the CLI's redaction its task ids.
    const handleStore = Redaction.watchStore(
      Option.isSome(keys)
        ? EncryptedStore.make(plain, keys.value)
        : refusal === undefined
          ? plain
          : refuseSealed(plain, refusal),
      Render.known,
    )
    const store = Context.add(opened, HandleStore.HandleStore, handleStore)
    // A server list an earlier version kept in a file beside the store moves into the store once.
    yield* ServerRegistry.importLegacy(handleStore, ServerRegistry.legacyFileFor(spec))
    const known =
      added.length > 0
        ? yield* ServerRegistry.remember(handleStore, added)
        : yield* ServerRegistry.load(handleStore)
    const wire = yield* HttpWire.make({ clientCapabilities: { elicitation: {} } })
    const { counted, counter } = countingWire(wire)
    const headers = sessionOptions.headers ?? {}
    const authorized = new Set<string>()
    const endpoints = ServerRegistry.endpoints(known).map(
      (endpoint): Wire.ServerEndpoint => ({
        ...endpoint,
        // Looked up per request: `authorize` may come after the client was built.
        headers: () => (authorized.has(endpoint.name) ? headers : {}),
      }),
    )
    const instanceId = Option.getOrUndefined(options.instance) ?? process.env.MCP_HANDLES_INSTANCE ?? "local"
    const clientLayer = TaskClient.layer({
      servers: endpoints,
      instanceId,
      defaultScope: options.scope,
      background: false,
      claimInstance: sessionOptions.drives === true,
      // The servers came from the store: recording them again would only write to it.
      recordServers: false,
      ...(sessionOptions.push === undefined ? {} : { push: sessionOptions.push === "on" }),
      ...(sessionOptions.maxArgsBytes === undefined
        ? {}
        : {
            argumentLimits: { ...Json.defaults.argumentLimits, maxBytes: sessionOptions.maxArgsBytes },
          }),
      ...(sessionOptions.input?.handler === undefined
        ? {}
        : { onInputRequired: sessionOptions.input.handler }),
    }).pipe(
      Layer.provide(
        Layer.mergeAll(Layer.succeedContext(store), Layer.succeed(Wire.Wire, counted), Polling.layer()),
      ),
    )
    const context = yield* Layer.build(clientLayer).pipe(Effect.mapError(fromKnown))
    return {
      client: Context.get(context, TaskClient.TaskClient),
      spec,
      servers: known,
      store: handleStore,
      counter,
      wire: counted,
      scope: options.scope,
      authorize: (serverIds) => {
        for (const id of serverIds) {
          const server = ServerRegistry.serverOf(id, known)
          if (server !== undefined) authorized.add(server.name)
        }
      },
      rowContext: (reveal) => ({ reveal, servers: known, now: Date.now() }),
    }
  })

/**
 * Refuses headers that would go to more than one server: each credential belongs to one.
 *
 * @since 0.2.0
 */
export const oneServerForHeaders = (
  session: Session,
  headers: Auth.Headers,
  serverIds: Iterable<string>,
): Effect.Effect<void, CliError> => {
  const ids = [...new Set(serverIds)]
  if (Object.keys(headers).length === 0 || ids.length <= 1) return Effect.void
  const names = ids.map((id) => ServerRegistry.displayName(id, session.servers))
  return Effect.fail(
    usage(
      `--header would be sent to ${ids.length} servers (${names.join(", ")}); a credential belongs to one. Pass --only-server NAME`,
    ),
  )
}

/**
 * Every row of the scope with these statuses, all pages.
 *
 * @since 0.1.0
 */
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
        limit: 1000,
        ...(cursor === undefined ? {} : { cursor }),
      })
      out.push(...page.records)
      if (page.nextCursor === null) return out
      cursor = page.nextCursor
    }
  })

/**
 * Every row of every scope (an operator's view: `list --all-scopes`), all pages, read from the
 * store directly: a client confines itself to one scope.
 *
 * @since 0.3.0
 */
export const listAllScopes = (
  session: Session,
  filter: Omit<HandleStore.ListFilter, "limit" | "cursor"> = {},
): Effect.Effect<ReadonlyArray<HandleRecord.HandleRecord>, CliError> =>
  Effect.gen(function* () {
    const out: Array<HandleRecord.HandleRecord> = []
    let cursor: string | undefined
    for (;;) {
      const page = yield* session.store.list({
        ...filter,
        limit: 1000,
        ...(cursor === undefined ? {} : { cursor }),
      })
      out.push(...page.records)
      if (page.nextCursor === null) return out
      cursor = page.nextCursor
    }
  }).pipe(Effect.mapError(fromKnown))

/**
 * The exit status a command ends with when it did not fail (a call in doubt: 3). `Cli.run`
 * reads it once the command is done.
 *
 * @since 0.2.0
 */
export const exitCode: FiberRef.FiberRef<number> = FiberRef.unsafeMake(0)

/**
 * Ends the command with this exit status, unless it fails.
 *
 * @since 0.1.0
 */
export const exitWith = (code: number): Effect.Effect<void> => FiberRef.set(exitCode, code)
