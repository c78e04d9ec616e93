/**
 * A poll that finds the task as the row says writes nothing (issue 29, item 1): on a real SQLite
 * store, N such polls cost at most N/10 store writes, while anything a restart needs (status,
 * interval, input) is written before it is acted on, and a process that dies between unwritten
 * polls leaves a row nobody polls sooner than one interval after its last poll.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import type * as Config from "@mcp-handles/fake-server/Config"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { elapse, type Harness, makeHarness, runFor, startProcess, withStore } from "./support/harness.js"

/** A view of the harness on a fresh SQLite file, counting the store's operations but reads of a row. */
const onSqlite = (h: Harness) =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-quiet-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
    )
    // Routine writes commit at once: the store's commit delay runs on a real timer, not the TestClock.
    const sqlite = yield* SqliteStore.make({ filename: path.join(dir, "tasks.db"), commitDelay: 0 })
    // Every operation but the reads before each poll (`peek`, `get`) counts as a write; the
    // reads are counted apart.
    const writes = new Map<string, number>()
    const reads = { get: 0, peek: 0 }
    const counted = { ...sqlite } as Record<string, unknown>
    for (const [op, fn] of Object.entries(sqlite)) {
      if (typeof fn !== "function") continue
      counted[op] = (...args: Array<unknown>) =>
        Effect.tap((fn as (...a: Array<unknown>) => Effect.Effect<unknown, unknown>)(...args), () =>
          Effect.sync(() => {
            if (op === "get" || op === "peek") reads[op]++
            else writes.set(op, (writes.get(op) ?? 0) + 1)
          }),
        )
    }
    const total = () => [...writes.values()].reduce((sum, n) => sum + n, 0)
    return { harness: withStore(h, counted as unknown as HandleStore.HandleStore), writes, reads, total }
  })

const pollsOf = (h: Harness) => h.server.ledger.tasks.reduce((sum, task) => sum + task.polls.length, 0)
const earlyOf = (h: Harness) => h.server.ledger.tasks.reduce((sum, task) => sum + task.earlyPolls, 0)

const longJob = (over: Partial<Config.Tool> = {}): Config.Tool => ({
  name: "job",
  shape: "task",
  durationMs: 600_000,
  pollIntervalMs: 1_000,
  ...over,
})

// These count the polls and writes of the polling path: push (on by default) is off here.
describe("quiet polls", () => {
  it.scoped(
    "N polls that find their tasks still working cost at most N/10 store writes",
    () =>
      Effect.gen(function* () {
        const sqlite = yield* onSqlite(
          yield* makeHarness({
            tools: [longJob(), longJob({ name: "slower", pollIntervalMs: 2_500 })],
          }),
        )
        const h = sqlite.harness
        // Without the background sweep: its claims (two a second, whatever is open) are the
        // instance's cost, not the polls'.
        const client = (yield* startProcess(h, { instanceId: "a", background: false, push: false })).client
        for (let i = 0; i < 4; i++) {
          yield* runFor(client.callTool("fake", i % 2 === 0 ? "job" : "slower", {}, { key: `k${i}` }), 1_000)
        }
        yield* elapse(5_000, 100)
        const [polls0, writes0, gets0] = [pollsOf(h), sqlite.total(), sqlite.reads.get]
        yield* elapse(120_000, 100)
        const polls = pollsOf(h) - polls0
        const writes = sqlite.total() - writes0
        // Two tasks polled every second, two every 2.5 s, for two minutes.
        expect(polls).toBeGreaterThanOrEqual(300)
        expect(writes, JSON.stringify(Object.fromEntries(sqlite.writes))).toBeLessThanOrEqual(polls / 10)
        // Nor are the unchanged rows read whole: each poll peeks at the row's version and lease.
        expect(sqlite.reads.get - gets0).toBeLessThanOrEqual(polls / 10)
        expect(sqlite.reads.peek).toBeGreaterThanOrEqual(polls)
        expect(earlyOf(h)).toBe(0)
        // The store still says what a restart needs; the poll count is caught up at the next write.
        const row = Option.getOrThrow(yield* h.store.get("default", "k0"))
        expect(row.status).toBe("working")
        expect(row.snapshot?.pollIntervalMs).toBe(1_000)
      }),
    // Virtual time, but real work: 1,250 clock steps, each with real SQLite reads, take a few
    // seconds on a quiet machine and passed the default 30 s at load 17.
    180_000,
  )

  it.scoped(
    "a row read or written last is polled without a read as well: its first poll after the launch reads no record",
    () =>
      Effect.gen(function* () {
        const sqlite = yield* onSqlite(yield* makeHarness({ tools: [longJob({ pollIntervalMs: 2_000 })] }))
        const h = sqlite.harness
        const client = (yield* startProcess(h, { instanceId: "a", background: false, push: false })).client
        yield* runFor(client.callTool("fake", "job", {}, { key: "k" }), 100, 10)
        const gets0 = sqlite.reads.get
        yield* elapse(7_000, 100)
        // Three polls, none of which read the row whole: the launch's write left it as they need it.
        expect(pollsOf(h)).toBeGreaterThanOrEqual(3)
        expect(sqlite.reads.get - gets0).toBe(0)
        expect(sqlite.reads.peek).toBeGreaterThanOrEqual(3)
      }),
    60_000,
  )

  it.scoped(
    "rows launched together that fall behind together renew their leases together, not one write each",
    () =>
      Effect.gen(function* () {
        const sqlite = yield* onSqlite(yield* makeHarness({ tools: [longJob()] }))
        const h = sqlite.harness
        const client = (yield* startProcess(h, { instanceId: "a", background: false, push: false })).client
        // A burst: every row is written once, at its launch; its first poll is quiet, and its
        // second needs the store to say more than that write did (see quiet.ts), before the
        // heartbeat (every 10 s) has renewed anything.
        const burst = 20
        yield* runFor(
          Effect.forEach(
            Array.from({ length: burst }, (_, i) => i),
            (i) => client.callTool("fake", "job", {}, { key: `k${i}` }),
            { concurrency: "unbounded", discard: true },
          ),
          100,
          10,
        )
        const renewals0 = sqlite.writes.get("renewLeases") ?? 0
        yield* elapse(3_000, 100)
        expect(pollsOf(h)).toBeGreaterThanOrEqual(2 * burst)
        // One statement for the burst (or two, had a row's next poll fallen past the first's reach).
        expect(sqlite.writes.get("renewLeases") ?? 0).toBeLessThanOrEqual(renewals0 + 2)
        expect(earlyOf(h)).toBe(0)
      }),
    60_000,
  )

  it.scoped(
    "a stray task of a quietly polled row is cancelled, however often its cancel fails first",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [longJob()],
          faults: [{ when: { method: "tasks/cancel", times: 20 }, fault: { kind: "status", status: 503 } }],
        })
        const client = (yield* startProcess(h, { instanceId: "a", background: false, push: false })).client
        yield* runFor(client.callTool("fake", "job", {}, { key: "k" }), 1_000)
        yield* runFor(client.callTool("fake", "job", {}, { key: "other" }), 1_000)
        yield* elapse(10_000, 100)
        const [, stray] = h.server.ledger.tasks
        if (stray === undefined) return expect.unreachable("two tasks launched")
        // The other call's task shows up as a stray of this row (a launch answered twice).
        const stored = Option.getOrThrow(yield* h.store.get("default", "k"))
        yield* h.store.update(
          new HandleRecord.HandleRecord(
            {
              ...stored,
              strayTasks: [
                HandleRecord.StrayTask.make({ taskId: stray.taskId, receivedAt: 0, cancelSent: false }),
              ],
            },
            true,
          ),
        )
        yield* elapse(120_000, 100)
        // Its polls went on without a write between them (quiet), and the cancel was sent again
        // until it went through.
        expect(stray.cancels.length).toBeGreaterThanOrEqual(1)
        const row = Option.getOrThrow(yield* h.store.get("default", "k"))
        expect(row.strayTasks[0]?.cancelSent).toBe(true)
        expect(row.status).toBe("working")
      }),
    60_000,
  )

  it.scoped("what a restart needs is written before it is acted on: a new interval, input, the end", () =>
    Effect.gen(function* () {
      const sqlite = yield* onSqlite(
        yield* makeHarness({
          tools: [
            longJob({
              durationMs: 30_000,
              pollIntervalMs: [
                { afterMs: 0, pollIntervalMs: 1_000 },
                { afterMs: 10_000, pollIntervalMs: 3_000 },
              ],
              inputSteps: [
                { atMs: 20_000, requests: { name: { method: "elicitation/create", params: {} } } },
              ],
            }),
          ],
        }),
      )
      const h = sqlite.harness
      const seenByHandler: Array<string | undefined> = []
      const client = (yield* startProcess(h, {
        instanceId: "a",
        push: false,
        // When the handler is asked, the row already says the task waits for that input.
        onInputRequired: (request) =>
          Effect.map(h.store.get(request.scope, request.key), (row) => {
            seenByHandler.push(
              Option.match(row, {
                onNone: () => undefined,
                onSome: (r) => `${r.status}:${Object.keys(r.inputRequests ?? {}).join(",")}`,
              }),
            )
            return { name: "x" }
          }),
      })).client
      yield* runFor(client.callTool("fake", "job", {}, { key: "k" }), 1_000)
      // Past the change of interval: the poll that heard it wrote it, and the next is due from it.
      yield* elapse(14_500, 100)
      const [task] = h.server.ledger.tasks
      const lastPoll = task?.polls.at(-1) ?? 0
      const row = Option.getOrThrow(yield* h.store.get("default", "k"))
      expect(row.snapshot?.pollIntervalMs).toBe(3_000)
      const firstAtThree = task?.polls.find((at) => at >= (task?.createdAt ?? 0) + 10_000) ?? 0
      // The polls after it keep the new interval. (The row's next poll in the store is its lease's
      // end by now: the rows a driver keeps for quiet polls are renewed ahead, see quiet.ts.)
      const sinceChange = task?.polls.filter((at) => at >= firstAtThree) ?? []
      expect(sinceChange.length).toBeGreaterThanOrEqual(2)
      expect(sinceChange.slice(1).map((at, i) => at - (sinceChange[i] ?? 0))).toEqual(
        sinceChange.slice(1).map(() => 3_000),
      )
      expect(row.nextPollAt).toBeGreaterThanOrEqual(firstAtThree + 3_000)
      expect(lastPoll).toBeLessThanOrEqual(firstAtThree + 3_000)
      const outcome = yield* runFor(client.settle("k"), 60_000, 100)
      expect(outcome._tag).toBe("Completed")
      expect(seenByHandler).toEqual(["input_required:name"])
      const settled = Option.getOrThrow(yield* h.store.get("default", "k"))
      expect(settled.status).toBe("completed")
      // The count of unwritten polls was written with the end.
      expect(settled.polls).toBe(task?.polls.length)
      expect(earlyOf(h)).toBe(0)
    }),
  )

  describe("a process that dies between unwritten polls", () => {
    const cases = [
      // The default lease outlasts many polls: the row's next poll in the store must still move
      // past each poll before it is sent, or a restart spreads the row from a poll long gone.
      { next: "the same instance id", leaseMs: undefined, intervalMs: 1_000, nth: 3 },
      { next: "another instance", leaseMs: undefined, intervalMs: 1_000, nth: 3 },
      // A lease little longer than the interval: only renewals keep the row between polls, and
      // each must reach one interval past the next poll.
      { next: "the same instance id", leaseMs: 3_000, intervalMs: 2_500, nth: 5 },
      { next: "another instance", leaseMs: 3_000, intervalMs: 2_500, nth: 5 },
    ] as const
    for (const { next, leaseMs, intervalMs, nth } of cases) {
      it.scoped(
        `leaves no task polled early, none lost, when ${next} takes over (lease ${leaseMs ?? "default"})`,
        () =>
          Effect.gen(function* () {
            const sqlite = yield* onSqlite(
              yield* makeHarness({ tools: [longJob({ durationMs: 30_000, pollIntervalMs: intervalMs })] }),
            )
            const h = sqlite.harness
            // Dies right after the answer of its nth poll: nth - 1 polls since the last write.
            const a = yield* startProcess(
              h,
              { instanceId: "a", leaseMs, push: false },
              { at: "fetch", method: "tasks/get", nth, phase: "after-answer" },
            )
            yield* runFor(a.client.callTool("fake", "job", {}, { key: "k" }), 1_000)
            // The next process starts at once: the row's lease is still running, so no boot spread
            // takes it, and the next sweep after the lease runs out polls it at once.
            for (let waited = 0; !a.crashed() && waited < 30_000; waited += 100) yield* elapse(100, 100)
            expect(a.crashed()).toBe(true)
            const b = yield* startProcess(h, {
              instanceId: next === "the same instance id" ? "a" : "b",
              leaseMs,
              push: false,
            })
            // Its sweep takes the row over (no caller waits on it yet).
            yield* elapse(40_000, 100)
            const outcome = yield* runFor(b.client.settle("k"), 120_000, 100)
            expect(outcome._tag).toBe("Completed")
            const [task] = h.server.ledger.tasks
            expect(task?.polls.length).toBeGreaterThan(nth)
            expect(earlyOf(h)).toBe(0)
          }),
      )
    }
  })
})
