/**
 * The outbox part of the store port (issues 15 and 28): the store as the app's inbox. Resting
 * rows are handed to consumers, each outcome to one member of each consumer, until acknowledged;
 * consumers are known to the store, and GC never takes an outcome a known consumer has not
 * acknowledged without saying so.
 *
 * @since 0.4.0
 */
import type * as Effect from "effect/Effect"
import type { HandleRecord, Status } from "./HandleRecord.js"
import type { StoreError } from "./StoreError.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface GcOptions {
  /** Limit to one scope; all scopes when absent (an operator's sweep). */
  readonly scope?: string | undefined
  /**
   * Terminal rows settled strictly before this instant are deleted, once every consumer known
   * in their scope has acknowledged their outcome (see `ConsumerRecord`).
   */
  readonly settledBefore: number
  /**
   * Rows settled strictly before this instant (and before `settledBefore`) are deleted even
   * when a known consumer has not acknowledged them; the report counts them per consumer.
   * Absent: an unacknowledged outcome is kept for as long as its consumer is known.
   */
  readonly unacknowledgedBefore?: number | undefined
}

/**
 * What a GC sweep did. A sweep never drops an outcome silently: `unacknowledged` names each
 * consumer that lost outcomes it had not acknowledged, and `kept` says how many old rows wait
 * for a consumer.
 *
 * @since 0.3.0
 * @category models
 */
export interface GcReport {
  readonly deleted: number
  /** Rows old enough to go that were kept because a known consumer has not acknowledged them. */
  readonly kept: number
  /** Per consumer and scope, how many deleted rows it had not acknowledged; by scope, then consumer. */
  readonly unacknowledged: ReadonlyArray<UnacknowledgedOutcomes>
}

/**
 * @since 0.3.0
 * @category models
 */
export interface UnacknowledgedOutcomes {
  readonly consumer: string
  readonly scope: string
  /** How many of its outcomes the sweep deleted unacknowledged. */
  readonly outcomes: number
}

/**
 * Which rest of a row an outcome is: a row rests again, differently, after an in-doubt call is
 * reissued or abandoned.
 *
 * @since 0.3.0
 * @category models
 */
export interface Rest {
  readonly status: Status
  readonly launches: number
}

/**
 * @since 0.3.0
 * @category models
 */
export interface ClaimOutcomesOptions {
  /** The consumer's durable name: each consumer gets every outcome. */
  readonly consumer: string
  /** The member of the consumer group claiming (an instance id): each outcome goes to one member. */
  readonly member: string
  readonly scope: string
  readonly now: number
  /** How long a claim lasts without an acknowledgement before the outcome is handed out again. */
  readonly leaseMs: number
  readonly limit: number
}

/**
 * One outcome handed to a consumer.
 *
 * @since 0.3.0
 * @category models
 */
export interface OutcomeDelivery {
  readonly consumer: string
  /** The row as it rests. */
  readonly record: HandleRecord
  /** How many times this rest was handed to the consumer, this time included (1 the first time). */
  readonly deliveries: number
}

/**
 * @since 0.3.0
 * @category models
 */
export interface AckOutcomeOptions {
  readonly consumer: string
  readonly scope: string
  readonly key: string
  /** Acknowledge only this rest; whichever rest was delivered when absent. */
  readonly rest?: Rest | undefined
}

/**
 * @since 0.3.0
 * @category models
 */
export interface ReleaseOutcomesOptions {
  readonly consumer: string
  readonly member: string
}

/**
 * A consumer as the store knows it, per scope: from its first claim of the scope's outcomes
 * until it is forgotten. GC keeps a terminal row while a consumer known in its scope has not
 * acknowledged its outcome.
 *
 * @since 0.3.0
 * @category models
 */
export interface ConsumerRecord {
  readonly consumer: string
  readonly scope: string
  readonly firstSeenAt: number
  /** Its last claim. */
  readonly lastSeenAt: number
}

/**
 * @since 0.3.0
 * @category models
 */
export interface ForgetConsumerOptions {
  readonly consumer: string
  /** Every scope when absent. */
  readonly scope?: string | undefined
}

/**
 * The outbox part of the port.
 *
 * @since 0.4.0
 * @category models
 */
export interface OutboxStore {
  /**
   * Deletes terminal rows settled before the cutoff whose outcome every consumer known in their
   * scope has acknowledged (or, past `unacknowledgedBefore`, whatever was acknowledged), and
   * says what it did; never an open or in-doubt row.
   */
  readonly deleteSettledBefore: (options: GcOptions) => Effect.Effect<GcReport, StoreError>
  /**
   * Hands out up to `limit` rows of `scope` that rest (terminal or in doubt) and are due for the
   * consumer: its current rest (status and launch count) is not acknowledged by the consumer,
   * and no member of the consumer holds a live claim on it (a claim whose lease is not past
   * `now`). Each is claimed for `member` until `now + leaseMs`: a member that dies without
   * acknowledging lets the outcome go to another member (or itself again) when the claim runs
   * out. A rest other than the one last delivered (an in-doubt call reissued, then completed)
   * is a new outcome. Oldest call first. Two members claiming at once never get the same row.
   * The consumer becomes known in `scope` (seen at `now`): from then on GC keeps the scope's
   * rows until it has acknowledged them.
   */
  readonly claimOutcomes: (
    options: ClaimOutcomesOptions,
  ) => Effect.Effect<ReadonlyArray<OutcomeDelivery>, StoreError>
  /**
   * Marks the consumer's delivered rest of a row acknowledged: it is not handed out again. With
   * `rest`, only when the delivered rest is that one (a later rest stays due). True when a
   * delivered rest was acknowledged (or already was); false when none matched.
   */
  readonly ackOutcome: (options: AckOutcomeOptions) => Effect.Effect<boolean, StoreError>
  /**
   * Ends every unacknowledged claim `member` holds for the consumer, so they are due at once:
   * a restarted member (one live process per instance id) takes back what its previous process
   * was handed but never acknowledged. Returns how many.
   */
  readonly releaseOutcomes: (options: ReleaseOutcomesOptions) => Effect.Effect<number, StoreError>
  /** The consumers known in `scope` (every scope when absent), by scope, then name. */
  readonly listConsumers: (scope?: string) => Effect.Effect<ReadonlyArray<ConsumerRecord>, StoreError>
  /**
   * Forgets a consumer (a decommissioned one, which would otherwise hold rows from GC) in one
   * scope, or every scope when none is named, with what it was handed and acknowledged. Should it
   * claim again, it is a new consumer: every resting row is delivered to it. Returns how many
   * scopes it was known in.
   */
  readonly forgetConsumer: (options: ForgetConsumerOptions) => Effect.Effect<number, StoreError>
}
