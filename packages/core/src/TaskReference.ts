/**
 * Interop with tasks the app already holds (issue 15, item 8): a task id it got elsewhere, or a
 * `SerializedTaskReference` from the official `@modelcontextprotocol/ext-tasks` requester
 * (`execution.serializeReference()` / `handoff`), is adopted as a durable row, which this client
 * then polls, answers input for, cancels and settles like any call of its own; and a row's task
 * is exported as such a reference, for `session.resumeTask(reference)`.
 *
 * Task ids may be bearer credentials, and keys are shown everywhere (logs, spans, `list`): an
 * adopted row's default key is `adopted:` and the first 16 hex digits of the SHA-256 of its task
 * id (WebCrypto), never the id. Adopting the same id again computes the same key and finds the
 * row. Rows adopted before (keyed and marked `adopted:{taskId}`) are still found: with no key
 * given, adoption looks for that old key first and keeps using it (its outputs are redacted
 * like any text holding a known task id; see `Redaction`).
 *
 * Before it writes anything, adoption asks the server for the task (`tasks/get`): a task id the
 * server does not know (-32602, in either generation) fails with `UnknownTask` and records
 * nothing, rather than a row that would end `expired` on its first poll. A server that cannot
 * answer now does not stop the adoption; its first poll decides.
 *
 * An adopted row never launched anything: it stores no arguments (so it can never be re-issued),
 * its `argumentsHash` is the marker `adopted:{hash}` (so `callTool` with the same key is
 * `KeyReused`), and it starts `working`, due at once, leased to nobody, with the default first poll
 * interval until its first poll brings the task's own fields. Adoption is idempotent by
 * key: adopting the same task under the same key again returns the row, and an adoption cut short
 * by a crash (its row still `pending`, or `in_doubt` once a reconciler found it) is finished by
 * adopting again. A task id is held by one row per server, as always.
 *
 * @since 0.3.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { InvalidKey, UnknownKey, UnknownServer } from "./ClientError.js"
import { HandleRecord, localError, TaskSnapshot, withTransition } from "./HandleRecord.js"
import * as Store from "./HandleStore.js"
import * as Polling from "./Polling.js"
import * as Redaction from "./Redaction.js"
import * as ServerIdentity from "./ServerIdentity.js"
import type { Handle } from "./TaskClient.js"
import type { ServerEndpoint } from "./Wire.js"

const referenceOf = <G extends "v1" | "v2">(generation: G) =>
  Schema.Struct({
    endpointId: Schema.String,
    generation: Schema.Literal(generation),
    taskId: Schema.String.pipe(Schema.minLength(1)),
    originalOperation: Schema.Literal("tools/call"),
  })

/**
 * What ext-tasks 0.2 serialises for a task it holds: its endpoint (an opaque id the app chose
 * for its session), the protocol generation (`v2` is 2026-07-28, `v1` 2025-11-25), the task id
 * and the request that created it. Only `tools/call` tasks are tool calls this client can drive.
 *
 * @since 0.3.0
 * @category schemas
 */
export const SerializedTaskReference = Schema.Union(referenceOf("v2"), referenceOf("v1"))

/**
 * @since 0.3.0
 * @category models
 */
export type SerializedTaskReference = typeof SerializedTaskReference.Type

/**
 * The reference is not one this client can adopt (see `SerializedTaskReference`).
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidReference extends Schema.TaggedError<InvalidReference>()("InvalidReference", {
  reason: Schema.String,
}) {
  override get message(): string {
    return `not an adoptable task reference: ${this.reason}`
  }
}

/**
 * The key already names another call, or the task is already held by another row.
 *
 * @since 0.3.0
 * @category errors
 */
export class AdoptionConflict extends Schema.TaggedError<AdoptionConflict>()("AdoptionConflict", {
  scope: Schema.String,
  key: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `cannot adopt under key ${JSON.stringify(this.key)}: ${this.reason}`
  }
}

/**
 * The server does not know the task id it was asked to adopt (it answered -32602): nothing was
 * recorded. The id is shown shortened (`Redaction.taskId`).
 *
 * @since 0.4.0
 * @category errors
 */
export class UnknownTask extends Schema.TaggedError<UnknownTask>()("UnknownTask", {
  server: Schema.String,
  taskId: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `the server ${this.server} does not know task ${Redaction.taskId(this.taskId)}: ${this.reason}`
  }
}

/**
 * The row has no task to export: it is still being dispatched, in doubt, or was answered
 * directly.
 *
 * @since 0.3.0
 * @category errors
 */
export class NoTask extends Schema.TaggedError<NoTask>()("NoTask", {
  scope: Schema.String,
  key: Schema.String,
}) {
  override get message(): string {
    return `the call ${JSON.stringify(this.key)} holds no task (it is in flight, in doubt, or was answered directly)`
  }
}

/**
 * @since 0.3.0
 * @category models
 */
export interface AdoptOptions {
  /**
   * The row's key. Default `adopted:{hash}` (a SHA-256 prefix of the task id, never the id), so
   * that adopting one task twice finds its row.
   */
  readonly key?: string | undefined
  readonly scope?: string | undefined
  /** The tool the task runs, if the app knows it (shown by `list` and `show`). Default `(adopted)`. */
  readonly tool?: string | undefined
}

/**
 * What adoption needs beyond the task: where it lives and who writes the row.
 *
 * @since 0.3.0
 * @category models
 */
export interface AdoptContext {
  readonly endpoint: ServerEndpoint
  /** Lease owner of the row while it is written (then released). */
  readonly owner: string
  readonly leaseMs: number
  readonly defaultScope: string
  /**
   * Asks the server for the task before anything is written: why not, when the server does not
   * know it (-32602); none when it does or cannot tell now. Without it, the task is adopted
   * unasked.
   */
  readonly probe?:
    | ((
        endpoint: ServerEndpoint,
        taskId: string,
        generation: "v1" | "v2",
      ) => Effect.Effect<Option.Option<string>>)
    | undefined
}

/**
 * @since 0.3.0
 * @category models
 */
export interface Adopted {
  readonly record: HandleRecord
  /** False when this key already held this task: nothing was written. */
  readonly adopted: boolean
}

/** A task id, or an ext-tasks reference decoded at the boundary. */
const decodeTask = (
  task: string | SerializedTaskReference,
): Either.Either<{ readonly taskId: string; readonly generation: "v1" | "v2" }, InvalidReference> => {
  if (typeof task === "string") {
    return task.length === 0
      ? Either.left(new InvalidReference({ reason: "the task id is empty" }))
      : Either.right({ taskId: task, generation: "v2" })
  }
  return Schema.decodeUnknownEither(SerializedTaskReference)(task).pipe(
    Either.mapLeft(
      (error) =>
        new InvalidReference({ reason: ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 500) }),
    ),
  )
}

/**
 * `adopted:` and the first 16 hex digits of SHA-256(taskId): the same id always gives the same
 * key, and the key never shows the id.
 *
 * @since 0.4.0
 * @category constructors
 */
export const adoptedKey = (taskId: string): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(taskId))).pipe(
    Effect.map(
      (digest) =>
        `adopted:${Array.from(new Uint8Array(digest).slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("")}`,
    ),
  )

/** What rows adopted before keys were hashed are keyed and marked with. */
const legacyKey = (taskId: string) => `adopted:${taskId}`

/** The rule `callTool` applies to keys and scopes: they are indexed text, shown in logs and terminals. */
const checkName = (what: "key" | "scope", name: string): Either.Either<string, InvalidKey> =>
  name.length === 0 || name.length > 512
    ? Either.left(new InvalidKey({ what, reason: "must be 1 to 512 characters" }))
    : // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
      /[\u0000-\u001f\u007f]/.test(name)
      ? Either.left(new InvalidKey({ what, reason: "must not contain control characters" }))
      : Either.right(name)

/** The row was written by someone else between reading and adopting it: read it and try again. */
class RowChanged extends Data.TaggedError("RowChanged") {}

/**
 * Adopts a task as a durable row (see the module's comment): written `working` with its task id,
 * due at once, so that `settle(key)` or the background reconciler drives it from there.
 *
 * @since 0.3.0
 * @category constructors
 */
export const adopt = (
  task: string | SerializedTaskReference,
  options: AdoptOptions,
  context: AdoptContext,
): Effect.Effect<
  Adopted,
  | InvalidReference
  | InvalidKey
  | AdoptionConflict
  | UnknownTask
  | ServerIdentity.InvalidServerUrl
  | Store.StoreError,
  Store.HandleStore
> =>
  Effect.gen(function* () {
    const { taskId, generation } = yield* decodeTask(task)
    const store = yield* Store.HandleStore
    const serverId = yield* ServerIdentity.of(context.endpoint)
    const scope = yield* checkName("scope", options.scope ?? context.defaultScope)
    // With no key given: a row adopted under the old key (the id itself) is that task's row.
    const legacy =
      options.key === undefined
        ? Option.filter(
            yield* store.get(scope, legacyKey(taskId)),
            (row) => row.argumentsHash === legacyKey(taskId),
          )
        : Option.none()
    const hashed = yield* adoptedKey(taskId)
    const marker = Option.isSome(legacy) ? legacyKey(taskId) : hashed
    const key = yield* checkName("key", options.key ?? (Option.isSome(legacy) ? legacyKey(taskId) : hashed))
    const conflict = (reason: string) => new AdoptionConflict({ scope, key, reason })
    // The row may change between its insert and the write that adopts it (this instance's own
    // sweep finds a pending row of its owner and records it in doubt): read it again and adopt
    // what is still an unfinished adoption, a few times, before calling it a conflict.
    const once = Effect.gen(function* () {
      const now = yield* store.now
      const inserted = yield* store.insertOrGet({
        scope,
        key,
        serverId,
        tool: options.tool ?? "(adopted)",
        arguments: null,
        argumentsHash: marker,
        owner: context.owner,
        leaseMs: context.leaseMs,
        now,
      })
      const row = inserted.record
      if (row.serverId !== serverId) return yield* conflict("the key names a call to another server")
      if (row.taskId === taskId) return { record: row, adopted: false }
      // Ours, and not yet finished: written just now, or an adoption a crash cut short.
      const unfinished =
        // (an adoption cut short before keys were hashed carries the old marker)
        (row.argumentsHash === marker || row.argumentsHash === legacyKey(taskId)) &&
        row.taskId === null &&
        (row.status === "pending" || row.status === "in_doubt")
      if (!unfinished) return yield* conflict("the key already names another call")
      // Until its first poll tells the task's own fields, the row assumes the default first
      // interval: a takeover waits one known interval before polling (another requester may just
      // have polled), and with no interval at all that would be the longest default wait.
      const snapshot = TaskSnapshot.make({
        pollIntervalMs: Polling.defaults.defaultInitialMs,
        ttlMs: null,
        createdAt: now,
        lastUpdatedAt: now,
        receivedAt: now,
        ...(generation === "v1" ? { generation: "2025-11-25" } : {}),
      })
      // The row's history says it was adopted (its intent entry came with the insert).
      const transition = (cause: string) => ({ at: now, cause, instance: context.owner })
      const working = withTransition(
        row,
        new HandleRecord(
          {
            ...row,
            taskId,
            status: "working",
            snapshot,
            launches: 0,
            nextPollAt: now,
            leaseOwner: null,
            leaseExpiresAt: null,
            lastProblem: null,
            updatedAt: now,
          },
          true,
        ),
        transition("Adopted"),
      )
      return yield* store.update(working).pipe(
        Effect.map((record): Adopted => ({ record, adopted: true })),
        Effect.catchTags({
          VersionConflict: () => Effect.fail(new RowChanged()),
          TaskIdTaken: () =>
            // The task is another row's: this key records that its adoption failed, rather than
            // staying `pending` (which a reconciler would turn in doubt).
            store
              .update(
                withTransition(
                  row,
                  new HandleRecord(
                    {
                      ...row,
                      status: "failed",
                      error: localError(
                        "the task is already held by another call to this server",
                        "adopt_conflict",
                      ),
                      launches: 0,
                      nextPollAt: null,
                      leaseOwner: null,
                      leaseExpiresAt: null,
                      updatedAt: now,
                      settledAt: now,
                    },
                    true,
                  ),
                  transition("AdoptionConflict"),
                ),
              )
              .pipe(
                Effect.catchTags({ VersionConflict: () => Effect.void, TaskIdTaken: () => Effect.void }),
                Effect.zipRight(
                  Effect.fail(conflict("the task is already held by another call to this server")),
                ),
              ),
        }),
      )
    })
    // Ask the server only when this would be a new adoption: a row that holds the task already is
    // returned as it is, even once the server has forgotten the task.
    const existing = yield* store.get(scope, key)
    const holds = Option.isSome(existing) && existing.value.taskId === taskId
    if (!holds && context.probe !== undefined) {
      const unknown = yield* context.probe(context.endpoint, taskId, generation)
      if (Option.isSome(unknown)) {
        return yield* new UnknownTask({ server: context.endpoint.name, taskId, reason: unknown.value })
      }
    }
    return yield* once.pipe(
      Effect.retry({ times: 4, while: (error) => error instanceof RowChanged }),
      Effect.catchIf(
        (error): error is RowChanged => error instanceof RowChanged,
        () => Effect.fail(conflict("the row kept changing while it was being adopted; adopt again")),
      ),
    )
  })

/**
 * The row's task as an ext-tasks `SerializedTaskReference` under the app's `endpointId` (the one
 * its ext-tasks session was created with), or `NoTask` when the row holds none.
 *
 * @since 0.3.0
 * @category constructors
 */
export const toReference = (
  record: HandleRecord,
  endpointId: string,
): Either.Either<SerializedTaskReference, NoTask> =>
  record.taskId === null
    ? Either.left(new NoTask({ scope: record.scope, key: record.key }))
    : Either.right({
        endpointId,
        generation: record.snapshot?.generation === "2025-11-25" ? ("v1" as const) : ("v2" as const),
        taskId: record.taskId,
        originalOperation: "tools/call",
      })

/**
 * The client's side of it, as `TaskClient.adopt` and `TaskClient.reference` expose it.
 *
 * @since 0.3.0
 * @category models
 */
export interface TaskReferences {
  /**
   * Adopts a task the app already holds on the configured server `server` (see the module's
   * comment). The handle's `outcome` settles it like any call; `launched` is false.
   */
  readonly adopt: (
    server: string,
    task: string | SerializedTaskReference,
    options?: AdoptOptions,
  ) => Effect.Effect<
    Handle,
    | UnknownServer
    | InvalidReference
    | InvalidKey
    | AdoptionConflict
    | UnknownTask
    | ServerIdentity.InvalidServerUrl
    | Store.StoreError
  >
  /**
   * The task of `key` as an ext-tasks reference. `endpointId` is the id the app's ext-tasks
   * session uses for that server; default the configured server's name.
   */
  readonly reference: (
    key: string,
    options?: { readonly scope?: string | undefined; readonly endpointId?: string | undefined },
  ) => Effect.Effect<SerializedTaskReference, UnknownKey | NoTask | Store.StoreError>
}

/**
 * The `TaskClient` members this module provides (the engine builds the others).
 *
 * @since 0.3.0
 * @category models
 */
export type Members = keyof TaskReferences

/**
 * Builds `TaskReferences` for a client: its servers, its instance (lease owner), its default
 * scope, and its `settle` for the handles' outcomes.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  store: Store.HandleStore,
  options: {
    readonly servers: ReadonlyArray<ServerEndpoint>
    readonly owner: string
    readonly leaseMs: number
    readonly defaultScope: string
    readonly settle: (key: string, scope: string) => Handle["outcome"]
    readonly probe?: AdoptContext["probe"]
  },
): TaskReferences => {
  const byName = new Map(options.servers.map((server) => [server.name, server]))
  // Server identity -> configured name, for a reference's default endpoint id (a few hashes).
  const nameOf = (serverId: string) =>
    Effect.map(
      Effect.forEach(options.servers, (server) => Effect.either(ServerIdentity.of(server))),
      (ids) => options.servers[ids.findIndex((id) => Either.isRight(id) && id.right === serverId)]?.name,
    )
  return {
    adopt: (server, task, adoptOptions = {}) =>
      Effect.gen(function* () {
        const endpoint = byName.get(server)
        if (endpoint === undefined) return yield* new UnknownServer({ server })
        const { record } = yield* adopt(task, adoptOptions, {
          endpoint,
          owner: options.owner,
          leaseMs: options.leaseMs,
          defaultScope: options.defaultScope,
          probe: options.probe,
        }).pipe(Effect.provideService(Store.HandleStore, store))
        return {
          key: record.key,
          scope: record.scope,
          launched: false,
          record,
          outcome: options.settle(record.key, record.scope),
        }
      }),
    reference: (key, referenceOptions = {}) =>
      Effect.gen(function* () {
        const scope = referenceOptions.scope ?? options.defaultScope
        const found = yield* store.get(scope, key)
        if (Option.isNone(found)) return yield* new UnknownKey({ scope, key })
        const endpointId =
          referenceOptions.endpointId ?? (yield* nameOf(found.value.serverId)) ?? found.value.serverId
        return yield* toReference(found.value, endpointId)
      }),
  }
}
