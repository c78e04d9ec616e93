/**
 * B1's store side of one call (write-ahead intent, then the task id), shared by the timed
 * benchmark (`sqlite-bench.ts`) and the instruction count (`b1-instructions.ts`) so both measure
 * the same two writes.
 */
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"

/** The benchmark's epoch: every row's times are relative to it. */
export const T0 = Date.now()

let sequence = 0

/** A fresh key, `k0`, `k1`, …: one per call, across every side of a run. */
export const nextKey = () => `k${sequence++}`

/** The arguments of the call being written (its number, a label). */
export const callArguments = () => ({ n: sequence, label: "benchmark call" })

/** The intent row of the call `key`. */
export const handle = (key: string) => ({
  scope: "bench",
  key,
  serverId: "srv-1",
  tool: "slow_compute",
  arguments: callArguments(),
  argumentsHash: "0f".repeat(32),
  owner: "bench",
  leaseMs: 30_000,
  now: T0,
})

/** The store side of one call: write-ahead intent, then the task id. */
export const storeCall = (store: HandleStore) =>
  Effect.gen(function* () {
    const key = nextKey()
    const { record } = yield* store.insertOrGet(handle(key))
    // Built without re-validation: the client's step() makes this record, not the store.
    yield* store.update(
      new HandleRecord(
        { ...record, status: "working", taskId: `task-${key}`, nextPollAt: T0 + 1000, updatedAt: T0 + 1 },
        true,
      ),
    )
  })
