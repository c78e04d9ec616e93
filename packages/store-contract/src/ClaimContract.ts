/**
 * The claiming part of the HandleStore contract: which rows a claim, a boot spread and an
 * owner's release take (`Claiming` reads the same rules in memory). Run by `handleStoreContract`.
 *
 * @since 0.4.0
 */
import { describe, expect } from "@effect/vitest"
import { CancelIntent, type HandleRecord, TaskSnapshot } from "@mcp-handles/core/HandleRecord"
import { type HandleStore, VersionConflict } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { LEASE, newHandle, storeTest, T0, withState } from "./internal/fixture.js"

/** A task's last state as a row keeps it, with the server's interval when it gave one. */
const snapshot = (pollIntervalMs: number | undefined) =>
  TaskSnapshot.make({
    ttlMs: null,
    createdAt: T0,
    lastUpdatedAt: T0,
    receivedAt: T0,
    ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
  })

/**
 * @since 0.4.0
 * @category testing
 */
export const claimContract = <E>(layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe("claimDue", () => {
    const seed = (store: HandleStore, key: string, fields: Partial<HandleRecord>, owner = "instance-1") =>
      Effect.flatMap(store.insertOrGet(newHandle({ key, owner })), ({ record }) =>
        store.update(withState(record, { status: "working", taskId: `task-${key}`, ...fields })),
      )

    test("claims due rows free of another live lease, never one in doubt, oldest due first", (store) =>
      Effect.gen(function* () {
        const now = T0 + 100_000
        yield* seed(store, "due-late", { nextPollAt: now - 10, leaseOwner: null, leaseExpiresAt: null })
        yield* seed(store, "due-early", { nextPollAt: now - 500, leaseOwner: null, leaseExpiresAt: null })
        yield* seed(store, "due-expired-lease", {
          nextPollAt: now - 100,
          leaseOwner: "other",
          leaseExpiresAt: now - 1,
        })
        yield* seed(store, "not-due", { nextPollAt: now + 1, leaseOwner: null, leaseExpiresAt: null })
        yield* seed(store, "live-lease", {
          nextPollAt: now - 1,
          leaseOwner: "other",
          leaseExpiresAt: now + 1,
        })
        // A settled row has a due time only while a stray task of it is still to cancel.
        yield* seed(store, "settled-with-chores", {
          status: "completed",
          nextPollAt: now - 1,
          leaseOwner: null,
          settledAt: now - 5,
        })
        yield* seed(store, "settled", {
          status: "completed",
          nextPollAt: null,
          leaseOwner: null,
          settledAt: now,
        })
        yield* seed(store, "in-doubt", {
          status: "in_doubt",
          taskId: null,
          nextPollAt: now - 1,
          leaseOwner: null,
        })
        yield* seed(store, "idle", { nextPollAt: null, leaseOwner: null })
        const claimed = yield* store.claimDue({ owner: "me", now, leaseMs: LEASE, limit: 10 })
        expect(claimed.map((r) => r.key)).toEqual([
          "due-early",
          "due-expired-lease",
          "due-late",
          "settled-with-chores",
        ])
        for (const r of claimed) {
          expect(r.leaseOwner).toBe("me")
          expect(r.leaseExpiresAt).toBe(now + LEASE)
          expect(Option.getOrThrow(yield* store.get(r.scope, r.key))).toEqual(r)
        }
      }))

    test("claims only rows of the servers asked for: by identity, or by the name part of one", (store) =>
      Effect.gen(function* () {
        const now = T0 + 1_000
        const at = (key: string, serverId: string) =>
          Effect.flatMap(store.insertOrGet(newHandle({ key, serverId })), ({ record }) =>
            store.update(
              withState(record, {
                status: "working",
                taskId: `task-${key}`,
                nextPollAt: now - 1,
                leaseOwner: null,
                leaseExpiresAt: null,
              }),
            ),
          )
        yield* at("mine", "research:0123456789abcdef")
        yield* at("moved-here", "docs:fedcba9876543210")
        yield* at("theirs", "research:1111111111111111")
        yield* at("other-name", "billing:0123456789abcdef")
        yield* at("name-only", "docs")
        const servers = { ids: ["research:0123456789abcdef"], names: ["docs"] }
        const claimed = yield* store.claimDue({ owner: "me", now, leaseMs: LEASE, limit: 10, servers })
        // An id without a hash part (written before identities had one) is its own name.
        expect(claimed.map((r) => r.key).sort()).toEqual(["mine", "moved-here", "name-only"])
        const none = yield* store.claimDue({
          owner: "other",
          now,
          leaseMs: LEASE,
          limit: 10,
          servers: { ids: [], names: [] },
        })
        expect(none).toEqual([])
        const rest = yield* store.claimDue({ owner: "any", now, leaseMs: LEASE, limit: 10 })
        expect(rest.map((r) => r.key).sort()).toEqual(["other-name", "theirs"])
      }))

    test("an owner reclaims its own rows at once (a restart with a stable instance id)", (store) =>
      Effect.gen(function* () {
        const now = T0 + 1_000
        yield* seed(store, "mine", { nextPollAt: now, leaseOwner: "me", leaseExpiresAt: now + 10_000 })
        const claimed = yield* store.claimDue({ owner: "me", now, leaseMs: LEASE, limit: 10 })
        expect(claimed.map((r) => r.key)).toEqual(["mine"])
      }))

    test("respects the limit and pending rows are claimable once their dispatcher's lease ran out", (store) =>
      Effect.gen(function* () {
        for (const key of ["a", "b", "c"]) yield* store.insertOrGet(newHandle({ key, owner: "dead" }))
        const early = yield* store.claimDue({ owner: "me", now: T0 + LEASE - 1, leaseMs: LEASE, limit: 10 })
        expect(early).toHaveLength(0)
        const claimed = yield* store.claimDue({ owner: "me", now: T0 + LEASE, leaseMs: LEASE, limit: 2 })
        expect(claimed).toHaveLength(2)
        expect(claimed.every((r) => r.status === "pending")).toBe(true)
      }))

    test("a claim fences off the previous owner's writes", (store) =>
      Effect.gen(function* () {
        const before = yield* seed(store, "k", { nextPollAt: T0, leaseOwner: "old", leaseExpiresAt: T0 })
        const [claimed] = yield* store.claimDue({ owner: "new", now: T0 + 1, leaseMs: LEASE, limit: 1 })
        expect(claimed?.version).toBe(before.version + 1)
        const late = yield* Effect.either(store.update(withState(before, { status: "failed" })))
        expect(Either.isLeft(late) && late.left).toBeInstanceOf(VersionConflict)
      }))

    test("concurrent claimers never share a row", (store) =>
      Effect.gen(function* () {
        for (let i = 0; i < 40; i++)
          yield* seed(store, `r${i}`, { nextPollAt: T0, leaseOwner: null, leaseExpiresAt: null })
        const batches = yield* Effect.all(
          Array.from({ length: 4 }, (_, i) =>
            store.claimDue({ owner: `claimer-${i}`, now: T0 + 1, leaseMs: LEASE, limit: 40 }),
          ),
          { concurrency: "unbounded" },
        )
        const keys = batches.flat().map((r) => r.key)
        expect(new Set(keys).size).toBe(keys.length)
        expect(keys).toHaveLength(40)
      }))
  })

  describe("spreadDue", () => {
    const seedAt = (store: HandleStore, key: string, fields: Partial<HandleRecord>, owner = "instance-1") =>
      Effect.flatMap(store.insertOrGet(newHandle({ key, owner })), ({ record }) =>
        store.update(withState(record, { status: "working", taskId: `task-${key}`, ...fields })),
      )
    const options = (now: number, overrides: Partial<Parameters<HandleStore["spreadDue"]>[0]> = {}) => ({
      owner: "me",
      takeOver: ["me#old"],
      now,
      leaseMs: LEASE,
      limit: 100,
      minIntervalMs: 250,
      maxIntervalMs: 60_000,
      defaultIntervalMs: 1_000,
      ...overrides,
    })

    test("moves overdue live tasks into one clamped interval, leased to the owner", (store) =>
      Effect.gen(function* () {
        const now = T0 + 100_000
        const base = { nextPollAt: now - 50_000, leaseOwner: null, leaseExpiresAt: null }
        for (let i = 0; i < 30; i++) yield* seedAt(store, `a${i}`, { ...base, snapshot: snapshot(5_000) })
        yield* seedAt(store, "tiny", { ...base, snapshot: snapshot(0) })
        yield* seedAt(store, "huge", { ...base, snapshot: snapshot(1e9) })
        yield* seedAt(store, "none", { ...base, snapshot: snapshot(undefined) })
        yield* seedAt(store, "input", { ...base, status: "input_required", snapshot: snapshot(2_000) })
        yield* seedAt(store, "mine-before", { ...base, leaseOwner: "me#old", leaseExpiresAt: now + 9_999 })
        const moved = yield* store.spreadDue(options(now))
        expect(moved).toBe(35)
        const windows: Record<string, number> = { tiny: 250, huge: 60_000, none: 1_000, input: 2_000 }
        const offsets: Array<number> = []
        for (const record of (yield* store.list({ scope: "tenant-a", limit: 100 })).records) {
          const window = windows[record.key] ?? 5_000
          // Never sooner than one window after the due time (an unrecorded poll may have been made then).
          const base = Math.max(now, now - 50_000 + window)
          const offset = (record.nextPollAt ?? -1) - base
          expect(offset).toBeGreaterThanOrEqual(0)
          expect(offset).toBeLessThan(window)
          expect(record.leaseOwner).toBe("me")
          // A dead owner's rows wait only one lease past their poll before another takes them.
          expect(record.leaseExpiresAt).toBe((record.nextPollAt ?? 0) + LEASE)
          expect(record.version).toBe(3)
          if (record.key.startsWith("a")) offsets.push(offset)
        }
        // Spread, not bunched: 30 offsets in a 5 s window are not all in one tenth of it.
        expect(Math.max(...offsets) - Math.min(...offsets)).toBeGreaterThan(500)
      }))

    test("leaves rows it must not move, and respects the limit", (store) =>
      Effect.gen(function* () {
        const now = T0 + 100_000
        const base = {
          nextPollAt: now - 1,
          leaseOwner: null,
          leaseExpiresAt: null,
          snapshot: snapshot(1_000),
        }
        const untouched = {
          "not-due": { ...base, nextPollAt: now + 1 },
          "other-live": { ...base, leaseOwner: "other", leaseExpiresAt: now + 1 },
          "cancel-unsent": { ...base, cancel: CancelIntent.make({ requestedAt: now - 5, sent: false }) },
          terminal: { ...base, status: "completed" as const, result: { content: [] }, settledAt: now - 1 },
          "in-doubt": { ...base, status: "in_doubt" as const, taskId: null },
        }
        for (const [key, fields] of Object.entries(untouched)) yield* seedAt(store, key, fields)
        yield* store.insertOrGet(newHandle({ key: "pending", owner: "dead", now: T0 }))
        for (let i = 0; i < 5; i++) yield* seedAt(store, `live${i}`, base)
        yield* seedAt(store, "cancel-sent", {
          ...base,
          cancel: CancelIntent.make({ requestedAt: now - 5, sent: true }),
        })
        yield* Effect.flatMap(
          store.insertOrGet(newHandle({ key: "other-server", serverId: "elsewhere" })),
          ({ record }) =>
            store.update(withState(record, { status: "working", taskId: "task-elsewhere", ...base })),
        )
        const mine = { ids: ["srv-1"], names: [] }
        expect(yield* store.spreadDue(options(now, { limit: 4, servers: mine }))).toBe(4)
        expect(yield* store.spreadDue(options(now, { servers: mine }))).toBe(2)
        expect(yield* store.spreadDue(options(now, { servers: mine }))).toBe(0)
        for (const key of [...Object.keys(untouched), "pending", "other-server"]) {
          const record = Option.getOrThrow(yield* store.get("tenant-a", key))
          expect(record.leaseOwner === "me", key).toBe(false)
        }
      }))
  })

  describe("releaseOwner", () => {
    const release = (now: number) => ({
      owner: "me",
      now,
      minIntervalMs: 250,
      maxIntervalMs: 60_000,
      defaultIntervalMs: 1_000,
    })
    test("frees the owner's rows that are not yet due, and nothing else", (store) =>
      Effect.gen(function* () {
        const { record: later } = yield* store.insertOrGet(newHandle({ key: "later", owner: "me" }))
        yield* store.update(
          withState(later, { status: "working", taskId: "t-later", nextPollAt: T0 + 5_000 }),
        )
        const { record: idle } = yield* store.insertOrGet(newHandle({ key: "idle", owner: "me" }))
        yield* store.update(withState(idle, { status: "in_doubt", nextPollAt: null }))
        yield* store.insertOrGet(newHandle({ key: "due", owner: "me" }))
        yield* store.insertOrGet(newHandle({ key: "theirs", owner: "them" }))
        expect(yield* store.releaseOwner(release(T0 + 1))).toBe(2)
        const get = (key: string) => Effect.map(store.get("tenant-a", key), Option.getOrThrow)
        const freed = yield* get("later")
        expect([freed.leaseOwner, freed.leaseExpiresAt]).toEqual([null, null])
        expect(freed.version).toBe(later.version + 2)
        expect((yield* get("idle")).leaseOwner).toBeNull()
        expect((yield* get("due")).leaseOwner).toBe("me")
        expect((yield* get("theirs")).leaseOwner).toBe("them")
        expect(yield* store.releaseOwner(release(T0 + 1))).toBe(0)
      }))

    test("a row polled without writes (its next poll its lease's end) is due one window from now, never later than it was", (store) =>
      Effect.gen(function* () {
        const get = (key: string) => Effect.map(store.get("tenant-a", key), Option.getOrThrow)
        const leased = (key: string, pollIntervalMs: number | undefined, until = T0 + 30_000) =>
          Effect.gen(function* () {
            const { record } = yield* store.insertOrGet(newHandle({ key, owner: "me" }))
            yield* store.update(
              withState(record, {
                status: "working",
                taskId: `t-${key}`,
                nextPollAt: T0 + 100,
                snapshot: snapshot(pollIntervalMs),
              }),
            )
            // What a holder's bulk renewal leaves: lease and next poll at its end.
            yield* store.renewLeases({ owner: "me", rows: [{ scope: "tenant-a", key }], until })
          })
        yield* leased("quiet", 2_000)
        yield* leased("clamped", 45_000)
        yield* leased("no-interval", undefined)
        // Renewed to a lease that ends sooner than one window from now.
        yield* leased("soon", 2_000, T0 + 1_500)
        // A real next poll (a server's Retry-After, say) is kept even when it is later than a window.
        const { record: backingOff } = yield* store.insertOrGet(
          newHandle({ key: "backing-off", owner: "me" }),
        )
        yield* store.update(
          withState(backingOff, {
            status: "working",
            taskId: "t-backing-off",
            nextPollAt: T0 + 20_000,
            snapshot: snapshot(2_000),
          }),
        )
        expect(yield* store.releaseOwner(release(T0 + 1_000))).toBe(5)
        expect((yield* get("quiet")).nextPollAt).toBe(T0 + 3_000)
        expect((yield* get("clamped")).nextPollAt).toBe(T0 + 30_000)
        expect((yield* get("no-interval")).nextPollAt).toBe(T0 + 2_000)
        expect((yield* get("soon")).nextPollAt).toBe(T0 + 1_500)
        expect((yield* get("backing-off")).nextPollAt).toBe(T0 + 20_000)
      }))
  })
}
