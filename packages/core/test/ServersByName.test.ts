/**
 * Servers by name (issue 15, item 7): a row keeps its server's name, the store keeps where each
 * name is, a client at the URL the store binds a name to drives the rows written before under
 * that name (a name at another URL is another endpoint until an operator moves it: issue 28),
 * and `HandleStore.rebind` moves rows to another server.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HandleStoreDriver from "@mcp-handles/core/HandleStoreDriver"
import * as ServerIdentity from "@mcp-handles/core/ServerIdentity"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import fc from "fast-check"
import { elapse, makeHarness, runFor, serverUrl, startProcess, withStore } from "./support/harness.js"

const tools = [
  {
    name: "job",
    shape: "task" as const,
    durationMs: 2_000,
    pollIntervalMs: 500,
    outcome: { kind: "result" as const, text: "done" },
  },
]

const movedUrl = "http://moved.test/mcp"

/** Instance a writes call k against the harness's URL under the name `fake`. */
const writtenByA = Effect.gen(function* () {
  const h = yield* makeHarness({ tools })
  const a = yield* startProcess(h, { instanceId: "a", background: false })
  const handle = yield* runFor(a.client.callTool("fake", "job", { n: 1 }, { key: "k" }), 1_000)
  return { h, a, handle }
})

describe("servers by name", () => {
  it.effect(
    "a client records its servers; one at another URL under the same name drives the rows written before only once an operator moved the name",
    () =>
      Effect.gen(function* () {
        const { h, a, handle } = yield* writtenByA
        const writtenUnder = handle.record.serverId
        expect(writtenUnder).toBe(yield* ServerIdentity.of({ name: "fake", url: serverUrl }))
        const [first] = yield* h.store.listServers
        expect(first).toMatchObject({ name: "fake", url: serverUrl, id: writtenUnder })
        a.crash()
        // A's lease runs out; B is configured with the same name at another URL. Another app may
        // still use the name where the store has it (issue 28): B leaves the name, and A's rows, alone.
        yield* TestClock.adjust("1 minute")
        const movedServer = { name: "fake", url: movedUrl }
        const moved = { instanceId: "b", servers: [movedServer] }
        const b = yield* startProcess(h, { ...moved, background: { tickMs: 200 } })
        yield* elapse(10_000, 500)
        const untouched = Option.getOrThrow(yield* h.store.get("default", "k"))
        expect(untouched.polls).toBe(0)
        expect(untouched.status).toBe("working")
        expect((yield* h.store.listServers)[0]).toMatchObject({
          url: serverUrl,
          lastSeenAt: first?.lastSeenAt,
        })
        yield* b.close
        // An operator moves the name (`mcp-handles servers --set fake=URL`): B drives the rows
        // written before, which keep the identity they were written under.
        const now = yield* h.store.now
        yield* h.store.recordServer({
          name: "fake",
          url: movedUrl,
          id: yield* ServerIdentity.of(movedServer),
          now,
        })
        const b2 = yield* startProcess(h, { ...moved, background: false })
        const outcome = yield* runFor(b2.client.settle("k"), 10_000)
        expect(outcome._tag).toBe("Completed")
        const row = Option.getOrThrow(yield* h.store.get("default", "k"))
        expect(row.serverId).toBe(writtenUnder)
        expect(row.polls).toBeGreaterThan(0)
        // The same call by key attaches (the same server by name), never KeyReused.
        const again = yield* b2.client.callTool("fake", "job", { n: 1 }, { key: "k" })
        expect(again.launched).toBe(false)
        expect(h.server.ledger.launchesForKey("k")).toHaveLength(1)
      }),
  )

  it.effect(
    "a running client follows an operator's move of a name at its next sweep, without a restart, with one read per sweep",
    () =>
      Effect.gen(function* () {
        const { h, a, handle } = yield* writtenByA
        a.crash()
        yield* TestClock.adjust("1 minute")
        // B runs on, configured with the name at another URL: A's row is not B's to drive.
        let reads = 0
        const counting = withStore(h, {
          ...h.store,
          listServers: Effect.zipRight(
            Effect.sync(() => reads++),
            h.store.listServers,
          ),
        })
        const movedServer = { name: "fake", url: movedUrl }
        const b = yield* startProcess(counting, {
          instanceId: "b",
          servers: [movedServer],
          background: { tickMs: 500 },
        })
        yield* elapse(5_000, 500)
        expect(Option.getOrThrow(yield* h.store.get("default", "k")).polls).toBe(0)
        // An operator moves the name here (`mcp-handles servers --set fake=URL`) while B runs:
        // B's next sweep takes the row up (its task ended meanwhile: one poll says so).
        const readsBefore = reads
        yield* h.store.recordServer({
          name: "fake",
          url: movedUrl,
          id: yield* ServerIdentity.of(movedServer),
          now: yield* h.store.now,
        })
        yield* elapse(2_000, 100)
        const row = Option.getOrThrow(yield* h.store.get("default", "k"))
        expect(row.status).toBe("completed")
        expect(row.polls).toBe(1)
        expect(row.serverId, "the row keeps the identity it was written under").toBe(handle.record.serverId)
        // One read of the bindings per sweep (one every 500 ms), none per poll.
        expect(reads - readsBefore).toBeGreaterThan(0)
        expect(reads - readsBefore).toBeLessThanOrEqual(2_000 / 500 + 1)
        yield* b.close
      }),
  )

  it.effect("a server list the store cannot read, even by a defect, stops no sweep", () =>
    Effect.gen(function* () {
      const { h, a } = yield* writtenByA
      a.crash()
      yield* TestClock.adjust("1 minute")
      // Read once as the client starts; every later read (one per sweep) dies.
      let reads = 0
      const failing = withStore(h, {
        ...h.store,
        listServers: Effect.suspend(() =>
          reads++ === 0 ? h.store.listServers : Effect.die(new Error("a bug in the store driver")),
        ),
      })
      yield* startProcess(failing, { instanceId: "b", background: { tickMs: 500 } })
      yield* elapse(2_000, 100)
      expect(reads).toBeGreaterThan(2)
      expect(Option.getOrThrow(yield* h.store.get("default", "k")).status).toBe("completed")
    }),
  )

  it.effect("rebind moves a server's rows to another: a client that knows only the other finishes them", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const a = yield* startProcess(h, { instanceId: "a", background: false })
      yield* runFor(a.client.callTool("fake", "job", {}, { key: "k" }), 1_000)
      a.crash()
      yield* TestClock.adjust("1 minute")
      const from = yield* ServerIdentity.of({ name: "fake", url: serverUrl })
      const to = yield* ServerIdentity.of({ name: "replacement", url: movedUrl })
      expect(yield* h.store.rebind({ from, to })).toBe(1)
      const b = yield* startProcess(h, {
        instanceId: "b",
        background: false,
        servers: [{ name: "replacement", url: movedUrl }],
      })
      expect((yield* runFor(b.client.settle("k"), 10_000))._tag).toBe("Completed")
    }),
  )

  it.effect("nothing is recorded with recordServers: false, nor a URL whose query looks like a secret", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      yield* startProcess(h, { instanceId: "a", background: false, recordServers: false })
      expect(yield* h.store.listServers).toEqual([])
      yield* startProcess(h, {
        instanceId: "b",
        background: false,
        servers: [
          { name: "secret", url: "http://fake.test/mcp?api_key=abc" },
          { name: "plain", url: "http://fake.test/mcp?region=eu" },
        ],
      })
      expect((yield* h.store.listServers).map((s) => [s.name, s.url])).toEqual([
        ["plain", "http://fake.test/mcp?region=eu"],
      ])
    }),
  )
})

describe("list cursors across scopes", () => {
  it("round-trip any key and scope, and keep the one-scope form for a position without a scope", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4e12 }),
        fc.string({ unit: "grapheme" }),
        fc.option(fc.string({ unit: "grapheme" }), { nil: undefined }),
        (createdAt, key, scope) => {
          const position = scope === undefined ? { createdAt, key } : { createdAt, key, scope }
          expect(
            Option.getOrThrow(HandleStoreDriver.decodeCursor(HandleStoreDriver.encodeCursor(position))),
          ).toEqual(position)
        },
      ),
    )
    expect(HandleStoreDriver.encodeCursor({ createdAt: 5, key: "a.b/c" })).toBe("5.a.b%2Fc")
  })
})
