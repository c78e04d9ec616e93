/**
 * The calls part of the HandleStore contract: a call's row written once per key, changed only by
 * compare-and-set, one row per task id, and listed page by page. Run by `handleStoreContract`.
 *
 * @since 0.4.0
 */
import { describe, expect } from "@effect/vitest"
import { TaskSnapshot } from "@mcp-handles/core/HandleRecord"
import { type HandleStore, VersionConflict } from "@mcp-handles/core/HandleStore"
import type { JsonObject } from "@mcp-handles/core/Json"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import fc from "fast-check"
import { LEASE, newHandle, storeTest, T0, withState } from "./internal/fixture.js"
import { fullRecordFields } from "./internal/records.js"

/**
 * @since 0.4.0
 * @category testing
 */
export const callContract = <E>(layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe("insertOrGet", () => {
    test("creates a pending row owned by the dispatcher, durable and readable", (store) =>
      Effect.gen(function* () {
        const { record, created } = yield* store.insertOrGet(newHandle())
        expect(created).toBe(true)
        expect(record.status).toBe("pending")
        expect(record.taskId).toBeNull()
        expect(record.leaseOwner).toBe("instance-1")
        expect(record.launches).toBe(1)
        const read = yield* store.get("tenant-a", "key-1")
        expect(Option.getOrThrow(read)).toEqual(record)
      }))

    test("an existing key is returned as stored, never overwritten", (store) =>
      Effect.gen(function* () {
        const first = yield* store.insertOrGet(newHandle())
        const again = yield* store.insertOrGet(newHandle({ tool: "other", arguments: { n: 2 }, now: T0 + 5 }))
        expect(again.created).toBe(false)
        expect(again.record).toEqual(first.record)
      }))

    test("exactly one of many concurrent inserts of one key creates the row", (store) =>
      Effect.gen(function* () {
        const results = yield* Effect.all(
          Array.from({ length: 32 }, (_, i) => store.insertOrGet(newHandle({ owner: `instance-${i}` }))),
          { concurrency: "unbounded" },
        )
        expect(results.filter((r) => r.created)).toHaveLength(1)
        const winner = results.find((r) => r.created)?.record
        for (const r of results) expect(r.record).toEqual(winner)
      }))

    test("the same key in two scopes is two rows", (store) =>
      Effect.gen(function* () {
        const a = yield* store.insertOrGet(newHandle({ scope: "tenant-a" }))
        const b = yield* store.insertOrGet(newHandle({ scope: "tenant-b", tool: "greet" }))
        expect(a.created && b.created).toBe(true)
        expect(Option.getOrThrow(yield* store.get("tenant-b", "key-1")).tool).toBe("greet")
      }))
  })

  describe("get", () => {
    test("a missing key is None", (store) =>
      Effect.gen(function* () {
        expect(Option.isNone(yield* store.get("tenant-a", "nope"))).toBe(true)
      }))

    test("one scope never reads another's row", (store) =>
      Effect.gen(function* () {
        yield* store.insertOrGet(newHandle({ scope: "tenant-a" }))
        expect(Option.isNone(yield* store.get("tenant-b", "key-1"))).toBe(true)
      }))
  })

  describe("update", () => {
    test("compare-and-set bumps the version and persists every field", (store) =>
      Effect.gen(function* () {
        const { record } = yield* store.insertOrGet(newHandle())
        const next = withState(record, {
          status: "working",
          taskId: "task-1",
          snapshot: TaskSnapshot.make({
            ttlMs: 60_000,
            pollIntervalMs: 500,
            createdAt: T0,
            lastUpdatedAt: T0,
            receivedAt: T0 + 3,
          }),
          nextPollAt: T0 + 500,
          updatedAt: T0 + 1,
        })
        const written = yield* store.update(next)
        expect(written.version).toBe(record.version + 1)
        expect(written).toEqual(withState(next, { version: record.version + 1 }))
        expect(Option.getOrThrow(yield* store.get("tenant-a", "key-1"))).toEqual(written)
      }))

    test("a stale version is a VersionConflict and writes nothing", (store) =>
      Effect.gen(function* () {
        const { record } = yield* store.insertOrGet(newHandle())
        const written = yield* store.update(withState(record, { status: "working", taskId: "t-1" }))
        const stale = yield* Effect.either(store.update(withState(record, { status: "failed" })))
        expect(Either.isLeft(stale) && stale.left).toBeInstanceOf(VersionConflict)
        expect(Option.getOrThrow(yield* store.get("tenant-a", "key-1"))).toEqual(written)
      }))

    test("of many concurrent writers from one read, exactly one wins", (store) =>
      Effect.gen(function* () {
        const { record } = yield* store.insertOrGet(newHandle())
        const outcomes = yield* Effect.all(
          Array.from({ length: 16 }, (_, i) =>
            Effect.either(store.update(withState(record, { attempts: i + 1 }))),
          ),
          { concurrency: "unbounded" },
        )
        const wins = outcomes.filter(Either.isRight)
        expect(wins).toHaveLength(1)
        for (const o of outcomes) if (Either.isLeft(o)) expect(o.left).toBeInstanceOf(VersionConflict)
        const [win] = wins
        expect(Option.getOrThrow(yield* store.get("tenant-a", "key-1"))).toEqual(win?.right)
      }))

    test("a row in another scope cannot be updated through a forged scope", (store) =>
      Effect.gen(function* () {
        const { record } = yield* store.insertOrGet(newHandle({ scope: "tenant-a" }))
        const forged = yield* Effect.either(
          store.update(withState(record, { scope: "tenant-b", status: "failed" })),
        )
        expect(Either.isLeft(forged)).toBe(true)
        expect(Option.getOrThrow(yield* store.get("tenant-a", "key-1")).status).toBe("pending")
        expect(Option.isNone(yield* store.get("tenant-b", "key-1"))).toBe(true)
      }))

    test("every field round-trips, unicode and large values included", (store) =>
      Effect.gen(function* () {
        const samples = fc.sample(fullRecordFields, { numRuns: 40, seed: 42 })
        const big: JsonObject = {
          blob: "ü€😀".repeat(50_000),
          nested: { list: Array.from({ length: 2000 }, (_, i) => i) },
        }
        samples.push({ ...(samples[0] as (typeof samples)[number]), arguments: big, result: big })
        for (const [i, fields] of samples.entries()) {
          const key = `k-${i}-🔑-ключ`
          const { record } = yield* store.insertOrGet(
            newHandle({ key, tool: fields.tool, arguments: fields.arguments }),
          )
          // A task id is held by one row: each sample's is made its own.
          const taskId = fields.taskId === null ? null : `${fields.taskId}#${i}`
          const next = withState(record, { ...fields, taskId, updatedAt: T0 + i })
          const written = yield* store.update(next)
          expect(written).toEqual(withState(next, { version: record.version + 1 }))
          expect(Option.getOrThrow(yield* store.get("tenant-a", key))).toEqual(written)
        }
      }))

    // A store may write a routine update its own way (SQLite sets only what a poll changes);
    // what it means may not change, whichever columns differ from the stored row.
    test("a routine update is the same compare-and-set: every field written, stale versions and held ids refused", (store) =>
      Effect.gen(function* () {
        const routine = { routine: true } as const
        for (const [i, fields] of fc.sample(fullRecordFields, { numRuns: 20, seed: 7 }).entries()) {
          const key = `routine-${i}`
          const { record } = yield* store.insertOrGet(
            newHandle({ key, tool: fields.tool, arguments: fields.arguments }),
          )
          const taskId = fields.taskId === null ? null : `${fields.taskId}#r${i}`
          const first = yield* store.update(
            withState(record, { ...fields, taskId, updatedAt: T0 + i }),
            routine,
          )
          expect(Option.getOrThrow(yield* store.get("tenant-a", key))).toEqual(first)
          // Only what a poll changes: the next due time, the lease, the body.
          const polled = withState(first, {
            nextPollAt: T0 + 1000 + i,
            leaseExpiresAt: T0 + 2000 + i,
            polls: first.polls + 1,
          })
          const second = yield* store.update(polled, routine)
          expect(Option.getOrThrow(yield* store.get("tenant-a", key))).toEqual(second)
          const stale = yield* Effect.either(store.update(withState(first, { polls: 0 }), routine))
          expect(Either.isLeft(stale) && stale.left).toBeInstanceOf(VersionConflict)
          expect(Option.getOrThrow(yield* store.get("tenant-a", key))).toEqual(second)
        }
        const holder = yield* store.insertOrGet(newHandle({ key: "holder" }))
        yield* store.update(withState(holder.record, { status: "working", taskId: "held" }), routine)
        const other = yield* store.insertOrGet(newHandle({ key: "other" }))
        const working = yield* store.update(withState(other.record, { status: "working", taskId: "own" }))
        const refused = yield* Effect.either(store.update(withState(working, { taskId: "held" }), routine))
        expect(refused._tag === "Left" && refused.left._tag).toBe("TaskIdTaken")
        expect(Option.getOrThrow(yield* store.get("tenant-a", "other"))).toEqual(working)
      }))
  })

  describe("edge cases", () => {
    test("claimDue with a limit of zero claims nothing", (store) =>
      Effect.gen(function* () {
        yield* store.insertOrGet(newHandle({ owner: "me" }))
        expect(yield* store.claimDue({ owner: "me", now: T0 + 1, leaseMs: LEASE, limit: 0 })).toEqual([])
        expect(Option.getOrThrow(yield* store.get("tenant-a", "key-1")).version).toBe(1)
      }))

    test("updating a row that does not exist is a VersionConflict and creates nothing", (store) =>
      Effect.gen(function* () {
        const { record } = yield* store.insertOrGet(newHandle())
        const ghost = withState(record, { key: "never-begun" })
        const result = yield* Effect.either(store.update(ghost))
        expect(Either.isLeft(result) && result.left).toBeInstanceOf(VersionConflict)
        expect(Option.isNone(yield* store.get("tenant-a", "never-begun"))).toBe(true)
      }))

    test("list orders keys by code point, as binary collations do", (store) =>
      Effect.gen(function* () {
        const keys = ["\u{1F600}", "\uFFFD", "z", "Z", "é"]
        for (const key of keys) yield* store.insertOrGet(newHandle({ key }))
        const page = yield* store.list({ scope: "tenant-a", limit: 10 })
        expect(page.records.map((r) => r.key)).toEqual(["Z", "z", "é", "\uFFFD", "\u{1F600}"])
      }))
  })

  describe("one row per task id", () => {
    test("a second row given a held task id of the same server is refused and not written", (store) =>
      Effect.gen(function* () {
        const first = yield* store.insertOrGet(newHandle({ key: "first" }))
        const second = yield* store.insertOrGet(newHandle({ key: "second" }))
        const other = yield* store.insertOrGet(newHandle({ key: "other-server", serverId: "srv-2" }))
        yield* store.update(withState(first.record, { status: "working", taskId: "shared" }))
        const refused = yield* Effect.either(
          store.update(withState(second.record, { status: "working", taskId: "shared" })),
        )
        expect(refused._tag === "Left" && refused.left._tag).toBe("TaskIdTaken")
        const kept = Option.getOrThrow(yield* store.get("tenant-a", "second"))
        expect([kept.taskId, kept.version]).toEqual([null, second.record.version])
        // Another server may use the same id; and the holder itself writes on as before.
        yield* store.update(withState(other.record, { status: "working", taskId: "shared" }))
        const holder = Option.getOrThrow(yield* store.get("tenant-a", "first"))
        yield* store.update(withState(holder, { status: "completed", settledAt: T0, nextPollAt: null }))
        // Once written elsewhere the id stays held, even by a settled row.
        const again = yield* Effect.either(
          store.update(withState(kept, { status: "working", taskId: "shared" })),
        )
        expect(again._tag === "Left" && again.left._tag).toBe("TaskIdTaken")
      }))

    test("an id is free again once the row that held it is collected", (store) =>
      Effect.gen(function* () {
        const first = yield* store.insertOrGet(newHandle({ key: "first" }))
        const second = yield* store.insertOrGet(newHandle({ key: "second" }))
        const holder = yield* store.update(withState(first.record, { status: "working", taskId: "reused" }))
        yield* store.update(withState(holder, { status: "completed", settledAt: T0, nextPollAt: null }))
        expect((yield* store.deleteSettledBefore({ settledBefore: T0 + 1 })).deleted).toBe(1)
        const taken = yield* store.update(withState(second.record, { status: "working", taskId: "reused" }))
        expect(taken.taskId).toBe("reused")
        expect(Option.getOrThrow(yield* store.get("tenant-a", "second")).taskId).toBe("reused")
      }))
  })

  describe("list", () => {
    test("pages through a scope in creation order, each row exactly once", (store) =>
      Effect.gen(function* () {
        for (let i = 0; i < 25; i++) {
          yield* store.insertOrGet(
            newHandle({ key: `key-${String(i).padStart(2, "0")}`, now: T0 + Math.floor(i / 3) }),
          )
        }
        yield* store.insertOrGet(newHandle({ scope: "tenant-b", key: "foreign" }))
        const seen: Array<string> = []
        let cursor: string | undefined
        for (;;) {
          const page = yield* store.list({ scope: "tenant-a", limit: 7, ...(cursor ? { cursor } : {}) })
          expect(page.records.length).toBeLessThanOrEqual(7)
          seen.push(...page.records.map((r) => r.key))
          if (page.nextCursor === null) break
          cursor = page.nextCursor
        }
        expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `key-${String(i).padStart(2, "0")}`))
      }))

    test("filters by status and by server", (store) =>
      Effect.gen(function* () {
        const a = yield* store.insertOrGet(newHandle({ key: "a", serverId: "s1" }))
        yield* store.update(withState(a.record, { status: "completed", settledAt: T0 }))
        yield* store.insertOrGet(newHandle({ key: "b", serverId: "s2" }))
        const c = yield* store.insertOrGet(newHandle({ key: "c", serverId: "s1" }))
        yield* store.update(withState(c.record, { status: "in_doubt" }))
        const byStatus = yield* store.list({
          scope: "tenant-a",
          statuses: ["pending", "in_doubt"],
          limit: 10,
        })
        expect(byStatus.records.map((r) => r.key)).toEqual(["b", "c"])
        const byServer = yield* store.list({ scope: "tenant-a", serverId: "s1", limit: 10 })
        expect(byServer.records.map((r) => r.key)).toEqual(["a", "c"])
        const none = yield* store.list({ scope: "tenant-a", statuses: [], limit: 10 })
        expect(none.records).toHaveLength(0)
      }))

    test("lists only rows with a due time when asked: open ones, and settled ones with a stray to cancel", (store) =>
      Effect.gen(function* () {
        const settle = (key: string, nextPollAt: number | null) =>
          Effect.flatMap(store.insertOrGet(newHandle({ key })), ({ record }) =>
            store.update(withState(record, { status: "failed", settledAt: T0, nextPollAt })),
          )
        yield* settle("settled", null)
        yield* settle("settled-with-stray", T0 + 5)
        yield* store.insertOrGet(newHandle({ key: "pending" }))
        const doubt = yield* store.insertOrGet(newHandle({ key: "doubt" }))
        yield* store.update(withState(doubt.record, { status: "in_doubt", nextPollAt: null }))
        const scheduled = yield* store.list({ scope: "tenant-a", scheduled: true, limit: 10 })
        expect(scheduled.records.map((r) => r.key)).toEqual(["pending", "settled-with-stray"])
        const settled = yield* store.list({ statuses: ["failed"], scheduled: true, limit: 10 })
        expect(settled.records.map((r) => r.key)).toEqual(["settled-with-stray"])
      }))
  })
}
