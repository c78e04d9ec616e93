/**
 * The rules of a row polled without writes, in one place: what its driver may do, what the store
 * holds of it meanwhile, and when anyone else may poll it. The engine (engine/quiet.ts,
 * engine/leases.ts) and the stores (`Claiming.releasedPollAt`, `renewLeases`) act by these
 * functions; `QuietRow.test.ts` checks that together they never let a task be polled sooner than
 * one interval after its last poll, by anyone, and that a restart resumes it within one interval.
 *
 * A quiet row moves through these states, for the store and for its driver:
 *
 * - **written**: the store's next poll is the real one (the last write put it there), and the
 *   lease runs a while past it. A driver may poll at the due time while the lease covers one
 *   interval past the poll (`covers`).
 * - **kept**: the driver polled without writing; its next poll lives in its memory only. Before a
 *   poll the store is not sure to cover, the driver renews the lease (`renewedUntil`), which puts
 *   the store's next poll at the lease's end (`afterRenewal`) and leaves the version alone: the
 *   store's next poll then says when another instance may take the row, not when it is due.
 * - **written** again at the row's next write (a change, its end, a hand-off on close).
 *
 * What the others may do with a kept row, whatever its driver did:
 * - another instance takes it once the lease ran out (`takeoverAt`): the driver polled only
 *   while the lease covered one interval past each poll;
 * - a restart under the same id frees it at once (the driver is gone), due one window from then
 *   at the latest (`releasedPollAt`);
 * - a caller of this instance that takes the row (`takenPollAt`) polls it one interval from now
 *   at the latest, one interval after an overdue due time at the earliest.
 */

/** What the store holds of a row's schedule: its next poll and its lease's end (epoch ms). */
export interface Schedule {
  readonly nextPollAt: number | null
  readonly leaseExpiresAt: number | null
}

/** What a driver knows of its kept row: the store's schedule, as last read or renewed. */
export interface Kept {
  /** The task's interval, clamped: what a poll after a takeover must wait. */
  readonly intervalMs: number
  readonly leaseUntil: number
  readonly storedNextPollAt: number
}

/**
 * Whether the store keeps everyone else off the row until one interval after a poll at `at`:
 * its lease runs that long, and its next poll is `at` or later (a restart under the same id
 * frees a row not yet due, and spreads an overdue one one window past its next poll).
 */
export const covers = (kept: Kept, at: number): boolean =>
  kept.leaseUntil >= at + kept.intervalMs && kept.storedNextPollAt >= at

/** The lease a renewal at `now` grants: one lease and one interval past it. */
export const renewedUntil = (now: number, leaseMs: number, intervalMs: number): number =>
  now + leaseMs + intervalMs

/**
 * The store's schedule after a bulk renewal to `until` (`renewLeases`): the lease runs to `until`,
 * and the next poll is put off to it at the least, so that a restart cannot take the row at a
 * next poll long gone. The version is left alone: the holder's next write still matches.
 */
export const afterRenewal = (
  schedule: Schedule,
  until: number,
): { nextPollAt: number; leaseExpiresAt: number } => ({
  nextPollAt: Math.max(schedule.nextPollAt ?? until, until),
  leaseExpiresAt: until,
})

/** What the driver knows after the store renewed its row to `until`. */
export const keptAfterRenewal = (
  kept: Kept,
  until: number,
): Pick<Kept, "leaseUntil" | "storedNextPollAt"> => ({
  leaseUntil: until,
  storedNextPollAt: Math.max(kept.storedNextPollAt, until),
})

/** When another instance may take the row over (and poll it): when its lease runs out. */
export const takeoverAt = (schedule: Schedule): number => schedule.leaseExpiresAt ?? Number.NEGATIVE_INFINITY

/**
 * Whether the store's next poll is a kept row's lease end rather than a real due time: what
 * `afterRenewal` leaves.
 */
export const isKeptSchedule = (schedule: Schedule): boolean =>
  schedule.nextPollAt !== null && schedule.nextPollAt === schedule.leaseExpiresAt

/**
 * The next poll of a row a restart under the same id frees at `now` (`releaseOwner`), given its
 * window (its clamped interval). The process that held it is gone, so it polled before `now`:
 * one window from `now` is never early, and at most one window late. A row whose next poll is a
 * real one (a server's `Retry-After` included) keeps it.
 */
export const releasedPollAt = (schedule: Schedule, now: number, windowMs: number): number | null =>
  isKeptSchedule(schedule) && schedule.nextPollAt !== null
    ? Math.min(schedule.nextPollAt, now + windowMs)
    : schedule.nextPollAt

/**
 * The next poll of a live row a caller of this instance takes at `now` (nobody else holds it):
 * whoever held it last may have polled at its due time without recording it, so an overdue row
 * is polled one interval after that at the earliest; a row due further off than one interval
 * from now is a kept row (no poll came after now), polled one interval from now.
 */
export const takenPollAt = (nextPollAt: number, now: number, intervalMs: number): number =>
  nextPollAt < now ? Math.max(now, nextPollAt + intervalMs) : Math.min(nextPollAt, now + intervalMs)
