/**
 * The HandleStore contract suite (vitest and `@effect/vitest`): what every store, ours or a third
 * party's, must do to be used by the engine.
 *
 * @since 0.2.0
 */
import { describe, expect } from "@effect/vitest"
import {
  CancelIntent,
  HandleRecord,
  InputAnswer,
  RpcError,
  type Status,
  Status as StatusSchema,
  TaskSnapshot,
} from "@mcp-handles/core/HandleRecord"
import { type HandleStore, VersionConflict } from "@mcp-handles/core/HandleStore"
import type { JsonObject } from "@mcp-handles/core/Json"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import fc from "fast-check"
import { consumerContract } from "./ConsumerContract.js"
import { historyContract } from "./HistoryContract.js"
import { instanceContract } from "./InstanceContract.js"
import { LEASE, newHandle, storeTest, T0 } from "./internal/fixture.js"
import { outcomeContract } from "./OutcomeContract.js"
import { serverContract } from "./ServerContract.js"

/** A stored record moved to another state, as the client would write it. */
const withState = (record: HandleRecord, fields: Partial<HandleRecord>): HandleRecord =>
  new HandleRecord({ ...record, ...fields })

const jsonObject = fc.dictionary(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.jsonValue({ maxDepth: 3 }),
  {
    maxKeys: 6,
  },
) as fc.Arbitrary<JsonObject>

const statuses: ReadonlyArray<Status> = StatusSchema.literals

/** Every field populated with arbitrary (unicode, nested, large) values. */
const fullRecordFields = fc.record({
  tool: fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
  arguments: fc.option(jsonObject, { nil: null }),
  taskId: fc.option(fc.string({ unit: "grapheme", minLength: 1, maxLength: 80 }), { nil: null }),
  status: fc.constantFrom(...statuses),
  snapshot: fc.option(
    fc
      .record({
        statusMessage: fc.option(fc.string({ unit: "grapheme" }), { nil: undefined }),
        pollIntervalMs: fc.option(fc.integer({ min: 0, max: 10_000_000 }), { nil: undefined }),
        ttlMs: fc.option(fc.integer({ min: 0, max: 1e9 }), { nil: null }),
        createdAt: fc.integer({ min: 0, max: 4e12 }),
        lastUpdatedAt: fc.integer({ min: 0, max: 4e12 }),
        receivedAt: fc.integer({ min: 0, max: 4e12 }),
      })
      .map(({ statusMessage, pollIntervalMs, ...rest }) =>
        TaskSnapshot.make({
          ...rest,
          ...(statusMessage === undefined ? {} : { statusMessage }),
          ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
        }),
      ),
    { nil: null },
  ),
  result: fc.option(jsonObject, { nil: null }),
  error: fc.option(
    fc
      .record({ code: fc.integer({ min: -33000, max: 0 }), message: fc.string({ unit: "grapheme" }) })
      .map((e) => RpcError.make(e)),
    { nil: null },
  ),
  inputRequests: fc.option(jsonObject, { nil: null }),
  answers: fc.dictionary(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 10 }),
    fc
      .record({ response: fc.jsonValue({ maxDepth: 2 }), acknowledged: fc.boolean() })
      .map((a) => InputAnswer.make(a as InputAnswer)),
    { maxKeys: 4 },
  ),
  stuckSince: fc.option(fc.integer({ min: 0, max: 4e12 }), { nil: null }),
  cancel: fc.option(
    fc
      .record({ requestedAt: fc.integer({ min: 0, max: 4e12 }), sent: fc.boolean() })
      .map((c) => CancelIntent.make(c)),
    { nil: null },
  ),
  nextPollAt: fc.option(fc.integer({ min: 0, max: 4e12 }), { nil: null }),
  attempts: fc.nat(1000),
  pollsWithoutInterval: fc.nat(1000),
  launches: fc.integer({ min: 1, max: 5 }),
  polls: fc.nat(100_000),
  lastProblem: fc.option(fc.string({ unit: "grapheme" }), { nil: null }),
  settledAt: fc.option(fc.integer({ min: 0, max: 4e12 }), { nil: null }),
})

/**
 * Runs the HandleStore contract against `layer`, which must build a fresh, empty store each
 * time it is provided: every test provides it anew.
 *
 * @since 0.1.0
 * @category testing
 */
export const handleStoreContract = <E>(name: string, layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe(`HandleStore contract: ${name}`, () => {
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
          const again = yield* store.insertOrGet(
            newHandle({ tool: "other", arguments: { n: 2 }, now: T0 + 5 }),
          )
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

    describe("spreadDue", () => {
      const seedAt = (store: HandleStore, key: string, fields: Partial<HandleRecord>, owner = "instance-1") =>
        Effect.flatMap(store.insertOrGet(newHandle({ key, owner })), ({ record }) =>
          store.update(withState(record, { status: "working", taskId: `task-${key}`, ...fields })),
        )
      const snapshot = (pollIntervalMs: number | undefined) =>
        TaskSnapshot.make({
          ttlMs: null,
          createdAt: T0,
          lastUpdatedAt: T0,
          receivedAt: T0,
          ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
        })
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
            terminal: { ...base, status: "completed" as const, result: {}, settledAt: now - 1 },
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

    describe("now", () => {
      test("reads a clock: finite epoch milliseconds that do not run backwards", (store) =>
        Effect.gen(function* () {
          const first = yield* store.now
          const second = yield* store.now
          expect(Number.isFinite(first)).toBe(true)
          expect(second).toBeGreaterThanOrEqual(first)
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
          expect(
            yield* store.claimDue({ owner: "new", now: T0 + 98_999, leaseMs: LEASE, limit: 10 }),
          ).toEqual([])
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

    describe("releaseOwner", () => {
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
          expect(yield* store.releaseOwner({ owner: "me", now: T0 + 1 })).toBe(2)
          const get = (key: string) => Effect.map(store.get("tenant-a", key), Option.getOrThrow)
          const freed = yield* get("later")
          expect([freed.leaseOwner, freed.leaseExpiresAt]).toEqual([null, null])
          expect(freed.version).toBe(later.version + 2)
          expect((yield* get("idle")).leaseOwner).toBeNull()
          expect((yield* get("due")).leaseOwner).toBe("me")
          expect((yield* get("theirs")).leaseOwner).toBe("them")
          expect(yield* store.releaseOwner({ owner: "me", now: T0 + 1 })).toBe(0)
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

    describe("deleteSettledBefore", () => {
      test("deletes only terminal rows settled before the cutoff, within the scope asked", (store) =>
        Effect.gen(function* () {
          const settle = (scope: string, key: string, status: Status, settledAt: number | null) =>
            Effect.flatMap(store.insertOrGet(newHandle({ scope, key })), ({ record }) =>
              // As the transition leaves a row that rests: nothing due.
              store.update(withState(record, { status, settledAt, nextPollAt: null })),
            )
          yield* settle("tenant-a", "old-done", "completed", T0)
          yield* settle("tenant-a", "old-expired", "expired", T0 + 1)
          yield* settle("tenant-a", "new-done", "failed", T0 + 10_000)
          yield* settle("tenant-a", "doubt", "in_doubt", null)
          yield* settle("tenant-a", "open", "working", null)
          yield* settle("tenant-b", "other-old", "cancelled", T0)
          // A settled row with a due time still has a stray task to cancel: its only record.
          yield* Effect.flatMap(
            store.insertOrGet(newHandle({ scope: "tenant-a", key: "stray" })),
            ({ record }) =>
              store.update(withState(record, { status: "completed", settledAt: T0, nextPollAt: T0 })),
          )
          const deleted = yield* store.deleteSettledBefore({ scope: "tenant-a", settledBefore: T0 + 5_000 })
          expect(deleted).toEqual({ deleted: 2, kept: 0, unacknowledged: [] })
          const left = yield* store.list({ scope: "tenant-a", limit: 10 })
          expect(left.records.map((r) => r.key).sort()).toEqual(["doubt", "new-done", "open", "stray"])
          expect(Option.isSome(yield* store.get("tenant-b", "other-old"))).toBe(true)
          expect((yield* store.deleteSettledBefore({ settledBefore: T0 + 5_000 })).deleted).toBe(1)
        }))
    })

    outcomeContract(layer)
    consumerContract(layer)
    historyContract(layer)
    serverContract(layer)
    instanceContract(layer)
  })
}
