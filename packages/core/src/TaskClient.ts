/**
 * The client: durable tool calls over MCP Tasks. `callTool` writes the intent before the request
 * leaves and the task id the moment it arrives; the handle then polls to a terminal state,
 * answers input, survives restarts (`reconcile`) and never launches a key twice.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type {
  CannotAnswer,
  CannotReissue,
  InputRequired,
  InvalidAnswer,
  InvalidKey,
  KeyReused,
  NotInDoubt,
  UnknownKey,
  UnknownServer,
} from "./ClientError.js"
import type * as DurationInput from "./DurationInput.js"
import type { HandleRecord, Status } from "./HandleRecord.js"
import type { GcReport, HandleStore, InstanceIdInUse, ListPage, StoreError } from "./HandleStore.js"
import * as Store from "./HandleStore.js"
import * as EngineContext from "./internal/engine/context.js"
import { make as makeEngine } from "./internal/engine.js"
import * as Events from "./internal/events.js"
import * as Outcomes from "./internal/outcomes.js"
import * as Redacting from "./internal/redacting.js"
import * as Telemetry from "./internal/telemetry.js"
import type { InvalidJson, JsonInput, JsonLimits, JsonObject } from "./Json.js"
import type { Outcome } from "./Outcome.js"
import type { Polling } from "./Polling.js"
import * as Redaction from "./Redaction.js"
import type { InvalidServerUrl } from "./ServerIdentity.js"
import type { ServerRequest } from "./ServerRequest.js"
import * as TaskReference from "./TaskReference.js"
import type { InvalidToolDefinition, ServerEndpoint, ToolInfo, Wire, WireError } from "./Wire.js"
import * as WireModule from "./Wire.js"

/**
 * One request for input from the server, surfaced once per key: either inside a task
 * (`tasks/get` with `input_required`) or before one exists (multi round-trip on `tools/call`).
 *
 * @since 0.1.0
 * @category models
 */
export interface InputRequest {
  readonly scope: string
  readonly key: string
  readonly tool: string
  /** The server's key for this request, unique over the task's life. */
  readonly inputKey: string
  /**
   * What the server asks: an elicitation form or URL, a sampling request, the client's roots, or
   * a request this client cannot read (`method: "unknown"`, kept whole). Narrow on `method`.
   */
  readonly request: ServerRequest
}

/**
 * Answers input requests. Its answer is checked against the request and stored durably before
 * it is sent. Failing (or being interrupted, or answering with something that does not fit the
 * request) leaves the request unanswered; it is asked again later.
 *
 * @since 0.1.0
 * @category models
 */
export type InputHandler = (request: InputRequest) => Effect.Effect<JsonInput, unknown>

/**
 * How a client is built. Every field but `servers` is optional, and `undefined` means the
 * default (see `defaults`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** The servers calls may go to, by name. */
  readonly servers: ReadonlyArray<ServerEndpoint>
  /**
   * This instance's lease owner name. One process per id: a restart with the same id resumes its
   * rows at once; instances sharing a store (a fleet on Postgres) need distinct ids.
   * Default "local".
   */
  readonly instanceId?: string | undefined
  /** Scope used when a call names none. Default "default". */
  readonly defaultScope?: string | undefined
  /** How long a lease lasts past a row's next poll. Default 30 s. */
  readonly leaseMs?: number | undefined
  /**
   * What to do with a call that may or may not have launched. `surface` (default) leaves the
   * decision to the application; `reissue-if-idempotent` re-sends it when the tool declares
   * `annotations.idempotentHint: true`.
   */
  readonly inDoubtPolicy?: "surface" | "reissue-if-idempotent" | undefined
  /**
   * Ask servers for `notifications/progress` of direct calls (a `progressToken` on `tools/call`)
   * and keep their material changes on the row (`HandleRecord.progress`, `Progress` events).
   * Default true.
   */
  readonly progress?: boolean | undefined
  /** `hash` keeps only a hash of the arguments (they may hold secrets). Default `full`. */
  readonly storeArguments?: "full" | "hash" | undefined
  /** Default `Json.defaults.argumentLimits`. */
  readonly argumentLimits?: JsonLimits | undefined
  /** Default `Json.defaults.resultLimits`. */
  readonly resultLimits?: JsonLimits | undefined
  readonly onInputRequired?: InputHandler | undefined
  /**
   * How long one input handler may take; past it the question is left unanswered and asked
   * again later. The row's lease is held (renewed) while the handler runs. Default 10 minutes.
   */
  readonly inputTimeout?: Duration.DurationInput | undefined
  /**
   * Give up waiting for a `tools/call` answer after this long and mark the call in doubt. A
   * later answer is still recorded. Default: the wire's own timeout.
   */
  readonly callTimeout?: Duration.DurationInput | undefined
  /**
   * The background reconciler, which polls rows no caller is waiting on (after a restart, or
   * those of a dead instance). `false` turns it off: the client drives only the calls it is
   * asked about (the CLI's commands), and still holds its id (see `claimInstance`). Default on,
   * every 500 ms, in batches of 100 rows, acting on 16 rows at a time (the cap on one instance's
   * polls in flight).
   */
  readonly background?: false | BackgroundOptions | undefined
  /**
   * Holds `instanceId` on the store for as long as the client lives, so that no other client
   * (another process, another client of this process, the CLI) drives rows under the same id
   * meanwhile: building the client fails with `InstanceIdInUse` while one does. Default on,
   * with or without the background reconciler: a client that calls or settles drives rows.
   * `false` only for a client that never drives a row (a listing, `show`), which can then run
   * beside the live process that holds the id.
   */
  readonly claimInstance?: boolean | undefined
  /**
   * Records each configured server (name, URL without credentials, identity, first and last
   * seen) in the store when the client starts, so every process on the store, the CLI
   * included, reaches this app's rows by their server's name. Default on; a URL whose query
   * looks like it carries a secret is never recorded. (The CLI, which configures itself from
   * the store, turns it off.)
   */
  readonly recordServers?: boolean | undefined
  /**
   * Push through `subscriptions/listen`: where a 2026-07-28 server with the Tasks extension takes
   * it, one stream per endpoint carries the status of every open task this instance drives, each
   * written like a poll answer; while the stream is healthy those tasks are polled only as a
   * safety net (once per `safetyNetMs`), and when it drops they are polled at their own interval
   * while it is opened again with backoff. A server without it (no Tasks extension in
   * `server/discover`, `subscriptions/listen` answered "method not found", a 2025-11-25
   * endpoint, a wire that cannot listen) is polled as without push. Default on (`true`, or
   * settings to change its pace); `false` only polls.
   */
  readonly push?: boolean | PushOptions | undefined
}

/**
 * Push settings (see `Options.push`).
 *
 * @since 0.3.0
 * @category models
 */
export interface PushOptions {
  /** How often a task a stream covers is still polled. Default 60 000 ms. */
  readonly safetyNetMs?: number | undefined
  /**
   * The safety net's pace: at most this many of its polls a second over all the tasks this
   * instance's streams cover now, each in a slot of its own (given back when its poll is sent or
   * its task is no longer covered). With more than
   * `safetyNetMs / 1000 × safetyNetPerSecond` of them, each is polled less often than
   * `safetyNetMs`, so the client's CPU and the servers' load stay bounded; tasks launched in a
   * burst are polled spread out. Default 400: 24,000 tasks at the full safety net, 100,000 every
   * 250 s. `Infinity`: no pace.
   */
  readonly safetyNetPerSecond?: number | undefined
  /** New tasks gathered before the stream is opened again with them. Default 20 ms. */
  readonly batchMs?: number | undefined
  /**
   * Tasks one stream carries at most; more open tasks are spread over more streams (a connection
   * each). A stream is opened again to carry a new task and then says the state of every task it
   * carries again, so this bounds what a new task costs. Default 1,000.
   */
  readonly tasksPerStream?: number | undefined
  /** First delay before resubscribing after a drop (exponential, jittered). Default 250 ms. */
  readonly backoffMs?: number | undefined
  /** Longest delay before resubscribing. Default 30 000 ms. */
  readonly maxBackoffMs?: number | undefined
  /**
   * A stream that sends nothing for this long, not even a keep-alive, is taken as half-open and
   * opened again. Default 60 000 ms.
   */
  readonly idleMs?: number | undefined
}

/**
 * The background reconciler's pace (see `Options.background`); defaults in `defaults.background`.
 *
 * @since 0.2.0
 * @category models
 */
export interface BackgroundOptions {
  readonly tickMs?: number | undefined
  readonly batchSize?: number | undefined
  readonly concurrency?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  /** The idempotency key; generated when absent (and returned on the handle). */
  readonly key?: string | undefined
  readonly scope?: string | undefined
  /** Overrides the client's input handler for this call. */
  readonly onInputRequired?: InputHandler | undefined
}

/**
 * A durable call. `record` is the row as of the moment `callTool` returned (the task id is in
 * it once the server handed one out); `outcome` waits for the call to settle.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handle {
  readonly key: string
  readonly scope: string
  /** False when the key already existed and this call attached to it instead of launching. */
  readonly launched: boolean
  readonly record: HandleRecord
  /**
   * Fails like `settle`: the row was deleted meanwhile, its server is not configured here, or it
   * waits for input no handler here answers (`InputRequired`).
   */
  readonly outcome: Effect.Effect<Outcome, SettleError>
}

/**
 * @since 0.4.0
 * @category models
 */
export interface SettleOptions {
  /**
   * Keep waiting while the call waits for input that no handler here answers (someone answers
   * it with `answer`, from any process). Default false: the wait fails with `InputRequired`.
   */
  readonly waitForInput?: boolean | undefined
}

/**
 * Why a wait (`settle`, `outcome`) ended without an outcome.
 *
 * @since 0.4.0
 * @category errors
 */
export type SettleError = UnknownKey | UnknownServer | InputRequired | StoreError

/**
 * @since 0.1.0
 * @category models
 */
export interface ListOptions {
  readonly scope?: string | undefined
  readonly statuses?: ReadonlyArray<Status> | undefined
  /** A configured server's name, or a server identity. */
  readonly server?: string | undefined
  /** 1 to 1000; default 100. */
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ReconcileReport {
  /** Live tasks whose polling resumed (first polls spread over one interval). */
  readonly resumed: number
  /** Calls that were in flight when the process stopped: now in doubt. */
  readonly inDoubt: number
  /** In-doubt calls re-sent by the `reissue-if-idempotent` policy. */
  readonly reissued: number
}

export {
  /**
   * @since 0.4.0
   * @category errors
   */
  CannotAnswer,
  /**
   * @since 0.2.0
   * @category errors
   */
  CannotReissue,
  /**
   * @since 0.4.0
   * @category errors
   */
  InputRequired,
  /**
   * @since 0.4.0
   * @category errors
   */
  InvalidAnswer,
  /**
   * @since 0.1.0
   * @category errors
   */
  InvalidKey,
  /**
   * @since 0.1.0
   * @category errors
   */
  KeyReused,
  /**
   * @since 0.1.0
   * @category errors
   */
  NotInDoubt,
  /**
   * @since 0.1.0
   * @category errors
   */
  UnknownKey,
  /**
   * @since 0.1.0
   * @category errors
   */
  UnknownServer,
} from "./ClientError.js"

/**
 * @since 0.1.0
 * @category errors
 */
export type CallError =
  | UnknownServer
  | InvalidServerUrl
  | InvalidJson
  | InvalidKey
  | KeyReused
  | InvalidToolDefinition
  | StoreError

/**
 * @since 0.1.0
 * @category models
 */
export interface TaskClient {
  readonly callTool: (
    server: string,
    tool: string,
    args: unknown,
    options?: CallOptions,
  ) => Effect.Effect<Handle, CallError>
  /**
   * Waits until the call rests: terminal, or in doubt. Takes over driving when nobody does.
   * Fails with `InputRequired` when the call waits for input no handler here answers (see
   * `SettleOptions.waitForInput`).
   */
  readonly settle: (
    key: string,
    scope?: string,
    options?: SettleOptions,
  ) => Effect.Effect<Outcome, SettleError>
  /**
   * Answers the call's open input request `inputKey`, from any process: checked against the
   * request (`InvalidAnswer`), stored, then sent by whichever instance drives the call.
   * `CannotAnswer` when the call does not ask for it (any more), or it is answered already.
   */
  readonly answer: (
    key: string,
    inputKey: string,
    response: unknown,
    scope?: string,
  ) => Effect.Effect<HandleRecord, UnknownKey | CannotAnswer | InvalidAnswer | InvalidJson | StoreError>
  /**
   * Records the intent to cancel, stops local polling at once, sends `tasks/cancel`, and keeps
   * observing: a task that completes anyway is `completed`. On an in-doubt call, abandons it.
   */
  readonly cancel: (key: string, scope?: string) => Effect.Effect<HandleRecord, UnknownKey | StoreError>
  /**
   * Sends an in-doubt call again, with the same key (servers that deduplicate on it return the
   * same task). `CannotReissue` says why a call cannot be: it is not in doubt, or its arguments
   * were not stored; `InvalidToolDefinition` that the server now defines the tool in a way that
   * must not be called (nothing is written or sent).
   */
  readonly reissue: (
    key: string,
    scope?: string,
  ) => Effect.Effect<Handle, UnknownKey | CannotReissue | UnknownServer | InvalidToolDefinition | StoreError>
  /** Gives up an in-doubt call: it ends `cancelled`. `NotInDoubt` for any other call. */
  readonly abandon: (
    key: string,
    scope?: string,
  ) => Effect.Effect<HandleRecord, UnknownKey | NotInDoubt | StoreError>
  /** Resumes every open row: polls live tasks, marks interrupted calls in doubt, finishes cancels. */
  readonly reconcile: Effect.Effect<ReconcileReport, StoreError>
  /** The local replacement for the removed `tasks/list`. */
  readonly list: (options?: ListOptions) => Effect.Effect<ListPage, StoreError>
  readonly get: (key: string, scope?: string) => Effect.Effect<HandleRecord, UnknownKey | StoreError>
  /**
   * Deletes terminal rows settled longer ago than `retention` (`"7d"`, `"12h"`, or an Effect
   * duration), in every scope unless one is given (a string is the scope); in-doubt rows are
   * kept, and so is a row whose outcome a consumer known in its scope (one that has read
   * `outcomes`) has not acknowledged, until `consumerRetention` has passed. The report says how
   * many rows went, how many wait for a consumer, and which consumers lost outcomes they had not
   * acknowledged. `InvalidDuration` for a retention it cannot read.
   */
  readonly gc: (
    retention: DurationInput.DurationInput,
    options?: string | GcOptions,
  ) => Effect.Effect<GcReport, StoreError | DurationInput.InvalidDuration>

  // --- Outcome delivery (issue 15, item 1); models at the end of this module.
  /**
   * Every call that rests (terminal or in doubt), once per consumer, including calls that
   * settled while the app was down or on another instance; an outcome comes again (after
   * `redeliverAfter`, or at once after a restart) until it is acknowledged (`ack` on the
   * delivered outcome, or `ack(consumer, key)`). Instances sharing a store under one consumer
   * name share the work: each outcome goes to one of them. Never ends by itself.
   */
  readonly outcomes: (options: OutcomesOptions) => Stream.Stream<Delivered, StoreError>
  /** Acknowledges the consumer's delivered outcome of `key`: it is not delivered again. */
  readonly ack: (consumer: string, key: string, scope?: string) => Effect.Effect<boolean, StoreError>
  /**
   * Runs `handler` on each outcome of `outcomes(options)` and acknowledges it once the handler
   * succeeded; an outcome whose handler failed is delivered again. Runs until interrupted.
   */
  readonly onSettled: <E, R>(
    options: OutcomesOptions,
    handler: (delivered: Delivered) => Effect.Effect<void, E, R>,
  ) => Effect.Effect<void, StoreError, R>

  // --- ext-tasks interop (issue 15, item 8); see `TaskReference`.
  /**
   * Adopts a task the app already holds on server `server` (a task id, or an ext-tasks
   * `SerializedTaskReference`) as a durable row: polled, answered, cancelled and settled like a
   * call of this client's own, never re-issued. Idempotent by key (default `adopted:{taskId}`).
   */
  readonly adopt: TaskReference.TaskReferences["adopt"]
  /** The task of `key` as an ext-tasks `SerializedTaskReference`, for `session.resumeTask`. */
  readonly reference: TaskReference.TaskReferences["reference"]

  // --- Live events (issue 15, item 3); models at the end of this module.
  /**
   * Status changes, status messages and input requests, from whichever instance drives the
   * calls (read from the store every `pollIntervalMs`, and at once on each write in this
   * process: the last event of a call driven here comes as its outcome resolves). With a key:
   * that call's events from its first status on, ending once it is terminal; a key with no call
   * yet is waited for, so a subscriber may come before `callTool`. Without: every call of the
   * scope from now on, never ending by itself.
   */
  readonly events: (
    key?: string,
    options?: EventsOptions,
  ) => Stream.Stream<ClientEvent, StoreError | UnknownKey>

  /**
   * The tools a configured server advertises (`tools/list`, every page): what a framework
   * adapter turns into its own tool definitions.
   */
  readonly listTools: (server: string) => Effect.Effect<ReadonlyArray<ToolInfo>, UnknownServer | WireError>

  /**
   * The task ids this client has met, to redact them from what the app shows (see `Redaction`).
   * The client's own logs, spans and the Promise facade's errors already go through it.
   *
   * @since 0.4.0
   */
  readonly redaction: Redaction.Known
}

/**
 * Every default of the client (lease, commit retries, input rounds and timeout, hand-off
 * timeout, spread batch, background reconciler), in one place.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults = EngineContext.defaults

/**
 * @since 0.1.0
 * @category tags
 */
export const TaskClient: Context.Tag<TaskClient, TaskClient> = Context.GenericTag<TaskClient>(
  "@mcp-handles/core/TaskClient",
)

/**
 * Why a client could not be built: a server URL that cannot name a server, an instance id
 * another live client holds (see `Options.claimInstance`), or a
 * store that could not be reached to check.
 *
 * @since 0.2.0
 * @category errors
 */
export type MakeError = InvalidServerUrl | InstanceIdInUse | StoreError

/**
 * Builds a client in the current scope. Closing the scope hands open calls off (their leases
 * are released for the next process); it never cancels them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options,
): Effect.Effect<TaskClient, MakeError, HandleStore | Wire | Polling | Scope.Scope> =>
  Effect.gen(function* () {
    // Every task id the client meets passes through its store: that is where `known` learns
    // them, and every output of the client (logs, spans, errors) is redacted with it.
    const known = Redaction.make()
    const wire = yield* WireModule.Wire
    const store = Redaction.watchStore(yield* Store.HandleStore, known)
    const { client, signals, refusedAnswers } = yield* Redacting.redacting(makeEngine(options), known).pipe(
      Effect.provideService(Store.HandleStore, store),
    )
    const scopeOf = (scope: string | undefined) => scope ?? options.defaultScope ?? defaults.scope
    const members: Omit<TaskClient, "redaction"> = {
      ...client,
      callTool: (server, tool, args, callOptions) =>
        Telemetry.callTool(server, tool, callOptions, client.callTool(server, tool, args, callOptions)),
      settle: (key, scope, settleOptions) =>
        Telemetry.onRow(scopeOf(scope), key, client.settle(key, scope, settleOptions)),
      cancel: (key, scope) => Telemetry.onRow(scopeOf(scope), key, client.cancel(key, scope)),
      reissue: (key, scope) => Telemetry.onRow(scopeOf(scope), key, client.reissue(key, scope)),
      abandon: (key, scope) => Telemetry.onRow(scopeOf(scope), key, client.abandon(key, scope)),
      ...Outcomes.make(store, {
        member: options.instanceId ?? defaults.instanceId,
        defaultScope: scopeOf(undefined),
      }),
      ...Events.make(store, { defaultScope: scopeOf(undefined), written: signals.wait, refusedAnswers }),
      ...TaskReference.make(store, {
        servers: options.servers,
        owner: options.instanceId ?? defaults.instanceId,
        leaseMs: options.leaseMs ?? defaults.leaseMs,
        defaultScope: scopeOf(undefined),
        settle: (key, scope) => Telemetry.onRow(scope, key, client.settle(key, scope)),
        probe: (endpoint, taskId, generation) =>
          wire.getTask(endpoint, taskId, generation === "v1" ? { generation: "2025-11-25" } : undefined).pipe(
            Effect.as(Option.none<string>()),
            Effect.catchAll((error) =>
              Effect.succeed(
                error._tag === "RpcErrorAnswer" && error.error.code === WireModule.invalidParams
                  ? // The server's words may quote the id.
                    Option.some(Redaction.text(error.error.message, [taskId]))
                  : Option.none<string>(),
              ),
            ),
          ),
      }),
    }
    return { ...guard(members, known), redaction: known }
  })

/**
 * Each member's effect (and a returned handle's `outcome`) runs logging and tracing through
 * `Redaction`: whatever the caller installed sees no task id whole.
 */
const guard = <T extends object>(members: T, known: Redaction.Known): T => {
  const wrapEffect = (effect: Effect.Effect<unknown, unknown, unknown>) =>
    Redacting.redacting(
      Effect.map(effect, (value) =>
        typeof value === "object" && value !== null && "outcome" in value && Effect.isEffect(value.outcome)
          ? { ...value, outcome: Redacting.redacting(value.outcome, known) }
          : value,
      ),
      known,
    )
  const out: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(members)) {
    out[name] = Effect.isEffect(member)
      ? wrapEffect(member)
      : typeof member === "function"
        ? (...args: ReadonlyArray<unknown>) => {
            const result: unknown = member(...args)
            return Effect.isEffect(result) ? wrapEffect(result) : result
          }
        : member
  }
  return out as T
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<TaskClient, MakeError, HandleStore | Wire | Polling> =>
  Layer.scoped(TaskClient, make(options))

export type {
  /**
   * Re-exported for convenience.
   *
   * @since 0.1.0
   * @category models
   */
  JsonObject,
}

/**
 * @since 0.3.0
 * @category models
 */
export interface GcOptions {
  /** Every scope when absent. */
  readonly scope?: string | undefined
  /**
   * How long after a call settled its outcome is kept for a known consumer that has not
   * acknowledged it (`"30d"`); past that, GC takes it and reports it. Default: for as long as
   * the consumer is known (forget one with `HandleStore.forgetConsumer`, or
   * `mcp-handles gc --forget-consumer NAME`).
   */
  readonly consumerRetention?: DurationInput.DurationInput | undefined
}

// ---------------------------------------------------------------------------------------------
// Outcome delivery (issue 15, item 1): models of `outcomes`, `ack` and `onSettled`.
// ---------------------------------------------------------------------------------------------

/**
 * @since 0.3.0
 * @category models
 */
export interface OutcomesOptions {
  /**
   * The consumer's durable name. Each consumer gets every outcome; instances that read under one
   * name share them (one instance gets each). One feed per consumer per client: a feed starting
   * takes back what this instance was handed earlier and never acknowledged.
   */
  readonly consumer: string
  /** Default: the client's default scope. */
  readonly scope?: string | undefined
  /** How often the store is asked when nothing was waiting. Default 1 s. */
  readonly pollInterval?: Duration.DurationInput | undefined
  /**
   * How long a delivered outcome waits for its acknowledgement before it is delivered again (to
   * this instance or another). Longer than your handler takes. Default 1 minute.
   */
  readonly redeliverAfter?: Duration.DurationInput | undefined
  /** Outcomes claimed per store request. Default 100. */
  readonly batchSize?: number | undefined
}

/**
 * One outcome handed to a consumer.
 *
 * @since 0.3.0
 * @category models
 */
export interface Delivered {
  readonly consumer: string
  readonly scope: string
  readonly key: string
  readonly outcome: Outcome
  /** The row as it rests (its history included). */
  readonly record: HandleRecord
  /** How many times this outcome was delivered to the consumer, this time included. */
  readonly deliveries: number
  /** Acknowledges this outcome; true when it was still the one delivered. */
  readonly ack: Effect.Effect<boolean, StoreError>
}

// ---------------------------------------------------------------------------------------------
// Live events (issue 15, item 3): models of `events`.
// ---------------------------------------------------------------------------------------------

/**
 * @since 0.3.0
 * @category models
 */
export interface EventsOptions {
  /** Default: the client's default scope. */
  readonly scope?: string | undefined
  /** How often the store is read. Default 500. */
  readonly pollIntervalMs?: number | undefined
}

/**
 * What `events` reports.
 *
 * @since 0.3.0
 * @category models
 */
export type ClientEvent =
  | {
      /** A status change, as the row's history has it. */
      readonly _tag: "StatusChanged"
      readonly scope: string
      readonly key: string
      readonly at: number
      readonly from: Status | null
      readonly to: Status
      readonly cause: string
      readonly instance: string | null
    }
  | {
      /** The server's status message changed. */
      readonly _tag: "StatusMessage"
      readonly scope: string
      readonly key: string
      readonly status: Status
      readonly message: string
    }
  | {
      /**
       * How far the work is (`notifications/progress`), each material change (see
       * `HandleRecord.progressChanged`); `total` is unset when the server does not know it.
       */
      readonly _tag: "Progress"
      readonly scope: string
      readonly key: string
      readonly progress: number
      readonly total: number | undefined
      readonly message: string | undefined
      readonly at: number
    }
  | {
      /** The server asks for input (answered by the instance driving the call). */
      readonly _tag: "InputRequested"
      readonly scope: string
      readonly key: string
      readonly inputKey: string
      readonly request: ServerRequest
    }
  | {
      /**
       * The input handler of this process answered a request with what does not fit it (see
       * `ServerRequest.answerProblems`): nothing was stored or sent, the request stays open, and
       * a wait on the call here fails with `InputRequired`. Reported once per request, to the
       * events of the process whose handler answered.
       *
       * @since 0.4.0
       */
      readonly _tag: "InvalidAnswer"
      readonly scope: string
      readonly key: string
      readonly inputKey: string
      readonly problems: ReadonlyArray<string>
    }
