/**
 * Which rows a claim, a boot spread and an owner's release take, read in memory: the rules a SQL
 * store states in its WHERE clauses, for a store that keeps its rows in memory (and for tests
 * that check a store against them).
 *
 * @since 0.2.0
 */
import * as HandleRecord from "./HandleRecord.js"
import type * as HandleStore from "./HandleStore.js"
import * as Polling from "./Polling.js"

/**
 * Whether `claimDue` may take the row for `owner` at `now`: open, due, and not leased by another
 * live owner.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isClaimable = (record: HandleRecord.HandleRecord, owner: string, now: number): boolean =>
  HandleRecord.openStatuses.includes(record.status) &&
  record.nextPollAt !== null &&
  record.nextPollAt <= now &&
  (record.leaseOwner === null ||
    record.leaseOwner === owner ||
    (record.leaseExpiresAt !== null && record.leaseExpiresAt <= now))

/**
 * Whether `renewLeases` renews the row for `owner`: a live task it holds, with no unsent cancel.
 *
 * @since 0.4.0
 * @category predicates
 */
export const isRenewable = (record: HandleRecord.HandleRecord, owner: string): boolean =>
  (record.status === "working" || record.status === "input_required") &&
  record.leaseOwner === owner &&
  (record.cancel === null || record.cancel.sent)

/**
 * Whether `spreadDue` moves the row: a live task, no unsent cancel, due, free of other live
 * leases (or leased to one of the owner's names from before its restart).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isSpreadable = (
  record: HandleRecord.HandleRecord,
  options: HandleStore.SpreadOptions,
): boolean =>
  (record.status === "working" || record.status === "input_required") &&
  record.taskId !== null &&
  (record.cancel === null || record.cancel.sent) &&
  record.nextPollAt !== null &&
  record.nextPollAt <= options.now &&
  (record.leaseOwner === null ||
    record.leaseOwner === options.owner ||
    options.takeOver.includes(record.leaseOwner) ||
    (record.leaseExpiresAt !== null && record.leaseExpiresAt <= options.now))

/**
 * The interval window `spreadDue` spreads a row over: its last server interval, clamped, else
 * the default.
 *
 * @since 0.1.0
 * @category utils
 */
export const spreadWindow = (record: HandleRecord.HandleRecord, options: HandleStore.SpreadOptions): number =>
  Polling.clampOr(options, record.snapshot?.pollIntervalMs, options.defaultIntervalMs)

/**
 * The next poll `spreadDue` gives a row: a uniformly random point of one window, starting at
 * `now`, or one window after the row's due time if that is later (a process that died may have
 * polled at the due time without recording it).
 *
 * @since 0.2.0
 * @category utils
 */
export const spreadPollAt = (
  record: HandleRecord.HandleRecord,
  options: HandleStore.SpreadOptions,
  random: number = Math.random(),
): number => {
  const window = spreadWindow(record, options)
  return Math.max(options.now, (record.nextPollAt ?? options.now) + window) + Math.floor(random * window)
}

/**
 * Whether `releaseOwner` frees the row: leased to `owner` and not due at `now` (or not scheduled).
 *
 * @since 0.2.0
 * @category predicates
 */
export const isReleasable = (
  record: HandleRecord.HandleRecord,
  options: HandleStore.ReleaseOwnerOptions,
): boolean =>
  record.leaseOwner === options.owner && (record.nextPollAt === null || record.nextPollAt > options.now)
