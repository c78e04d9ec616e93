/**
 * The durable record of one tool call (a row of the store), as plain data: `get`, `list`,
 * `cancel` and a handle's `record` return it. The same shape as `@mcp-handles/core`'s
 * `HandleRecord`, which `test/types.test.ts` holds it to.
 *
 * @since 0.1.0
 */
import type { JsonObject, JsonValue } from "./Json.js"
import type { CallToolResult } from "./ToolResult.js"

/**
 * The lifecycle of a call. `pending` is the write-ahead intent (no answer yet); `in_doubt` means
 * the request may have reached the server but no usable answer came back.
 *
 * @since 0.1.0
 * @category models
 */
export type Status =
  | "pending"
  | "working"
  | "input_required"
  | "completed"
  | "failed"
  | "cancelled"
  | "expired"
  | "in_doubt"

/**
 * What the server last told us about the task. Times are epoch milliseconds.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskSnapshot {
  readonly statusMessage?: string | undefined
  readonly pollIntervalMs?: number | undefined
  readonly ttlMs: number | null
  /** Server clock. */
  readonly createdAt: number
  readonly lastUpdatedAt: number
  /** Local clock: when the task id first reached us. */
  readonly receivedAt: number
  /** The protocol generation the task was created under; absent means 2026-07-28. */
  readonly generation?: string | undefined
  /** 2025-11-25 only: the session the task was last seen under. A credential: never log it. */
  readonly session?: string | undefined
}

/**
 * A JSON-RPC error as the server sent it, or as the client describes a local outcome.
 *
 * @since 0.1.0
 * @category models
 */
export interface RpcError {
  readonly code: number
  readonly message: string
  readonly data?: JsonValue | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface InputAnswer {
  readonly response: JsonValue
  readonly acknowledged: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CancelIntent {
  readonly requestedAt: number
  readonly sent: boolean
}

/**
 * A task the server created for this key besides the one on the row; it is cancelled.
 *
 * @since 0.1.0
 * @category models
 */
export interface StrayTask {
  /** A bearer credential: never log it in full. */
  readonly taskId: string
  readonly receivedAt: number
  readonly cancelSent: boolean
  readonly cancelFailures: number
}

/**
 * How far a call's work is (`notifications/progress`), as last kept.
 *
 * @since 0.2.0
 * @category models
 */
export interface Progress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
  /** When it was heard (the store's clock). */
  readonly at: number
}

/**
 * One change of a row's status.
 *
 * @since 0.1.0
 * @category models
 */
export interface HistoryEntry {
  /** The store's clock, epoch milliseconds. */
  readonly at: number
  /** Null for the call's first entry (the intent written). */
  readonly from: Status | null
  readonly to: Status
  /** What made it change: `Polled`, `CallInDoubt`, `Reissued`, ... */
  readonly cause: string
  readonly instance: string | null
}

/**
 * One call's row. Times are epoch milliseconds.
 *
 * @since 0.1.0
 * @category models
 */
export interface HandleRecord {
  readonly scope: string
  /** Idempotency key, unique within the scope. */
  readonly key: string
  readonly serverId: string
  readonly tool: string
  /** The arguments, or null when only their hash is kept (`storeArguments: "hash"`). */
  readonly arguments: JsonObject | null
  readonly argumentsHash: string
  /** Null until the server hands one out. A bearer credential: never log it in full. */
  readonly taskId: string | null
  readonly status: Status
  readonly snapshot: TaskSnapshot | null
  /** The tool result of a completed call. */
  readonly result: CallToolResult | null
  /** The JSON-RPC error of a failed call. */
  readonly error: RpcError | null
  /** Input requests the server has outstanding, as last seen. */
  readonly inputRequests: { readonly [inputKey: string]: JsonValue } | null
  /** Every input key ever answered, with the answer. */
  readonly answers: { readonly [inputKey: string]: InputAnswer }
  readonly stuckSince: number | null
  readonly cancel: CancelIntent | null
  readonly strayTasks: ReadonlyArray<StrayTask>
  readonly nextPollAt: number | null
  readonly attempts: number
  readonly pollsWithoutInterval: number
  /** Times a `tools/call` was dispatched for this key (1 normally; more only by reissue). */
  readonly launches: number
  readonly polls: number
  /** The last problem seen (transport, auth, protocol), for operators. */
  readonly lastProblem: string | null
  readonly leaseOwner: string | null
  readonly leaseExpiresAt: number | null
  readonly version: number
  readonly createdAt: number
  readonly updatedAt: number
  readonly settledAt: number | null
  /** Status changes, oldest first (bounded; the first is always kept). */
  readonly history: ReadonlyArray<HistoryEntry>
  /** How far the work is, as the server last said it materially (null: it said nothing). */
  readonly progress: Progress | null
}
