/**
 * How a call ended, or why it rests: what `outcome()` and `settle(key)` resolve with. The same
 * shape as `@mcp-handles/core`'s `Outcome`, which `test/types.test.ts` holds it to.
 *
 * @since 0.1.0
 */
import type { RpcError } from "./HandleRecord.js"
import type { CallToolResult } from "./ToolResult.js"

/**
 * Narrow it on `_tag`.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome =
  /** The tool ran and answered; `isError`: it reported a failure (the protocol's tool error). */
  | {
      readonly _tag: "Completed"
      readonly key: string
      readonly result: CallToolResult
      readonly isError: boolean
    }
  /** The JSON-RPC error the call or its task failed with. */
  | { readonly _tag: "Failed"; readonly key: string; readonly error: RpcError }
  | { readonly _tag: "Cancelled"; readonly key: string; readonly reason: string | null }
  /** The server forgot the task, or its TTL passed without a final answer. */
  | { readonly _tag: "Expired"; readonly key: string; readonly reason: string | null }
  /** The call may or may not have launched: decide with `reissue(key)` or `abandon(key)`. */
  | { readonly _tag: "InDoubt"; readonly key: string; readonly reason: string | null }
