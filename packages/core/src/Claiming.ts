/**
 * Which rows a claim, a boot spread and an owner's release take, read in memory: the rules a SQL
 * store states in its WHERE clauses, for a store that keeps its rows in memory (and for tests
 * that check a store against them).
 *
 * @since 0.2.0
 */
import type * as HandleRecord from "./HandleRecord.js"
import type * as HandleStore from "./HandleStore.js"
import * as QuietRow from "./internal/quietRow.js"
import * as Polling from "./Polling.js"

/**
 * Whether a row belongs to one of the servers of `filter` (every row when there is none): by its
 * identity, or by the name part of it (what `ServerIdentity.of` put before the hash).
 *
 * @since 0.4.0
 * @category predicates
 */
export const servesRow = (
  record: HandleRecord.HandleRecord,
  filter: HandleStore.ServerFilter | undefined,
): boolean =>
  filter === undefined ||
  filter.ids.includes(record.serverId) ||
  filter.names.includes(namePart(record.serverId))

/**
 * The name before an identity's `:` and 16-character hash, as the SQL stores cut it; the whole
 * id where it has no such part (rows written before identities had one).
 */
const namePart = (id: string): string =>
  id.length > 17 && id[id.length - 17] === ":" ? id.slice(0, -17) : id

/**
 * Whether `claimDue` may take the row: due (an open row, or a settled one with a stray task still
 * to cancel: only those have a due time), not in doubt (that waits on the application), of a
 * server in the filter, and not leased by another live owner.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isClaimable = (record: HandleRecord.HandleRecord, options: HandleStore.ClaimOptions): boolean =>
  record.status !== "in_doubt" &&
  record.nextPollAt !== null &&
  record.nextPollAt <= options.now &&
  servesRow(record, options.servers) &&
  (record.leaseOwner === null ||
    record.leaseOwner === options.owner ||
    (record.leaseExpiresAt !== null && record.leaseExpiresAt <= options.now))

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
 * Whether `pendingIntents` finds the row for `owner`: a live task it holds with a cancel not yet
 * sent, or waiting for input with an answer not yet acknowledged.
 *
 * @since 0.7.0
 * @category predicates
 */
export const hasPendingIntent = (record: HandleRecord.HandleRecord, owner: string): boolean =>
  (record.status === "working" || record.status === "input_required") &&
  record.leaseOwner === owner &&
  ((record.cancel !== null && !record.cancel.sent) ||
    (record.status === "input_required" &&
      Object.values(record.answers).some((answer) => !answer.acknowledged)))

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
  servesRow(record, options.servers) &&
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
export const spreadWindow = (
  record: HandleRecord.HandleRecord,
  options: Pick<HandleStore.SpreadOptions, "minIntervalMs" | "maxIntervalMs" | "defaultIntervalMs">,
): number => Polling.clampOr(options, record.snapshot?.pollIntervalMs, options.defaultIntervalMs)

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

/**
 * The next poll of a row `releaseOwner` frees. A row whose next poll is its lease's end was
 * polled without writes (`renewLeases` keeps it there): its real next poll is unknown, and may
 * be a whole lease sooner. The process that held it is gone, so its last poll came before `now`:
 * one window from `now` is never early, and at most one window late. Any other row keeps its
 * stored next poll, a real one (a server's `Retry-After` included).
 *
 * @since 0.1.0
 * @category utils
 */
export const releasedPollAt = (
  record: HandleRecord.HandleRecord,
  options: HandleStore.ReleaseOwnerOptions,
): number | null => QuietRow.releasedPollAt(record, options.now, spreadWindow(record, options))

/**
 * A row's next poll and lease after `renewLeases` renewed it to `until`: the lease runs to
 * `until` and the next poll is put off to it at the least (a row polled without writes must
 * not be taken at a next poll long gone); the version is left alone.
 *
 * @since 0.1.0
 * @category utils
 */
export const renewedSchedule: (
  record: Pick<HandleRecord.HandleRecord, "nextPollAt" | "leaseExpiresAt">,
  until: number,
) => { readonly nextPollAt: number; readonly leaseExpiresAt: number } = QuietRow.afterRenewal
