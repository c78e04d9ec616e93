/**
 * The TaskClient for code that does not use Effect: the same client behind plain Promises.
 * Every rejection is an `Error` with a `_tag` (the typed error of the operation, `ClientClosed`
 * after `close()`, `InvalidDuration` for a duration it cannot read) and a readable message.
 *
 * ```ts
 * await using client = await openTaskClient({ store: SqliteStore.layer(), servers })
 * const handle = await client.callTool("search", "deep_research", { topic: "tides" })
 * const outcome = await handle.outcome()
 * // leaving the block closes the client: open calls are handed off to the next process, never cancelled
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import * as DurationInput from "./DurationInput.js"
import * as EncryptedStore from "./EncryptedStore.js"
import type * as Encryption from "./Encryption.js"
import type { HandleRecord } from "./HandleRecord.js"
import type { GcReport, HandleStore, ListPage } from "./HandleStore.js"
import * as HttpWire from "./HttpWire.js"
import * as AsyncDispose from "./internal/asyncDispose.js"
import * as PromiseFeeds from "./internal/promiseFeeds.js"
import type { JsonInput } from "./Json.js"
import type { Outcome } from "./Outcome.js"
import * as Polling from "./Polling.js"
import * as Redaction from "./Redaction.js"
import * as TaskClient from "./TaskClient.js"
import type * as TaskReference from "./TaskReference.js"
import type { ToolInfo } from "./Wire.js"

/**
 * The client was closed (by `close()` or by leaving an `await using` block) before or while the
 * operation ran. Nothing was lost: open calls stay in the store for the next client.
 *
 * @since 0.2.0
 * @category errors
 */
export class ClientClosed extends Schema.TaggedError<ClientClosed>()("ClientClosed", {
  /** The operation that was refused or cut short: `callTool`, `settle`, `outcome`, ... */
  operation: Schema.String,
}) {
  override get message(): string {
    return `${this.operation}: the client is closed; its open calls stay in the store for the next client`
  }
}

/**
 * A failure no operation declares: a bug here or in a store adapter. `cause` holds what was
 * thrown.
 *
 * @since 0.2.0
 * @category errors
 */
export class UnexpectedError extends Schema.TaggedError<UnexpectedError>()("UnexpectedError", {
  operation: Schema.String,
  cause: Schema.Defect,
}) {
  override get message(): string {
    const cause = this.cause
    return `${this.operation} failed unexpectedly: ${cause instanceof Error ? cause.message : String(cause)}`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PromiseInputRequest extends TaskClient.InputRequest {}

/**
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions
  extends Omit<TaskClient.Options, "onInputRequired" | "inputTimeout" | "callTimeout"> {
  /** Where handles live: a store layer (`SqliteStore.layer()`, `PgStore.layerUrl(url)`, `MemoryStore.layer`). */
  readonly store: Layer.Layer<HandleStore, unknown>
  /**
   * Encryption at rest (off when absent): the keys, from `Encryption.layerEnv(name)`,
   * `Encryption.layerText(read)` or `Encryption.layerCallback(load)`. Task ids, arguments,
   * results, input requests and answers are then sealed in the store (see `EncryptedStore`).
   */
  readonly encryption?: Layer.Layer<Encryption.KeyProvider, unknown> | undefined
  /** Answers input requests; its answer is stored before it is sent. */
  readonly onInputRequired?: ((request: PromiseInputRequest) => Promise<JsonInput>) | undefined
  /** How long one input handler may take: `"10m"`, `"30s"`, or an Effect duration. Default 10 minutes. */
  readonly inputTimeout?: DurationInput.DurationInput | undefined
  /** Give up waiting for a `tools/call` answer after this long (`"2m"`) and mark the call in doubt. */
  readonly callTimeout?: DurationInput.DurationInput | undefined
  readonly polling?: Partial<Polling.Options> | undefined
  readonly http?: HttpWire.Options | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PromiseHandle {
  readonly key: string
  readonly scope: string
  readonly launched: boolean
  readonly record: HandleRecord
  /**
   * Waits until the call rests: terminal, or in doubt. `signal` stops the wait (not the call).
   * Rejects with `InputRequired` when the call waits for input no handler here answers (unless
   * `waitForInput`).
   */
  readonly outcome: (options?: WaitOptions) => Promise<Outcome>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PromiseTaskClient extends AsyncDisposable {
  readonly callTool: (
    server: string,
    tool: string,
    args: unknown,
    options?: Omit<TaskClient.CallOptions, "onInputRequired">,
  ) => Promise<PromiseHandle>
  /** Waits until the call rests. `signal` stops the wait (not the call). See `PromiseHandle.outcome`. */
  readonly settle: (key: string, scope?: string, options?: WaitOptions) => Promise<Outcome>
  /**
   * Answers the call's open input request `inputKey` (see `TaskClient.answer`): checked against
   * the request, stored, then sent by whichever process drives the call.
   */
  readonly answer: (key: string, inputKey: string, response: unknown, scope?: string) => Promise<HandleRecord>
  readonly cancel: (key: string, scope?: string) => Promise<HandleRecord>
  readonly reissue: (key: string, scope?: string) => Promise<PromiseHandle>
  readonly abandon: (key: string, scope?: string) => Promise<HandleRecord>
  readonly reconcile: () => Promise<TaskClient.ReconcileReport>
  readonly list: (options?: TaskClient.ListOptions) => Promise<ListPage>
  readonly get: (key: string, scope?: string) => Promise<HandleRecord>
  /**
   * Deletes calls settled longer ago than `retention` (`"7d"`, `"12h"`, an Effect duration),
   * except those a known consumer has not acknowledged (see `TaskClient.gc`); says what it did.
   */
  readonly gc: (
    retention: DurationInput.DurationInput,
    options?: string | TaskClient.GcOptions,
  ) => Promise<GcReport>
  /**
   * Stops polling and releases this process's leases; waits still pending reject with
   * `ClientClosed`. Open calls stay open for the next process. Idempotent; `await using` calls it.
   */
  readonly close: () => Promise<void>

  // --- Outcome delivery (issue 15, item 1); models at the end of this module.
  /**
   * Every call that rests (terminal or in doubt), once per consumer, including calls that
   * settled while the app was down or on another instance, until acknowledged:
   *
   * ```ts
   * const feed = client.outcomes({ consumer: "app" })
   * for await (const delivered of feed) {
   *   await record(delivered.outcome)
   *   await delivered.ack() // or feed.ack(delivered.key); unacknowledged, it comes again
   * }
   * ```
   */
  readonly outcomes: (options: PromiseOutcomesOptions) => OutcomeFeed
  /**
   * Status changes, status messages and input requests (see `TaskClient.events`): of one call
   * until it is terminal, or of every call of the scope from now on.
   */
  readonly events: (key?: string, options?: TaskClient.EventsOptions) => EventFeed
  /** Acknowledges the consumer's delivered outcome of `key`: it is not delivered again. */
  readonly ack: (consumer: string, key: string, scope?: string) => Promise<boolean>
  /**
   * Calls `handler` with each outcome of `outcomes(options)` and acknowledges it once the
   * handler resolved; an outcome whose handler threw is delivered again. Runs until `stop()` or
   * `close()`.
   */
  readonly onSettled: (
    options: PromiseOutcomesOptions,
    handler: (delivered: PromiseDelivered) => Promise<void> | void,
  ) => Subscription

  // --- ext-tasks interop (issue 15, item 8); see `TaskClient.adopt` and `TaskReference`.
  /**
   * Adopts a task the app already holds (a task id, or an ext-tasks `SerializedTaskReference`)
   * as a durable row on server `server`; `outcome()` settles it like any call.
   */
  readonly adopt: (
    server: string,
    task: string | TaskReference.SerializedTaskReference,
    options?: TaskReference.AdoptOptions,
  ) => Promise<PromiseHandle>
  /** The task of `key` as an ext-tasks `SerializedTaskReference` (for `session.resumeTask`). */
  readonly reference: (
    key: string,
    options?: { readonly scope?: string | undefined; readonly endpointId?: string | undefined },
  ) => Promise<TaskReference.SerializedTaskReference>

  /** The tools server `server` advertises (`tools/list`), for a framework adapter's tool set. */
  readonly listTools: (server: string) => Promise<ReadonlyArray<ToolInfo>>
}

const optionalDuration = (input: DurationInput.DurationInput | undefined) =>
  input === undefined ? Either.right(undefined) : DurationInput.decodeEither(input)

/** What a promise rejects with: the typed error itself, never Effect's FiberFailure wrapper. */
const rejection = (cause: Cause.Cause<unknown>, operation: string, closed: boolean): Error => {
  // A wait that close() cut short ends interrupted.
  if (closed && Cause.isInterruptedOnly(cause)) return new ClientClosed({ operation })
  const error = Cause.squash(cause)
  return error instanceof Error && "_tag" in error ? error : new UnexpectedError({ operation, cause: error })
}

/**
 * Opens a client. The returned client keeps the process alive while it is open (its background
 * reconciler drives open calls); after `close()` nothing of it is left running.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openTaskClient = async (options: OpenOptions): Promise<PromiseTaskClient> => {
  const {
    store: plainStore,
    encryption,
    polling,
    http,
    onInputRequired,
    inputTimeout,
    callTimeout,
    ...clientOptions
  } = options
  const durations = Either.all({
    inputTimeout: optionalDuration(inputTimeout),
    callTimeout: optionalDuration(callTimeout),
  })
  if (Either.isLeft(durations)) throw durations.left
  const store = encryption === undefined ? plainStore : EncryptedStore.layer(plainStore, encryption)
  // `await using` looks the close up under Symbol.asyncDispose: make sure the runtime has one.
  AsyncDispose.ensure()
  const layer = TaskClient.layer({
    ...clientOptions,
    ...durations.right,
    ...(onInputRequired === undefined
      ? {}
      : {
          // The handler's own rejection (e.g. ai-sdk's NoInputHandler), not an UnknownException
          // around it: the warning then says what the handler said.
          onInputRequired: (request) =>
            Effect.tryPromise({ try: () => onInputRequired(request), catch: (error) => error }),
        }),
  }).pipe(
    Layer.provide(
      Layer.mergeAll(
        store,
        HttpWire.layer({
          ...http,
          // Declaring elicitation tells servers we can answer it.
          ...(onInputRequired === undefined
            ? {}
            : { clientCapabilities: { elicitation: {}, ...http?.clientCapabilities } }),
        }),
        Polling.layer(polling),
      ),
    ),
  )
  const runtime = ManagedRuntime.make(layer)
  // Every operation in flight, so that close() can end the waits instead of leaving them hanging.
  const running = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
  let closing: Promise<void> | undefined
  // The client's known task ids, once it is built: every rejection's message is redacted with
  // them (an error naming a key, a store error quoting a row, a server's error body).
  let known: Redaction.Known | undefined
  const run = <A, E>(
    operation: string,
    effect: Effect.Effect<A, E, TaskClient.TaskClient>,
    signal?: AbortSignal,
  ): Promise<A> => {
    if (closing !== undefined) return Promise.reject(new ClientClosed({ operation }))
    if (signal?.aborted) return Promise.reject(signal.reason)
    const fiber = runtime.runFork(effect)
    running.add(fiber)
    // An aborted wait ends its fiber (the call itself goes on, driven as before).
    const abort = () => Effect.runFork(Fiber.interrupt(fiber))
    signal?.addEventListener("abort", abort, { once: true })
    return new Promise<A>((resolve, reject) =>
      fiber.addObserver((exit) => {
        running.delete(fiber)
        signal?.removeEventListener("abort", abort)
        if (Exit.isSuccess(exit)) resolve(exit.value)
        else if (signal?.aborted && Cause.isInterruptedOnly(exit.cause)) reject(signal.reason)
        else {
          const error = rejection(exit.cause, operation, closing !== undefined)
          reject(known === undefined ? error : Redaction.error(error, known))
        }
      }),
    )
  }
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await Effect.runPromise(Fiber.interruptAll(running))
      await runtime.dispose()
    })()
    return closing
  }

  const client = await run("openTaskClient", TaskClient.TaskClient).catch(async (error: unknown) => {
    // A client that could not be built (a store that did not open, a bad URL) holds nothing open.
    await runtime.dispose()
    throw error
  })
  known = client.redaction
  const promiseHandle = (handle: TaskClient.Handle): PromiseHandle => ({
    key: handle.key,
    scope: handle.scope,
    launched: handle.launched,
    record: handle.record,
    outcome: (waitOptions) =>
      run("outcome", client.settle(handle.key, handle.scope, waitOptions), waitOptions?.signal),
  })
  return {
    callTool: (server, tool, args, callOptions) =>
      run("callTool", Effect.map(client.callTool(server, tool, args, callOptions), promiseHandle)),
    settle: (key, scope, waitOptions) =>
      run("settle", client.settle(key, scope, waitOptions), waitOptions?.signal),
    answer: (key, inputKey, response, scope) => run("answer", client.answer(key, inputKey, response, scope)),
    cancel: (key, scope) => run("cancel", client.cancel(key, scope)),
    reissue: (key, scope) => run("reissue", Effect.map(client.reissue(key, scope), promiseHandle)),
    abandon: (key, scope) => run("abandon", client.abandon(key, scope)),
    reconcile: () => run("reconcile", client.reconcile),
    list: (listOptions) => run("list", client.list(listOptions)),
    get: (key, scope) => run("get", client.get(key, scope)),
    gc: (retention, options) => run("gc", client.gc(retention, options)),
    close,
    [Symbol.asyncDispose]: close,
    ...PromiseFeeds.outcomeDelivery(client, run),
    events: PromiseFeeds.events(client, run),
    adopt: (server, task, adoptOptions) =>
      run("adopt", Effect.map(client.adopt(server, task, adoptOptions), promiseHandle)),
    reference: (key, referenceOptions) => run("reference", client.reference(key, referenceOptions)),
    listTools: (server) => run("listTools", client.listTools(server)),
  }
}

// ---------------------------------------------------------------------------------------------
// Outcome delivery (issue 15, item 1): `outcomes`, `ack`, `onSettled` behind Promises.
// ---------------------------------------------------------------------------------------------

/**
 * `TaskClient.OutcomesOptions`, with durations as people write them (`"30s"`).
 *
 * @since 0.3.0
 * @category models
 */
export interface PromiseOutcomesOptions
  extends Omit<TaskClient.OutcomesOptions, "pollInterval" | "redeliverAfter"> {
  readonly pollInterval?: DurationInput.DurationInput | undefined
  readonly redeliverAfter?: DurationInput.DurationInput | undefined
}

/**
 * @since 0.3.0
 * @category models
 */
export interface PromiseDelivered extends Omit<TaskClient.Delivered, "ack"> {
  /** Acknowledges this outcome; true when it was still the one delivered. */
  readonly ack: () => Promise<boolean>
}

/**
 * An endless async iterable of outcomes. Leaving a `for await` loop (or `close()`) stops it;
 * outcomes it delivered without acknowledgement come again.
 *
 * @since 0.3.0
 * @category models
 */
export interface OutcomeFeed extends AsyncIterable<PromiseDelivered>, AsyncDisposable {
  readonly ack: (key: string, scope?: string) => Promise<boolean>
  readonly close: () => Promise<void>
}

/**
 * @since 0.3.0
 * @category models
 */
export interface Subscription extends AsyncDisposable {
  /** Settles when the subscription ends: resolves after `stop()`, rejects on a store failure or `close()`. */
  readonly done: Promise<void>
  readonly stop: () => Promise<void>
}

// ---------------------------------------------------------------------------------------------
// Live events and aborting waits (issue 15, item 3).
// ---------------------------------------------------------------------------------------------

/**
 * What a wait (`settle`, `outcome`) takes besides its key.
 *
 * @since 0.3.0
 * @category models
 */
export interface WaitOptions extends TaskClient.SettleOptions {
  /** Aborting it stops the wait (the call goes on): the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined
}

/**
 * An async iterable of events (see `TaskClient.events`); leaving a `for await` loop or
 * `close()` stops it.
 *
 * @since 0.3.0
 * @category models
 */
export interface EventFeed extends AsyncIterable<TaskClient.ClientEvent>, AsyncDisposable {
  readonly close: () => Promise<void>
}
