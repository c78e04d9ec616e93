/**
 * The leases part of the HandleStore contract: a holder gives up or renews its lease on a row,
 * one row or many at once, without fencing anybody. Run by `handleStoreContract`.
 *
 * @since 0.4.0
 */
import { describe, expect } from "@effect/vitest"
import { stampOf } from "@mcp-handles/core/CallStoreDriver"
import { CancelIntent, InputAnswer } from "@mcp-handles/core/HandleRecord"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { LEASE, newHandle, storeTest, T0, withState } from "./internal/fixture.js"

/**
 * @since 0.4.0
 * @category testing
 */
export const leaseContract = <E>(layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe("release", () => {
    test("clears the owner's lease and leaves another owner's lease alone", (store) =>
      Effect.gen(function* () {
        yield* store.insertOrGet(newHandle({ key: "mine", owner: "me" }))
        yield* store.insertOrGet(newHandle({ key: "theirs", owner: "them" }))
        yield* store.release("tenant-a", "mine", "me")
        yield* store.release("tenant-a", "theirs", "me")
        const mine = Option.getOrThrow(yield* store.get("tenant-a", "mine"))
        expect(mine.leaseOwner).toBeNull()
        expect(mine.leaseExpiresAt).toBeNull()
        expect(Option.getOrThrow(yield* store.get("tenant-a", "theirs")).leaseOwner).toBe("them")
      }))
  })

  describe("peek", () => {
    test("says the row's version, lease and next poll as its record does, after every kind of write", (store) =>
      Effect.gen(function* () {
        expect(Option.isNone(yield* store.peek("tenant-a", "missing"))).toBe(true)
        const agrees = Effect.gen(function* () {
          const record = Option.getOrThrow(yield* store.get("tenant-a", "row"))
          expect(Option.getOrThrow(yield* store.peek("tenant-a", "row"))).toEqual(stampOf(record))
          return record
        })
        const { record } = yield* store.insertOrGet(newHandle({ key: "row", owner: "me" }))
        expect(Option.getOrThrow(yield* store.peek("tenant-a", "row"))).toEqual(stampOf(record))
        const working = yield* store.update(
          withState(yield* agrees, { status: "working", taskId: "t-row", nextPollAt: T0 + 500 }),
        )
        expect(working.version).toBe(record.version + 1)
        yield* agrees
        // Renewals move the lease (and the next poll) and keep the version: what a holder sees.
        yield* store.renewLease({ scope: "tenant-a", key: "row", owner: "me", until: T0 + 7_000 })
        expect((yield* agrees).version).toBe(working.version)
        yield* store.renewLeases({
          owner: "me",
          rows: [{ scope: "tenant-a", key: "row" }],
          until: T0 + 9_000,
        })
        const renewed = yield* agrees
        expect([renewed.version, renewed.leaseExpiresAt, renewed.nextPollAt]).toEqual([
          working.version,
          T0 + 9_000,
          T0 + 9_000,
        ])
        yield* store.claimDue({ owner: "other", now: T0 + 20_000, leaseMs: LEASE, limit: 1 })
        expect((yield* agrees).leaseOwner).toBe("other")
        yield* store.release("tenant-a", "row", "other")
        expect((yield* agrees).leaseOwner).toBeNull()
        const released = yield* agrees
        const spread = yield* store.spreadDue({
          owner: "me",
          takeOver: [],
          now: T0 + 20_000,
          leaseMs: LEASE,
          limit: 10,
          minIntervalMs: 1_000,
          maxIntervalMs: 60_000,
          defaultIntervalMs: 5_000,
        })
        expect(spread).toBe(1)
        expect((yield* agrees).version).toBeGreaterThan(released.version)
      }))
  })

  describe("renewLease", () => {
    test("extends the holder's lease without bumping the version; anyone else gets false", (store) =>
      Effect.gen(function* () {
        const { record } = yield* store.insertOrGet(newHandle({ key: "held", owner: "me" }))
        expect(
          yield* store.renewLease({ scope: "tenant-a", key: "held", owner: "me", until: T0 + 99_000 }),
        ).toBe(true)
        const renewed = Option.getOrThrow(yield* store.get("tenant-a", "held"))
        expect(renewed.leaseOwner).toBe("me")
        expect(renewed.leaseExpiresAt).toBe(T0 + 99_000)
        expect(renewed.version).toBe(record.version)
        // The holder's own compare-and-set still matches after a renewal.
        yield* store.update(withState(renewed, { lastProblem: "still mine" }))
        expect(
          yield* store.renewLease({ scope: "tenant-a", key: "held", owner: "them", until: T0 + 1 }),
        ).toBe(false)
        expect(
          yield* store.renewLease({ scope: "tenant-a", key: "missing", owner: "me", until: T0 + 1 }),
        ).toBe(false)
        expect(Option.getOrThrow(yield* store.get("tenant-a", "held")).leaseExpiresAt).toBe(T0 + 99_000)
      }))

    test("a renewal that lost the row to a claimer says so and changes nothing", (store) =>
      Effect.gen(function* () {
        yield* store.insertOrGet(newHandle({ key: "taken", owner: "me" }))
        const [claimed] = yield* store.claimDue({ owner: "new", now: T0 + LEASE, leaseMs: LEASE, limit: 1 })
        expect(claimed?.leaseOwner).toBe("new")
        expect(
          yield* store.renewLease({ scope: "tenant-a", key: "taken", owner: "me", until: T0 + 99_000 }),
        ).toBe(false)
        const row = Option.getOrThrow(yield* store.get("tenant-a", "taken"))
        expect(row.leaseOwner).toBe("new")
        expect(row.leaseExpiresAt).toBe(T0 + 2 * LEASE)
      }))
  })

  describe("renewLeases", () => {
    test("renews the holder's live rows in one call: lease and next poll to `until`, version kept", (store) =>
      Effect.gen(function* () {
        const a = yield* store.insertOrGet(newHandle({ key: "a", owner: "me" }))
        const live = yield* store.update(
          withState(a.record, { status: "working", taskId: "t-a", nextPollAt: T0 }),
        )
        const b = yield* store.insertOrGet(newHandle({ key: "b", owner: "me" }))
        const later = yield* store.update(
          withState(b.record, { status: "input_required", taskId: "t-b", nextPollAt: T0 + 500_000 }),
        )
        const renewed = yield* store.renewLeases({
          owner: "me",
          rows: [
            { scope: "tenant-a", key: "a" },
            { scope: "tenant-a", key: "b" },
            { scope: "tenant-a", key: "missing" },
          ],
          until: T0 + 99_000,
        })
        expect([...renewed].map((row) => row.key).sort()).toEqual(["a", "b"])
        const rowA = Option.getOrThrow(yield* store.get("tenant-a", "a"))
        expect(rowA.leaseExpiresAt).toBe(T0 + 99_000)
        // Nobody takes a watched row up before its lease runs out, and a claim never reads it.
        expect(rowA.nextPollAt).toBe(T0 + 99_000)
        expect(rowA.version).toBe(live.version)
        // A next poll later than `until` stays where it was.
        expect(Option.getOrThrow(yield* store.get("tenant-a", "b")).nextPollAt).toBe(T0 + 500_000)
        expect(yield* store.claimDue({ owner: "new", now: T0 + 98_999, leaseMs: LEASE, limit: 10 })).toEqual(
          [],
        )
        // The holder's own compare-and-set still matches after a renewal.
        yield* store.update(withState(rowA, { lastProblem: "still mine" }))
        expect(later.version).toBe(Option.getOrThrow(yield* store.get("tenant-a", "b")).version)
      }))

    test("leaves out rows held by others, settled rows, and rows with a cancel to send", (store) =>
      Effect.gen(function* () {
        const theirs = yield* store.insertOrGet(newHandle({ key: "theirs", owner: "them" }))
        yield* store.update(withState(theirs.record, { status: "working", taskId: "t-1", nextPollAt: T0 }))
        const done = yield* store.insertOrGet(newHandle({ key: "done", owner: "me" }))
        yield* store.update(
          withState(done.record, { status: "completed", taskId: "t-2", nextPollAt: null, settledAt: T0 }),
        )
        const cancelled = yield* store.insertOrGet(newHandle({ key: "cancel", owner: "me" }))
        yield* store.update(
          withState(cancelled.record, {
            status: "working",
            taskId: "t-3",
            nextPollAt: T0,
            cancel: new CancelIntent({ requestedAt: T0, sent: false }),
          }),
        )
        const rows = ["theirs", "done", "cancel"].map((key) => ({ scope: "tenant-a", key }))
        expect(yield* store.renewLeases({ owner: "me", rows, until: T0 + 99_000 })).toEqual([])
        expect(yield* store.renewLeases({ owner: "me", rows: [], until: T0 + 99_000 })).toEqual([])
        const row = Option.getOrThrow(yield* store.get("tenant-a", "cancel"))
        expect(row.leaseExpiresAt).not.toBe(T0 + 99_000)
        expect(row.nextPollAt).toBe(T0)
      }))
  })

  describe("pendingIntents", () => {
    test("finds the owner's live rows with a cancel to send or an answer to send, and only those", (store) =>
      Effect.gen(function* () {
        const row = (key: string, owner: string, fields: Parameters<typeof withState>[1]) =>
          Effect.flatMap(store.insertOrGet(newHandle({ key, owner })), ({ record }) =>
            store.update(withState(record, { taskId: `t-${key}`, nextPollAt: T0, ...fields })),
          )
        const unsent = new CancelIntent({ requestedAt: T0, sent: false })
        const asked = { confirm: { method: "elicitation/create", params: {} } }
        yield* row("cancel", "me", { status: "working", cancel: unsent })
        yield* row("answer", "me", {
          status: "input_required",
          inputRequests: asked,
          answers: { confirm: new InputAnswer({ response: { action: "accept" }, acknowledged: false }) },
        })
        // Not these: another owner's, a cancel sent, an answer acknowledged, a question unanswered,
        // a settled row, a row with nothing to do.
        yield* row("theirs", "them", { status: "working", cancel: unsent })
        yield* row("sent", "me", {
          status: "working",
          cancel: new CancelIntent({ requestedAt: T0, sent: true }),
        })
        yield* row("acknowledged", "me", {
          status: "input_required",
          inputRequests: asked,
          answers: { confirm: new InputAnswer({ response: { action: "accept" }, acknowledged: true }) },
        })
        yield* row("asked", "me", { status: "input_required", inputRequests: asked })
        yield* row("done", "me", { status: "completed", nextPollAt: null, settledAt: T0, cancel: unsent })
        yield* row("quiet", "me", { status: "working" })
        const found = yield* store.pendingIntents({ owner: "me", limit: 10 })
        expect(found.map((intent) => intent.key).sort()).toEqual(["answer", "cancel"])
        expect(found.every((intent) => intent.scope === "tenant-a")).toBe(true)
        expect(yield* store.pendingIntents({ owner: "me", limit: 1 })).toHaveLength(1)
        expect(yield* store.pendingIntents({ owner: "me", limit: 0 })).toEqual([])
        expect(yield* store.pendingIntents({ owner: "nobody", limit: 10 })).toEqual([])
      }))
  })
}
