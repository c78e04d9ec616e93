/**
 * What every part of the HandleStore contract starts from: a time, a new row, and a test that
 * runs against a fresh store.
 *
 * @internal
 */
import { it } from "@effect/vitest"
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import { HandleStore, type NewHandle } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"

/** The time the contract's rows are written at (a fixed instant: the stores take `now` as given). */
export const T0 = 1_700_000_000_000

/** The lease a new row is dispatched with. */
export const LEASE = 30_000

/** A new row in scope `tenant-a` at `T0`, with `overrides`. */
export const newHandle = (overrides: Partial<NewHandle> = {}): NewHandle => ({
  scope: "tenant-a",
  key: "key-1",
  serverId: "srv-1",
  tool: "slow_compute",
  arguments: { n: 1 },
  argumentsHash: "hash-1",
  owner: "instance-1",
  leaseMs: LEASE,
  now: T0,
  ...overrides,
})

/** A test of the store `layer` builds, provided anew (fresh and empty) for each test. */
export const storeTest =
  <E>(layer: Layer.Layer<HandleStore, E>) =>
  (title: string, body: (store: HandleStore) => Effect.Effect<void, unknown>) =>
    it.effect(title, () => Effect.flatMap(HandleStore, body).pipe(Effect.provide(layer)))

/** A stored record moved to another state, as the client would write it. */
export const withState = (record: HandleRecord, fields: Partial<HandleRecord>): HandleRecord =>
  new HandleRecord({ ...record, ...fields })
