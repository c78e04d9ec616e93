/**
 * How a call ended, or why it rests: what `settle(key)` returns. Every caller of `settle` for a
 * key sees the same outcome, because it is read from the terminal row.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import { failedWithoutError, type HandleRecord, type RpcError } from "./HandleRecord.js"
import type { CallToolResult } from "./ToolResult.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Outcome = Data.TaggedEnum<{
  /**
   * The tool ran and answered. `isError` is the tool saying it failed (its result's
   * `isError: true`, the protocol's tool error): the call completed, the work did not succeed.
   */
  Completed: { readonly key: string; readonly result: CallToolResult; readonly isError: boolean }
  /** The JSON-RPC error the call or its task failed with. */
  Failed: { readonly key: string; readonly error: RpcError }
  Cancelled: { readonly key: string; readonly reason: string | null }
  /** The server forgot the task, or its TTL passed without a final answer. */
  Expired: { readonly key: string; readonly reason: string | null }
  /**
   * The call may or may not have launched on the server: decide with `reissue(key)` or
   * `abandon(key)`.
   */
  InDoubt: { readonly key: string; readonly reason: string | null }
}>

/**
 * @since 0.1.0
 * @category constructors
 */
export const Outcome = Data.taggedEnum<Outcome>()

/**
 * The outcome a record rests in, if it rests: terminal or in doubt.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRecord = (record: HandleRecord): Outcome | undefined => {
  switch (record.status) {
    case "completed":
      return completed(record.key, record.result ?? { content: [] })
    case "failed":
      return Outcome.Failed({ key: record.key, error: record.error ?? failedWithoutError })
    case "cancelled":
      return Outcome.Cancelled({ key: record.key, reason: record.lastProblem })
    case "expired":
      return Outcome.Expired({ key: record.key, reason: record.lastProblem })
    case "in_doubt":
      return Outcome.InDoubt({ key: record.key, reason: record.lastProblem })
    default:
      return undefined
  }
}

/**
 * A `Completed` outcome of `result`, its `isError` read from the result.
 *
 * @since 0.4.0
 * @category constructors
 */
export const completed = (key: string, result: CallToolResult): Outcome =>
  Outcome.Completed({ key, result, isError: result.isError === true })

/**
 * Whether the call completed with a tool error (`Completed` with `isError`).
 *
 * @since 0.4.0
 * @category predicates
 */
export const isToolError = (outcome: Outcome): boolean => outcome._tag === "Completed" && outcome.isError
