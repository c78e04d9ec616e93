/**
 * The client: durable tool calls behind plain Promises. Every rejection is an `Error` with a
 * `_tag` (`UnknownKey`, `KeyReused`, `InvalidJson`, `UnknownServer`, `StoreError`,
 * `InvalidDuration`, `ClientClosed` after `close()`, ...) and a message meant for people.
 *
 * @since 0.1.0
 */
import * as PromiseClient from "@mcp-handles/core/PromiseClient"
import type { DurationInput } from "./DurationInput.js"
import type { Delivered, EventFeed, OutcomeFeed, OutcomesOptions, Subscription } from "./Feed.js"
import type { HandleRecord, Status } from "./HandleRecord.js"
import * as Stores from "./internal/stores.js"
import type { JsonObject } from "./Json.js"
import type { OpenOptions } from "./OpenOptions.js"
import type { Outcome } from "./Outcome.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface TaskClient extends AsyncDisposable {
  /** Records the call, then sends it; a key already used attaches to that call instead. */
  readonly callTool: (server: string, tool: string, args: unknown, options?: CallOptions) => Promise<Handle>
  /** Waits until the call rests: terminal, or in doubt. `signal` stops the wait (not the call). */
  readonly settle: (key: string, scope?: string, options?: WaitOptions) => Promise<Outcome>
  /**
   * Answers the call's open input request `inputKey`, from any process: checked against the
   * request (`InvalidAnswer`), stored, then sent by whichever process drives the call.
   */
  readonly answer: (key: string, inputKey: string, response: unknown, scope?: string) => Promise<HandleRecord>
  readonly cancel: (key: string, scope?: string) => Promise<HandleRecord>
  /** Sends an in-doubt call again under the same key. */
  readonly reissue: (key: string, scope?: string) => Promise<Handle>
  /** Gives an in-doubt call up without sending it again. */
  readonly abandon: (key: string, scope?: string) => Promise<HandleRecord>
  /** After a restart: resumes open calls, marks interrupted ones in doubt. */
  readonly reconcile: () => Promise<ReconcileReport>
  readonly list: (options?: ListOptions) => Promise<ListPage>
  readonly get: (key: string, scope?: string) => Promise<HandleRecord>
  /**
   * Deletes calls settled longer ago than `retention` (`"7d"`), except those a known consumer
   * has not acknowledged; the second argument is a scope or `GcOptions`.
   */
  readonly gc: (retention: DurationInput, options?: string | GcOptions) => Promise<GcReport>
  /**
   * Stops polling and hands open calls off to the next process (never cancelled); waits still
   * pending reject with `ClientClosed`. Idempotent; `await using` calls it.
   */
  readonly close: () => Promise<void>
  /** Every call that rests, once per consumer, until acknowledged (see `OutcomeFeed`). */
  readonly outcomes: (options: OutcomesOptions) => OutcomeFeed
  /** Status changes, status messages and input requests: of one call, or of every call of the scope. */
  readonly events: (key?: string, options?: EventsOptions) => EventFeed
  /** Acknowledges the consumer's delivered outcome of `key`: it is not delivered again. */
  readonly ack: (consumer: string, key: string, scope?: string) => Promise<boolean>
  /** Calls `handler` with each outcome and acknowledges it once the handler resolved. */
  readonly onSettled: (
    options: OutcomesOptions,
    handler: (delivered: Delivered) => Promise<void> | void,
  ) => Subscription
  /** Adopts a task the app already holds (a task id, or an ext-tasks reference) as a durable call. */
  readonly adopt: (
    server: string,
    task: string | SerializedTaskReference,
    options?: AdoptOptions,
  ) => Promise<Handle>
  /** The task of `key` as an ext-tasks reference (for `session.resumeTask`). */
  readonly reference: (
    key: string,
    options?: { readonly scope?: string | undefined; readonly endpointId?: string | undefined },
  ) => Promise<SerializedTaskReference>
  /** The tools server `server` advertises (`tools/list`), for a framework adapter's tool set. */
  readonly listTools: (server: string) => Promise<ReadonlyArray<ToolInfo>>
}

/**
 * A tool as a server advertises it (`tools/list`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolInfo {
  readonly name: string
  /** The tool's `title`, when the server gives one. */
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly idempotentHint: boolean
  /** `execution.taskSupport` as advertised ("forbidden" | "optional" | "required"), if any. */
  readonly taskSupport: string | undefined
  /** The tool's `inputSchema` as advertised, when it is a JSON object. */
  readonly inputSchema?: JsonObject | undefined
}

/**
 * A durable call. `record` is its row when `callTool` returned (with the task id, once the
 * server handed one out).
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
  /** Waits until the call rests: terminal, or in doubt. `signal` stops the wait (not the call). */
  readonly outcome: (options?: WaitOptions) => Promise<Outcome>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  /** The idempotency key; generated when absent (and returned on the handle). */
  readonly key?: string | undefined
  readonly scope?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface WaitOptions {
  /** Aborting it stops the wait (the call goes on): the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined
  /** Keep waiting while the call waits for input no handler here answers (default: reject with `InputRequired`). */
  readonly waitForInput?: boolean | undefined
}

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
export interface ListPage {
  readonly records: ReadonlyArray<HandleRecord>
  /** Null on the last page. */
  readonly nextCursor: string | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ReconcileReport {
  /** Live tasks whose polling resumed. */
  readonly resumed: number
  /** Calls that were in flight when the process stopped: now in doubt. */
  readonly inDoubt: number
  /** In-doubt calls re-sent by the `reissue-if-idempotent` policy. */
  readonly reissued: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface GcOptions {
  /** Every scope when absent. */
  readonly scope?: string | undefined
  /** How long an outcome a known consumer has not acknowledged is kept. Default: while the consumer is known. */
  readonly consumerRetention?: DurationInput | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface GcReport {
  readonly deleted: number
  /** Rows old enough to go that were kept because a known consumer has not acknowledged them. */
  readonly kept: number
  /** Per consumer and scope, how many deleted rows it had not acknowledged. */
  readonly unacknowledged: ReadonlyArray<{
    readonly consumer: string
    readonly scope: string
    readonly outcomes: number
  }>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface EventsOptions {
  /** Default: the client's default scope. */
  readonly scope?: string | undefined
  /** How often the store is read. Default 500. */
  readonly pollIntervalMs?: number | undefined
}

/**
 * What the official `@modelcontextprotocol/ext-tasks` requester serialises for a task (`v2` is
 * 2026-07-28, `v1` 2025-11-25).
 *
 * @since 0.1.0
 * @category models
 */
export type SerializedTaskReference = {
  readonly endpointId: string
  readonly generation: "v2" | "v1"
  readonly taskId: string
  readonly originalOperation: "tools/call"
}

/**
 * @since 0.1.0
 * @category models
 */
export interface AdoptOptions {
  /** The row's key. Default `adopted:{hash}` (a SHA-256 prefix of the task id, never the id itself). */
  readonly key?: string | undefined
  readonly scope?: string | undefined
  /** The tool the task runs, if known. Default `(adopted)`. */
  readonly tool?: string | undefined
}

/**
 * Opens a client. It keeps the process alive while it is open (its background reconciler
 * drives open calls); after `close()` nothing of it is left running.
 *
 * ```ts
 * await using client = await openTaskClient({ servers: [{ name: "research", url }] })
 * const handle = await client.callTool("research", "slow_compute", { seconds: 2, label: "tides" })
 * const outcome = await handle.outcome()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const openTaskClient = async (options: OpenOptions): Promise<TaskClient> => {
  const { store = { kind: "sqlite" }, http, encryption, ...rest } = options
  return PromiseClient.openTaskClient({
    ...rest,
    ...(encryption === undefined ? {} : { encryption: Stores.encryption(encryption) }),
    store: await Stores.layer(store),
    // Always: with no options the wire still gets Node's request function.
    http: Stores.http(http ?? {}),
  })
}
