/**
 * What the outcome-delivery and consumer parts of the contract start from: resting rows, and
 * claims with defaults.
 *
 * @internal
 */
import { HandleRecord, type Status } from "@mcp-handles/core/HandleRecord"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import { newHandle, T0 } from "./fixture.js"

/** How long a claim lasts. */
export const CLAIM = 60_000

/** A row of `key` brought to `status` (created `at`, so list order follows it). */
export const rowIn = (
  store: HandleStore,
  key: string,
  status: Status,
  options: { scope?: string; at?: number } = {},
) =>
  Effect.flatMap(
    store.insertOrGet(newHandle({ key, scope: options.scope ?? "tenant-a", now: options.at ?? T0 })),
    ({ record }) =>
      store.update(
        new HandleRecord({
          ...record,
          status,
          leaseOwner: null,
          leaseExpiresAt: null,
          nextPollAt: null,
          settledAt: status === "in_doubt" || status === "working" ? null : (options.at ?? T0) + 1,
        }),
      ),
  )

/** Claims outcomes as consumer `app`, member `m1`, in `tenant-a`, unless told otherwise. */
export const claim = (
  store: HandleStore,
  options: Partial<{ consumer: string; member: string; scope: string; now: number; limit: number }> = {},
) =>
  store.claimOutcomes({
    consumer: options.consumer ?? "app",
    member: options.member ?? "m1",
    scope: options.scope ?? "tenant-a",
    now: options.now ?? T0 + 10,
    leaseMs: CLAIM,
    limit: options.limit ?? 100,
  })

export const keys = (deliveries: ReadonlyArray<{ readonly record: HandleRecord }>) =>
  deliveries.map((delivery) => delivery.record.key)
