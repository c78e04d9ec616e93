/**
 * The TaskClient for code that does not use Effect: the same client behind plain Promises.
 * Errors reject with the same typed error objects (check `error._tag`).
 *
 * ```ts
 * const client = await openTaskClient({ store: SqliteStore.layer({ filename: "tasks.db" }), servers })
 * const handle = await client.callTool("search", "deep_research", { topic: "tides" })
 * const outcome = await handle.outcome()
 * await client.close() // hands open calls off to the next process; never cancels them
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type { HandleRecord } from "./HandleRecord.js"
import type { HandleStore, ListPage } from "./HandleStore.js"
import * as HttpWire from "./HttpWire.js"
import type { JsonValue } from "./Json.js"
import type { Outcome } from "./Outcome.js"
import * as Polling from "./Polling.js"
import * as TaskClient from "./TaskClient.js"

/** @since 0.1.0 */
export interface PromiseInputRequest extends TaskClient.InputRequest {}

/** @since 0.1.0 */
export interface OpenOptions extends Omit<TaskClient.Options, "onInputRequired"> {
  /** Where handles live: a store layer (`SqliteStore.layer(...)`, `PgStore.layer(...)`, `MemoryStore.layer`). */
  readonly store: Layer.Layer<HandleStore, unknown>
  /** Answers input requests; its answer is stored before it is sent. */
  readonly onInputRequired?: (request: PromiseInputRequest) => Promise<JsonValue>
  readonly polling?: Partial<Polling.Options>
  readonly http?: HttpWire.Options
}

/** @since 0.1.0 */
export interface PromiseHandle {
  readonly key: string
  readonly scope: string
  readonly launched: boolean
  readonly record: HandleRecord
  /** Waits until the call rests: terminal, or in doubt. */
  readonly outcome: () => Promise<Outcome>
}

/** @since 0.1.0 */
export interface PromiseTaskClient {
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
  readonly gc: (retention: string | number, scope?: string) => Promise<number>
  /** Stops polling and releases this process's leases. Open calls stay open for the next process. */
  readonly close: () => Promise<void>
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const openTaskClient = async (options: OpenOptions): Promise<PromiseTaskClient> => {
  const { store, polling, http, onInputRequired, ...clientOptions } = options
  const layer = TaskClient.layer({
    ...clientOptions,
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
  // Reject with the typed error itself (check `error._tag`), not Effect's FiberFailure wrapper.
  const run = <A, E>(effect: Effect.Effect<A, E, TaskClient.TaskClient>): Promise<A> =>
    runtime.runPromiseExit(effect).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      throw Cause.squash(exit.cause)
    })
  const client = await run(TaskClient.TaskClient)
  const promiseHandle = (handle: TaskClient.Handle): PromiseHandle => ({
    key: handle.key,
    scope: handle.scope,
    launched: handle.launched,
    record: handle.record,
    outcome: () => run(handle.outcome),
  })
  return {
    callTool: (server, tool, args, callOptions) =>
      run(Effect.map(client.callTool(server, tool, args, callOptions), promiseHandle)),
    settle: (key, scope) => run(client.settle(key, scope)),
    cancel: (key, scope) => run(client.cancel(key, scope)),
    reissue: (key, scope) => run(Effect.map(client.reissue(key, scope), promiseHandle)),
    abandon: (key, scope) => run(client.abandon(key, scope)),
    reconcile: () => run(client.reconcile),
    list: (listOptions) => run(client.list(listOptions)),
    get: (key, scope) => run(client.get(key, scope)),
    gc: (retention, scope) => run(client.gc(retention as never, scope)),
    close: () => runtime.dispose(),
  }
}
