/**
 * When a server or a consumer was seen, as its upsert keeps it.
 *
 * @internal
 */

/** The sightings after one at `now` (a server's, a consumer's): the first kept, the last never back. */
export const sighted = (
  stored: { readonly firstSeenAt: number; readonly lastSeenAt: number } | undefined,
  now: number,
) => ({
  firstSeenAt: stored?.firstSeenAt ?? now,
  lastSeenAt: Math.max(stored?.lastSeenAt ?? now, now),
})
