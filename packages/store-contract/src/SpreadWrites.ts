/**
 * Random writes for a SQL store's tests of the columns its spread and lease renewal read (the
 * interval the server asked for, whether a cancel is unsent): the store-sqlite and
 * store-postgres suites check, after any sequence of these, that each row's columns say what its
 * body says, and that the spread takes the rows it took when it read the body.
 *
 * @since 0.6.0
 */
import { CancelIntent, HandleRecord, type Status, TaskSnapshot } from "@mcp-handles/core/HandleRecord"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"

/**
 * The time every write is made at.
 *
 * @since 0.6.0
 * @category constants
 */
export const T0 = 1_700_000_000_000

/**
 * The fields the columns repeat, and the ones the spread filters on, as a write sets them.
 *
 * @since 0.6.0
 * @category models
 */
export interface Change {
  readonly key: string
  readonly kind: "update" | "routine"
  readonly status: Status
  readonly taskId: boolean
  /** undefined: no snapshot at all; null: a snapshot without an interval. */
  readonly interval: number | null | undefined
  readonly cancel: { readonly requestedAt: number; readonly sent: boolean } | null
  readonly nextPollAt: number | null
}

/**
 * Any write to one of five keys, intervals at their edges (negative, fractional, huge) included.
 *
 * @since 0.6.0
 * @category arbitraries
 */
export const change: fc.Arbitrary<Change> = fc.record({
  key: fc.constantFrom("a", "b", "c", "d", "e"),
  kind: fc.constantFrom("update" as const, "routine" as const),
  status: fc.constantFrom<Status>("pending", "working", "input_required", "completed", "failed", "cancelled"),
  taskId: fc.boolean(),
  interval: fc.option(
    fc.option(
      fc.oneof(
        fc.integer({ min: -10_000, max: 10_000_000 }),
        fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e12 }),
        fc.constantFrom(0, 1, 5_000, 60_000, 1e300, -1e300),
      ),
      { nil: null },
    ),
    { nil: undefined },
  ),
  cancel: fc.option(fc.record({ requestedAt: fc.integer({ min: 0, max: 4e12 }), sent: fc.boolean() }), {
    nil: null,
  }),
  nextPollAt: fc.option(fc.integer({ min: T0 - 100_000, max: T0 + 100_000 }), { nil: null }),
})

/**
 * A change that, about half the time, leaves its row one the spread takes (but for its cancel).
 *
 * @since 0.6.0
 * @category arbitraries
 */
export const towardDue: fc.Arbitrary<Change> = fc.tuple(change, fc.boolean()).map(
  ([c, due]): Change =>
    due
      ? {
          ...c,
          kind: "update",
          status: c.status === "input_required" ? c.status : "working",
          taskId: true,
          nextPollAt: Math.min(c.nextPollAt ?? T0, T0),
        }
      : c,
)

const snapshotOf = (interval: number | null | undefined) =>
  interval === undefined
    ? null
    : TaskSnapshot.make({
        ttlMs: null,
        createdAt: T0,
        lastUpdatedAt: T0,
        receivedAt: T0,
        ...(interval === null ? {} : { pollIntervalMs: interval }),
      })

/**
 * Writes `c` over the current row of its key in scope `"s"` (begun first if need be). A routine
 * write keeps the status and the task id, so the store's narrow statement is the one that runs;
 * a write the store refuses is left refused (its `Either` is the answer).
 *
 * @since 0.6.0
 * @category utils
 */
export const apply = (store: HandleStore, c: Change) =>
  Effect.gen(function* () {
    const { record } = yield* store.insertOrGet({
      scope: "s",
      key: c.key,
      serverId: "srv",
      tool: "t",
      arguments: null,
      argumentsHash: "h",
      owner: "me",
      leaseMs: 1_000,
      now: T0,
    })
    const fields = {
      ...record,
      snapshot: snapshotOf(c.interval),
      cancel: c.cancel === null ? null : CancelIntent.make(c.cancel),
      nextPollAt: c.nextPollAt,
    }
    yield* c.kind === "routine"
      ? store.update(new HandleRecord(fields), { routine: true })
      : store.update(
          new HandleRecord({ ...fields, status: c.status, taskId: c.taskId ? `task-${c.key}` : null }),
        )
  }).pipe(Effect.either)
