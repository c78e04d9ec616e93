/**
 * The outbox part of the driver port (issues 15 and 28), and its rules read in memory: which
 * rows GC may take, when an outcome is due for a consumer, and how a consumer is recorded.
 *
 * @since 0.4.0
 */
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { compareCodePoints } from "./CallStoreDriver.js"
import { type HandleRecord, isResting, isTerminal } from "./HandleRecord.js"
import { sighted } from "./internal/sighting.js"
import type * as OutboxStore from "./OutboxStore.js"

/**
 * The outbox part of the driver port. Every effect may fail with the storage's own errors.
 *
 * @since 0.4.0
 * @category models
 */
export interface OutboxStoreDriver {
  /** `OutboxStore.deleteSettledBefore`; the report in any order (see `gcReport`). */
  readonly deleteSettledBefore: (
    options: OutboxStore.GcOptions,
  ) => Effect.Effect<OutboxStore.GcReport, unknown>
  /** `OutboxStore.claimOutcomes`, `limit` at least 1. */
  readonly claimOutcomes: (
    options: OutboxStore.ClaimOutcomesOptions,
  ) => Effect.Effect<ReadonlyArray<OutboxStore.OutcomeDelivery>, unknown>
  readonly ackOutcome: (options: OutboxStore.AckOutcomeOptions) => Effect.Effect<boolean, unknown>
  readonly releaseOutcomes: (options: OutboxStore.ReleaseOutcomesOptions) => Effect.Effect<number, unknown>
  /** `OutboxStore.listConsumers`, ordered by scope, then name (code points). */
  readonly listConsumers: (
    scope: string | undefined,
  ) => Effect.Effect<ReadonlyArray<OutboxStore.ConsumerRecord>, unknown>
  readonly forgetConsumer: (options: OutboxStore.ForgetConsumerOptions) => Effect.Effect<number, unknown>
}

/**
 * Whether `record` is old enough for `deleteSettledBefore` (the in-memory reading of its WHERE
 * clause); it goes once no known consumer holds it (`isAcknowledged`, `isPastConsumers`).
 *
 * @since 0.2.0
 * @category predicates
 */
export const isCollectable = (record: HandleRecord, options: OutboxStore.GcOptions): boolean =>
  (options.scope === undefined || record.scope === options.scope) &&
  isTerminal(record.status) &&
  record.settledAt !== null &&
  record.settledAt < options.settledBefore &&
  // Due: a stray task it holds is still to cancel, and this row is its only record.
  record.nextPollAt === null

/**
 * What a store keeps per consumer and row once an outcome was handed out.
 *
 * @since 0.3.0
 * @category models
 */
export interface DeliveryState {
  /** The rest last handed out. */
  readonly rest: OutboxStore.Rest
  readonly member: string | null
  /** When the claim runs out (epoch milliseconds); null once released. */
  readonly leaseUntil: number | null
  readonly acked: boolean
  /** How many times `rest` was handed out. */
  readonly deliveries: number
}

/**
 * @since 0.3.0
 * @category constructors
 */
export const restOf = (record: HandleRecord): OutboxStore.Rest => ({
  status: record.status,
  launches: record.launches,
})

const sameRest = (a: OutboxStore.Rest, b: OutboxStore.Rest) =>
  a.status === b.status && a.launches === b.launches

/**
 * Whether `record` is due for a consumer whose state for it is `state` (undefined: never
 * handed out): it rests, and its rest is new, or unacknowledged with no live claim.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isOutcomeDue = (record: HandleRecord, state: DeliveryState | undefined, now: number): boolean =>
  isResting(record.status) &&
  (state === undefined ||
    !sameRest(state.rest, restOf(record)) ||
    (!state.acked && (state.leaseUntil === null || state.leaseUntil <= now)))

/**
 * The state after handing `record` out to `member` (see `isOutcomeDue`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const claimedState = (
  record: HandleRecord,
  state: DeliveryState | undefined,
  options: OutboxStore.ClaimOutcomesOptions,
): DeliveryState => {
  const rest = restOf(record)
  return {
    rest,
    member: options.member,
    leaseUntil: options.now + options.leaseMs,
    acked: false,
    deliveries: state !== undefined && sameRest(state.rest, rest) ? state.deliveries + 1 : 1,
  }
}

/**
 * Whether an acknowledgement matches the delivered rest (any, when it names none).
 *
 * @since 0.3.0
 * @category predicates
 */
export const acknowledges = (options: OutboxStore.AckOutcomeOptions, state: DeliveryState): boolean =>
  options.rest === undefined || sameRest(options.rest, state.rest)

/**
 * Whether a consumer whose state for `record` is `state` has acknowledged the rest the row is
 * in now: an acknowledged earlier rest (in doubt, since reissued) does not count.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isAcknowledged = (record: HandleRecord, state: DeliveryState | undefined): boolean =>
  state?.acked === true && sameRest(state.rest, restOf(record))

/**
 * Whether `record` settled before `unacknowledgedBefore`: GC takes it whoever has not
 * acknowledged it (and reports them).
 *
 * @since 0.3.0
 * @category predicates
 */
export const isPastConsumers = (record: HandleRecord, options: OutboxStore.GcOptions): boolean =>
  options.unacknowledgedBefore !== undefined &&
  record.settledAt !== null &&
  record.settledAt < options.unacknowledgedBefore

/**
 * The consumer a claim records, given what was stored for it (the in-memory reading of its
 * upsert): the first sighting kept, the last one never moved back.
 *
 * @since 0.3.0
 * @category constructors
 */
export const seenConsumer = (
  stored: OutboxStore.ConsumerRecord | undefined,
  options: OutboxStore.ClaimOutcomesOptions,
): OutboxStore.ConsumerRecord => ({
  consumer: options.consumer,
  scope: options.scope,
  ...sighted(stored, options.now),
})

/**
 * Consumer order: by scope, then name, by code point.
 *
 * @since 0.3.0
 * @category utils
 */
export const compareConsumers = (
  a: { readonly scope: string; readonly consumer: string },
  b: { readonly scope: string; readonly consumer: string },
): number => compareCodePoints(a.scope, b.scope) || compareCodePoints(a.consumer, b.consumer)

/**
 * `report` as the port gives it: consumers by scope, then name, none with nothing to report.
 *
 * @since 0.3.0
 * @category constructors
 */
export const gcReport = (report: OutboxStore.GcReport): OutboxStore.GcReport => ({
  deleted: report.deleted,
  kept: report.kept,
  unacknowledged: report.unacknowledged.filter((entry) => entry.outcomes > 0).sort(compareConsumers),
})

/**
 * A stored consumer row, decoded: the table is outside input like every row.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ConsumerRow = Schema.Struct({
  consumer: Schema.String,
  scope: Schema.String,
  firstSeenAt: Schema.Number,
  lastSeenAt: Schema.Number,
})
