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
import type * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as DurationInput from "./DurationInput.js"
import type { HandleRecord } from "./HandleRecord.js"
import type { HandleStore, ListPage, StoreError } from "./HandleStore.js"
import * as HttpWire from "./HttpWire.js"
import * as AsyncDispose from "./internal/asyncDispose.js"
import type { JsonValue } from "./Json.js"
import type { Outcome } from "./Outcome.js"
import * as Polling from "./Polling.js"
import * as TaskClient from "./TaskClient.js"
import type * as TaskReference from "./TaskReference.js"

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
  /** Answers input requests; its answer is stored before it is sent. */
  readonly onInputRequired?: ((request: PromiseInputRequest) => Promise<JsonValue>) | undefined
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
  /** Waits until the call rests: terminal, or in doubt. */
  readonly outcome: () => Promise<Outcome>
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
  readonly settle: (key: string, scope?: string) => Promise<Outcome>
  readonly cancel: (key: string, scope?: string) => Promise<HandleRecord>
  readonly reissue: (key: string, scope?: string) => Promise<PromiseHandle>
  readonly abandon: (key: string, scope?: string) => Promise<HandleRecord>
  readonly reconcile: () => Promise<TaskClient.ReconcileReport>
  readonly list: (options?: TaskClient.ListOptions) => Promise<ListPage>
  readonly get: (key: string, scope?: string) => Promise<HandleRecord>
  /** Deletes calls settled longer ago than `retention` (`"7d"`, `"12h"`, an Effect duration). */
  readonly gc: (retention: DurationInput.DurationInput, scope?: string) => Promise<number>
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
  const { store, polling, http, onInputRequired, inputTimeout, callTimeout, ...clientOptions } = options
  const durations = Either.all({
    inputTimeout: optionalDuration(inputTimeout),
    callTimeout: optionalDuration(callTimeout),
  })
  if (Either.isLeft(durations)) throw durations.left
  // `await using` looks the close up under Symbol.asyncDispose: make sure the runtime has one.
  AsyncDispose.ensure()
  const layer = TaskClient.layer({
    ...clientOptions,
    ...durations.right,
    ...(onInputRequired === undefined
      ? {}
      : { onInputRequired: (request) => Effect.tryPromise(() => onInputRequired(request)) }),
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
  const run = <A, E>(operation: string, effect: Effect.Effect<A, E, TaskClient.TaskClient>): Promise<A> => {
    if (closing !== undefined) return Promise.reject(new ClientClosed({ operation }))
    const fiber = runtime.runFork(effect)
    running.add(fiber)
    return new Promise<A>((resolve, reject) =>
      fiber.addObserver((exit) => {
        running.delete(fiber)
        if (Exit.isSuccess(exit)) resolve(exit.value)
        else reject(rejection(exit.cause, operation, closing !== undefined))
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
  const promiseHandle = (handle: TaskClient.Handle): PromiseHandle => ({
    key: handle.key,
    scope: handle.scope,
    launched: handle.launched,
    record: handle.record,
    outcome: () => run("outcome", handle.outcome),
  })
  return {
    callTool: (server, tool, args, callOptions) =>
      run("callTool", Effect.map(client.callTool(server, tool, args, callOptions), promiseHandle)),
    settle: (key, scope) => run("settle", client.settle(key, scope)),
    cancel: (key, scope) => run("cancel", client.cancel(key, scope)),
    reissue: (key, scope) => run("reissue", Effect.map(client.reissue(key, scope), promiseHandle)),
    abandon: (key, scope) => run("abandon", client.abandon(key, scope)),
    reconcile: () => run("reconcile", client.reconcile),
    list: (listOptions) => run("list", client.list(listOptions)),
    get: (key, scope) => run("get", client.get(key, scope)),
    gc: (retention, scope) =>
      run(
        "gc",
        Effect.flatMap(DurationInput.decode(retention), (duration) => client.gc(duration, scope)),
      ),
    close,
    [Symbol.asyncDispose]: close,
    ...outcomeDelivery(client, run),
    adopt: (server, task, adoptOptions) =>
      run("adopt", Effect.map(client.adopt(server, task, adoptOptions), promiseHandle)),
    reference: (key, referenceOptions) => run("reference", client.reference(key, referenceOptions)),
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

type Run = <A, E>(operation: string, effect: Effect.Effect<A, E, TaskClient.TaskClient>) => Promise<A>

const decodeOutcomesOptions = (options: PromiseOutcomesOptions): TaskClient.OutcomesOptions => {
  const durations = Either.all({
    pollInterval: optionalDuration(options.pollInterval),
    redeliverAfter: optionalDuration(options.redeliverAfter),
  })
  if (Either.isLeft(durations)) throw durations.left
  return { ...options, ...durations.right }
}

const outcomeDelivery = (client: TaskClient.TaskClient, run: Run) => {
  const promiseDelivered = (delivered: TaskClient.Delivered): PromiseDelivered => ({
    ...delivered,
    ack: () => run("ack", delivered.ack),
  })

  const outcomes = (options: PromiseOutcomesOptions): OutcomeFeed => {
    const stream = client.outcomes(decodeOutcomesOptions(options))
    const scope = Effect.runSync(Scope.make())
    let pull: Promise<Effect.Effect<Chunk.Chunk<TaskClient.Delivered>, Option.Option<StoreError>>> | undefined
    const buffer: Array<PromiseDelivered> = []
    let closed = false
    const close = async () => {
      closed = true
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
    const next = async (): Promise<IteratorResult<PromiseDelivered, undefined>> => {
      for (;;) {
        const head = buffer.shift()
        if (head !== undefined) return { done: false, value: head }
        if (closed) return { done: true, value: undefined }
        pull ??= run("outcomes", Scope.extend(Stream.toPull(stream), scope))
        const chunk = await run(
          "outcomes",
          Effect.catchAll(
            Effect.flatMap(
              Effect.promise(() => pull as NonNullable<typeof pull>),
              (p) => p,
            ),
            Option.match({ onNone: () => Effect.succeed(null), onSome: Effect.fail }),
          ),
        )
        if (chunk === null) return { done: true, value: undefined }
        for (const delivered of chunk) buffer.push(promiseDelivered(delivered))
      }
    }
    return {
      [Symbol.asyncIterator]: () => ({
        next,
        return: async () => {
          await close()
          return { done: true, value: undefined }
        },
      }),
      ack: (key, keyScope) => run("ack", client.ack(options.consumer, key, keyScope ?? options.scope)),
      close,
      [Symbol.asyncDispose]: close,
    }
  }

  const onSettled = (
    options: PromiseOutcomesOptions,
    handler: (delivered: PromiseDelivered) => Promise<void> | void,
  ): Subscription => {
    const decoded = decodeOutcomesOptions(options)
    const stopped = Effect.runSync(Deferred.make<void>())
    const done = run(
      "onSettled",
      Effect.raceFirst(
        client
          .onSettled(decoded, (delivered) =>
            Effect.tryPromise(async () => handler(promiseDelivered(delivered))),
          )
          .pipe(
            Effect.tapErrorCause((cause) =>
              Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("onSettled stopped", cause),
            ),
          ),
        Deferred.await(stopped),
      ),
    )
    // Whoever ignores `done` gets the failure in the log (above), not an unhandled rejection.
    done.catch(() => {})
    const stop = () => {
      Effect.runSync(Deferred.succeed(stopped, undefined))
      return done.catch(() => {})
    }
    return { done, stop, [Symbol.asyncDispose]: stop }
  }

  return {
    outcomes,
    ack: (consumer: string, key: string, scope?: string) => run("ack", client.ack(consumer, key, scope)),
    onSettled,
  }
}
