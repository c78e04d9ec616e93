/**
 * The servers part of the HandleStore contract (issues 15 item 7 and 16): `recordServer`,
 * `listServers`, `removeServer`, `rebind`, and `list` across every scope. Run by
 * `handleStoreContract`.
 *
 * @since 0.3.0
 */
import { describe, expect } from "@effect/vitest"
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import fc from "fast-check"
import { newHandle, storeTest, T0 } from "./internal/fixture.js"

const withTask = (store: HandleStore, key: string, serverId: string, taskId: string, scope = "tenant-a") =>
  Effect.flatMap(store.insertOrGet(newHandle({ key, serverId, scope })), ({ record }) =>
    store.update(new HandleRecord({ ...record, status: "working", taskId })),
  )

/**
 * @since 0.3.0
 * @category testing
 */
export const serverContract = <E>(layer: Layer.Layer<HandleStore, E>): void => {
  const test = storeTest(layer)

  describe("servers", () => {
    test("records a server once per name: first seen kept, URL and identity replaced, last seen never back", (store) =>
      Effect.gen(function* () {
        expect(yield* store.listServers).toEqual([])
        const first = yield* store.recordServer({
          name: "billing",
          url: "https://a.example/mcp",
          id: "billing:1",
          now: T0,
        })
        expect(first).toEqual({
          name: "billing",
          url: "https://a.example/mcp",
          id: "billing:1",
          firstSeenAt: T0,
          lastSeenAt: T0,
        })
        const moved = yield* store.recordServer({
          name: "billing",
          url: "https://b.example/mcp",
          id: "billing:2",
          now: T0 + 50,
        })
        expect(moved).toEqual({
          name: "billing",
          url: "https://b.example/mcp",
          id: "billing:2",
          firstSeenAt: T0,
          lastSeenAt: T0 + 50,
        })
        // A process with a slower clock sees it later: last seen stays.
        const late = yield* store.recordServer({
          name: "billing",
          url: "https://b.example/mcp",
          id: "billing:2",
          now: T0 + 10,
        })
        expect(late.lastSeenAt).toBe(T0 + 50)
        yield* store.recordServer({ name: "alpha", url: "http://localhost:3000/mcp", id: "alpha:1", now: T0 })
        expect((yield* store.listServers).map((s) => s.name)).toEqual(["alpha", "billing"])
      }))

    test("lists servers in code point order, names of any text kept as given", (store) =>
      Effect.gen(function* () {
        // A fixed sample: the same names on every run, mixed scripts and astral characters included.
        const arbitrary = fc.uniqueArray(fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }), {
          minLength: 8,
          maxLength: 12,
        })
        const names = [
          ...new Set([...(fc.sample(arbitrary, { numRuns: 1, seed: 42 })[0] ?? []), "é", "𝒳", "z", "Z"]),
        ]
        for (const name of names)
          yield* store.recordServer({ name, url: "https://x.example", id: `${name}:0`, now: T0 })
        const listed = (yield* store.listServers).map((s) => s.name)
        const byCodePoint = [...names].sort((a, b) => {
          const x = [...a].map((c) => c.codePointAt(0) ?? 0)
          const y = [...b].map((c) => c.codePointAt(0) ?? 0)
          for (let i = 0; i < Math.min(x.length, y.length); i++)
            if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0)
          return x.length - y.length
        })
        expect(listed).toEqual(byCodePoint)
      }))

    test("removes a server by name, leaving its rows", (store) =>
      Effect.gen(function* () {
        yield* store.recordServer({ name: "billing", url: "https://a.example/mcp", id: "billing:1", now: T0 })
        yield* store.insertOrGet(newHandle({ key: "k", serverId: "billing:1" }))
        expect(yield* store.removeServer("billing")).toBe(true)
        expect(yield* store.removeServer("billing")).toBe(false)
        expect(yield* store.listServers).toEqual([])
        expect(Option.isSome(yield* store.get("tenant-a", "k"))).toBe(true)
      }))

    test("rebind moves every row of one server to another, versions bumped, other servers untouched", (store) =>
      Effect.gen(function* () {
        const a = yield* withTask(store, "a", "old:1", "task-a")
        yield* store.insertOrGet(newHandle({ key: "b", serverId: "old:1", scope: "tenant-b" }))
        yield* store.insertOrGet(newHandle({ key: "c", serverId: "other:1" }))
        expect(yield* store.rebind({ from: "old:1", to: "new:1" })).toBe(2)
        const moved = Option.getOrThrow(yield* store.get("tenant-a", "a"))
        expect(moved.serverId).toBe("new:1")
        expect(moved.taskId).toBe("task-a")
        expect(moved.version).toBe(a.version + 1)
        expect(Option.getOrThrow(yield* store.get("tenant-b", "b")).serverId).toBe("new:1")
        expect(Option.getOrThrow(yield* store.get("tenant-a", "c")).serverId).toBe("other:1")
        // The old version's holder loses its next write.
        const stale = yield* Effect.either(store.update(a))
        expect(stale._tag).toBe("Left")
        expect(yield* store.rebind({ from: "old:1", to: "new:1" })).toBe(0)
        expect(yield* store.rebind({ from: "new:1", to: "new:1" })).toBe(0)
      }))

    test("rebind within one scope leaves the other scopes' rows", (store) =>
      Effect.gen(function* () {
        yield* store.insertOrGet(newHandle({ key: "a", serverId: "old:1", scope: "tenant-a" }))
        yield* store.insertOrGet(newHandle({ key: "b", serverId: "old:1", scope: "tenant-b" }))
        expect(yield* store.rebind({ from: "old:1", to: "new:1", scope: "tenant-a" })).toBe(1)
        expect(Option.getOrThrow(yield* store.get("tenant-b", "b")).serverId).toBe("old:1")
      }))

    test("rebind moves nothing when a task id is already held on the target server", (store) =>
      Effect.gen(function* () {
        yield* withTask(store, "a", "old:1", "task-1")
        yield* withTask(store, "b", "old:1", "task-2")
        yield* withTask(store, "c", "new:1", "task-2")
        const outcome = yield* Effect.either(store.rebind({ from: "old:1", to: "new:1" }))
        expect(outcome._tag).toBe("Left")
        if (outcome._tag === "Left") {
          expect(outcome.left._tag).toBe("TaskIdTaken")
          expect(outcome.left).toMatchObject({ scope: "tenant-a", key: "b", serverId: "new:1" })
        }
        expect(Option.getOrThrow(yield* store.get("tenant-a", "a")).serverId).toBe("old:1")
        expect(Option.getOrThrow(yield* store.get("tenant-a", "b")).serverId).toBe("old:1")
      }))
  })

  describe("list across every scope", () => {
    test("pages through every scope, each row exactly once, ties of time and key broken by scope", (store) =>
      Effect.gen(function* () {
        const expected: Array<string> = []
        for (let i = 0; i < 12; i++) {
          for (const scope of ["b", "a", "c"]) {
            // Keys repeat across scopes and times repeat across keys: only the scope tells apart.
            yield* store.insertOrGet(
              newHandle({
                key: `k${i % 4}`,
                serverId: "s:1",
                scope: `${scope}${Math.floor(i / 4)}`,
                now: T0 + (i % 4),
              }),
            )
          }
        }
        const all = yield* store.list({ limit: 1000 })
        expect(all.records).toHaveLength(36)
        const order = all.records.map((r) => `${r.createdAt}/${r.key}/${r.scope}`)
        expected.push(...[...order].sort())
        expect(order).toEqual(expected)
        for (const limit of [1, 5, 7]) {
          const seen: Array<string> = []
          let cursor: string | undefined
          for (;;) {
            const page = yield* store.list({ limit, ...(cursor ? { cursor } : {}) })
            seen.push(...page.records.map((r) => `${r.createdAt}/${r.key}/${r.scope}`))
            if (page.nextCursor === null) break
            cursor = page.nextCursor
          }
          expect(seen).toEqual(order)
        }
        const done = yield* store.list({ limit: 1000, statuses: ["completed"] })
        expect(done.records).toHaveLength(0)
      }))
  })
}
