/**
 * The rules of a row polled without writes (src/internal/quietRow.ts), checked together over
 * random schedules: a driver that polls only when `covers` says so, and renews by
 * `renewedUntil`/`afterRenewal` once per heartbeat and before an uncovered poll (some renewals
 * failing), then dies at a random moment. Whoever takes the row next (another instance at
 * `takeoverAt`, a restart under the same id by `releasedPollAt` or the boot spread, a caller by
 * `takenPollAt`) never polls sooner than one interval after the dead driver's last poll, and a
 * restart resumes it within one window of when the driver would have polled.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Claiming from "@mcp-handles/core/Claiming"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as fc from "effect/FastCheck"
import * as QuietRow from "../src/internal/quietRow.js"
import { pending } from "./support/transitions.js"

interface Run {
  readonly intervalMs: number
  readonly leaseMs: number
  readonly heartbeatMs: number
  /** Extra wait on each poll (a server's interval may be met late, never early). */
  readonly lateness: ReadonlyArray<number>
  /** Which renewals the store refuses or fails (by their order). */
  readonly failing: ReadonlyArray<boolean>
  readonly crashAt: number
  readonly restartAfter: number
}

const runs: fc.Arbitrary<Run> = fc
  .record({
    intervalMs: fc.integer({ min: 250, max: 10_000 }),
    leaseMs: fc.integer({ min: 1_000, max: 60_000 }),
    lateness: fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 1, maxLength: 50 }),
    failing: fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }),
    crashAt: fc.integer({ min: 0, max: 300_000 }),
    restartAfter: fc.integer({ min: 0, max: 120_000 }),
  })
  .map((run) => ({ ...run, heartbeatMs: Math.max(1, Math.floor(run.leaseMs / 3)) }))

interface World {
  /** The store's schedule of the row. */
  store: { nextPollAt: number; leaseExpiresAt: number }
  /** The driver's view of it. */
  kept: { intervalMs: number; leaseUntil: number; storedNextPollAt: number }
  due: number
  lastPoll: number | undefined
  renewals: number
}

/** The driver's life up to its crash: polls and renewals by the rules. */
const live = (run: Run): World => {
  const { intervalMs, leaseMs, heartbeatMs } = run
  // The last write (the launch): due one interval on, leased a lease past that.
  const first = intervalMs
  const world: World = {
    store: { nextPollAt: first, leaseExpiresAt: first + leaseMs },
    kept: { intervalMs, leaseUntil: first + leaseMs, storedNextPollAt: first },
    due: first,
    lastPoll: undefined,
    renewals: 0,
  }
  const renew = (now: number): boolean => {
    const refused = run.failing[world.renewals++ % run.failing.length] ?? false
    if (refused) return false
    const until = QuietRow.renewedUntil(now, leaseMs, intervalMs)
    world.store = QuietRow.afterRenewal(world.store, until)
    Object.assign(world.kept, QuietRow.keptAfterRenewal(world.kept, until))
    return true
  }
  let nextBeat = heartbeatMs
  let polls = 0
  for (;;) {
    const next = Math.min(nextBeat, world.due)
    if (next >= run.crashAt) return world
    if (next === nextBeat) {
      // The heartbeat renews a row due before the beat after next that would not be covered.
      const reach = nextBeat + 2 * heartbeatMs
      if (world.due <= reach && !QuietRow.covers(world.kept, reach)) renew(nextBeat)
      nextBeat += heartbeatMs
      continue
    }
    const at = world.due
    if (!QuietRow.covers(world.kept, at) && !renew(at)) {
      // Not covered and not renewed: the driver looks at the row again instead of polling.
      world.due = at + 100
      continue
    }
    expect(QuietRow.covers(world.kept, at)).toBe(true)
    world.lastPoll = at
    world.due = at + intervalMs + (run.lateness[polls++ % run.lateness.length] ?? 0)
  }
}

/** The earliest a poll may come after the driver's last one. */
const earliest = (world: World) => (world.lastPoll ?? Number.NEGATIVE_INFINITY) + world.kept.intervalMs

const asRecord = (world: World, intervalMs: number) =>
  new HandleRecord.HandleRecord(
    {
      ...pending,
      status: "working",
      taskId: "task-1",
      nextPollAt: world.store.nextPollAt,
      leaseExpiresAt: world.store.leaseExpiresAt,
      snapshot: HandleRecord.TaskSnapshot.make({
        pollIntervalMs: intervalMs,
        ttlMs: null,
        createdAt: 0,
        lastUpdatedAt: 0,
        receivedAt: 0,
      }),
    },
    true,
  )

const window = (intervalMs: number) => ({
  minIntervalMs: 250,
  maxIntervalMs: 60_000,
  defaultIntervalMs: intervalMs,
})

describe("a row polled without writes", () => {
  it.prop(
    "another instance takes it over no sooner than one interval after its last poll",
    [runs],
    ([run]) => {
      const world = live(run)
      expect(QuietRow.takeoverAt(world.store)).toBeGreaterThanOrEqual(earliest(world))
    },
  )

  it.prop(
    "a restart under the same id polls it no sooner than one interval after its last poll, and within one window of its due poll",
    [runs, fc.double({ min: 0, max: 0.999, noNaN: true })],
    ([run, random]) => {
      const world = live(run)
      const now = run.crashAt + run.restartAfter
      const record = asRecord(world, run.intervalMs)
      const options = { owner: "a", now, ...window(run.intervalMs) }
      // Not yet due: freed (`releaseOwner`); overdue: spread by the boot sweep (`spreadDue`).
      const next = Claiming.isReleasable(
        new HandleRecord.HandleRecord({ ...record, leaseOwner: "a" }, true),
        options,
      )
        ? Claiming.releasedPollAt(record, options)
        : Claiming.spreadPollAt(record, { ...options, takeOver: [], leaseMs: run.leaseMs, limit: 1 }, random)
      expect(next).not.toBeNull()
      expect(next ?? 0).toBeGreaterThanOrEqual(earliest(world))
      // The spread of an overdue row is over one more window (no thundering herd).
      const spread = record.nextPollAt !== null && record.nextPollAt <= now ? run.intervalMs : 0
      expect(next ?? 0).toBeLessThanOrEqual(Math.max(world.due, now) + run.intervalMs + spread)
    },
  )

  it.prop(
    "a caller that takes it polls it no sooner than one interval after its last poll, and within one interval of now",
    [runs],
    ([run]) => {
      const world = live(run)
      const now = run.crashAt + run.restartAfter
      const next = QuietRow.takenPollAt(world.store.nextPollAt, now, run.intervalMs)
      expect(next).toBeGreaterThanOrEqual(earliest(world))
      expect(next).toBeLessThanOrEqual(Math.max(world.due, now) + run.intervalMs)
    },
  )
})
