import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Telemetry from "@mcp-handles/core/Telemetry"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type * as MetricState from "effect/MetricState"
import { elapse, type Harness, makeHarness, runFor, slowTool, startProcess } from "./support/harness.js"

/**
 * Moves virtual time in steps; after each the fake server looks for changes to push (its own
 * timer runs on real time, which a test does not wait for).
 */
const advance = (h: Harness, ms: number, stepMs = 50) => elapse(ms, stepMs, () => h.server.notify())

/** Runs `effect` while the clock moves and the server pushes; fails past `limitMs` of virtual time. */
const runPushing = <A, E>(h: Harness, effect: Effect.Effect<A, E>, limitMs: number, stepMs = 50) =>
  runFor(effect, limitMs, stepMs, () => h.server.notify())

const requestsOf = (h: Harness, method: string) =>
  h.server.ledger.snapshot().requests.filter((request) => request.method === method)

/** Ends every listen stream the way a cut connection does (no answer to the listen request). */
const dropStreams = (h: Harness) => Effect.sync(() => h.server.dropStreams())

const counted = (metric: Metric.Metric.Counter<number>, reason?: string) =>
  Effect.map(
    Metric.value(
      reason === undefined ? metric : Metric.tagged(metric, Telemetry.attributes.pushReason, reason),
    ),
    (state: MetricState.MetricState.Counter<number>) => state.count,
  )

/** Instances a and b with push on, and a long task (key k) that a has held on push for `ms`. */
const twoOnPush = (ms: number) =>
  Effect.gen(function* () {
    const h = yield* makeHarness({ tools: [slowTool({ durationMs: 600_000 })] })
    const a = yield* startProcess(h, { push: true, instanceId: "a" })
    const b = yield* startProcess(h, { push: true, instanceId: "b" })
    yield* runPushing(h, a.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
    yield* advance(h, ms, 500)
    return { h, a, b }
  })

describe("push (subscriptions/listen)", () => {
  it.effect("a pushed status is written to the row without any tasks/get", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool()] })
      const p = yield* startProcess(h, { background: false, push: true })
      const handle = yield* runPushing(h, p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      const outcome = yield* runPushing(h, handle.outcome, 10_000)
      expect(outcome._tag).toBe("Completed")
      const [task] = h.server.ledger.snapshot().tasks
      expect(task?.polls).toEqual([])
      // One stream for the endpoint, and the row holds the server's final state.
      expect(requestsOf(h, "subscriptions/listen")).toHaveLength(1)
      const stored = yield* p.client.get("k")
      expect(stored.status).toBe("completed")
      expect(stored.snapshot?.lastUpdatedAt).toBeGreaterThan(stored.snapshot?.createdAt ?? 0)
      yield* p.close
    }),
  )

  it.effect("one stream carries every open task of the endpoint, and polling waits for the safety net", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 150_000 })] })
      const p = yield* startProcess(h, { background: false, push: true })
      const handles = yield* runPushing(
        h,
        Effect.forEach(["a", "b", "c"], (key) => p.client.callTool("fake", "slow", {}, { key })),
        1_000,
      )
      yield* advance(h, 125_000, 500)
      const tasks = h.server.ledger.snapshot().tasks
      expect(tasks).toHaveLength(3)
      // At most one safety-net poll per task per minute (polling would have made about 125).
      for (const task of tasks) expect(task.polls.length).toBeLessThanOrEqual(2)
      // Opened again as tasks came along, never one per task.
      expect(requestsOf(h, "subscriptions/listen").length).toBeLessThanOrEqual(3)
      const outcomes = yield* runPushing(
        h,
        Effect.forEach(handles, (handle) => handle.outcome),
        60_000,
        500,
      )
      expect(outcomes.map((o) => o._tag)).toEqual(["Completed", "Completed", "Completed"])
      yield* p.close
    }),
  )

  it.effect(
    "the safety net keeps a pace of safetyNetPerSecond over every covered task: each task's stretches",
    () =>
      Effect.gen(function* () {
        /** Safety-net polls of four covered tasks over 200 s, past their first poll. */
        const safetyPolls = (safetyNetPerSecond: number) =>
          Effect.gen(function* () {
            const h = yield* makeHarness({ tools: [slowTool({ durationMs: 600_000 })] })
            const p = yield* startProcess(h, {
              background: false,
              push: { safetyNetMs: 10_000, safetyNetPerSecond },
            })
            yield* runPushing(
              h,
              Effect.forEach(["a", "b", "c", "d"], (key) => p.client.callTool("fake", "slow", {}, { key })),
              1_000,
            )
            yield* advance(h, 5_000, 500)
            const before = h.server.ledger.snapshot().tasks.map((task) => task.polls.length)
            yield* advance(h, 200_000, 500)
            const tasks = h.server.ledger.snapshot().tasks
            yield* p.close
            const times = tasks.flatMap((task, i) => task.polls.slice(before[i] ?? 0)).sort((x, y) => x - y)
            return {
              perTask: tasks.map((task, i) => task.polls.length - (before[i] ?? 0)),
              closest: Math.min(...times.slice(1).map((t, i) => t - (times[i] ?? 0))),
            }
          })
        // Four tasks launched together, at 0.1 a second: each every 40 s rather than every 10 s,
        // and never two within the pace's 10 s of each other (clock steps of 500 ms aside).
        const paced = yield* safetyPolls(0.1)
        expect(paced.perTask).toHaveLength(4)
        for (const n of paced.perTask) {
          expect(n).toBeGreaterThanOrEqual(4)
          expect(n).toBeLessThanOrEqual(6)
        }
        expect(paced.closest).toBeGreaterThanOrEqual(9_500)
        // Without a pace: every 10 s each, the four together.
        const unpaced = yield* safetyPolls(Number.POSITIVE_INFINITY)
        for (const n of unpaced.perTask) expect(n).toBeGreaterThanOrEqual(18)
        expect(unpaced.closest).toBeLessThan(1_000)
      }),
  )

  it.effect(
    "the safety net's pace counts the tasks still covered: a burst that ended leaves no backlog",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [slowTool({ name: "short", durationMs: 15_000 }), slowTool({ durationMs: 600_000 })],
        })
        // One safety-net poll a second over every covered task: 40 at once stretch to 40 s.
        const p = yield* startProcess(h, {
          background: false,
          push: { safetyNetMs: 10_000, safetyNetPerSecond: 1 },
        })
        yield* runPushing(
          h,
          Effect.forEach(
            Array.from({ length: 40 }, (_, i) => `burst${i}`),
            (key) => p.client.callTool("fake", "short", {}, { key }),
          ),
          1_000,
        )
        // The burst's tasks end (pushed), and with them their slots in the pace.
        yield* advance(h, 20_000, 500)
        expect(h.server.ledger.snapshot().tasks.filter((task) => task.terminalSeenAt !== null)).toHaveLength(
          40,
        )

        const launchedAt = yield* h.store.now
        yield* runPushing(h, p.client.callTool("fake", "slow", {}, { key: "late" }), 1_000)
        yield* advance(h, 25_000, 500)
        const late = h.server.ledger.snapshot().tasks.find((task) => task.idempotencyKey === "late")
        // Seen by its first poll, then polled once per safety net (10 s): one task covered pays
        // no pace, not the 40 s the ended burst took up.
        const safetyNet = (late?.polls ?? []).filter((at) => at >= launchedAt + 5_000)
        expect(safetyNet.length).toBeGreaterThanOrEqual(1)
        expect((safetyNet[0] ?? Number.POSITIVE_INFINITY) - launchedAt).toBeLessThanOrEqual(15_000)
        yield* p.close
      }),
  )

  it.effect(
    "tasks spread over streams of tasksPerStream: a new task opens again only a stream with room, and an emptied stream closes",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 600_000 })] })
        // What each listen asked for.
        const listens: Array<ReadonlyArray<string>> = []
        const handler: typeof h.server.handler = async (request, faults) => {
          const body = (await request.clone().json()) as {
            method?: string
            params?: { notifications?: { taskIds?: Array<string> } }
          }
          if (body.method === "subscriptions/listen") listens.push(body.params?.notifications?.taskIds ?? [])
          return h.server.handler(request, faults)
        }
        const watching: Harness = { ...h, server: { ...h.server, handler } }
        const p = yield* startProcess(watching, { background: false, push: { tasksPerStream: 2 } })
        const keys = ["a", "b", "c", "d", "e"]
        for (const key of keys) {
          yield* runPushing(h, p.client.callTool("fake", "slow", {}, { key }), 1_000)
          yield* advance(h, 2_000, 100)
        }
        const taskIdOf = new Map<string, string>()
        for (const key of keys) taskIdOf.set(key, (yield* p.client.get(key)).taskId ?? "")
        const [a, b, c, d, e] = keys.map((key) => taskIdOf.get(key) ?? "")
        // No stream asked for more than two tasks; the first two tasks' stream was opened for
        // them alone (twice: a, then a and b), never again for the three that came after.
        for (const asked of listens) expect(asked.length).toBeLessThanOrEqual(2)
        expect(listens.filter((asked) => asked.includes(a as string))).toEqual([[a], [a, b]])
        expect(listens.filter((asked) => asked.includes(e as string))).toEqual([[e]])
        expect(listens.filter((asked) => asked.includes(c as string)).at(-1)).toEqual([c, d])
        // Every task is covered: polled about once per safety net, not at its interval.
        const before = h.server.ledger.snapshot().tasks.map((task) => task.polls.length)
        yield* advance(h, 30_000, 500)
        h.server.ledger.snapshot().tasks.forEach((task, i) => {
          expect(task.polls.length - (before[i] ?? 0)).toBeLessThanOrEqual(1)
        })
        // a and b end: their stream has nothing left to carry and is closed; the others stay.
        expect(h.server.openStreams()).toBe(3)
        yield* runPushing(h, Effect.all([p.client.cancel("a"), p.client.cancel("b")]), 5_000)
        yield* advance(h, 5_000, 100)
        expect(h.server.openStreams()).toBe(2)
        const listensBefore = listens.length
        yield* advance(h, 30_000, 500)
        expect(listens.length).toBe(listensBefore)
        yield* p.close
      }),
  )

  it.effect("a dropped stream: the task is polled at its interval until the listener is back", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 30_000 })] })
      const p = yield* startProcess(h, {
        background: false,
        push: { backoffMs: 5_000, maxBackoffMs: 5_000 },
      })
      const handle = yield* runPushing(h, p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      yield* advance(h, 3_000)
      const [before] = h.server.ledger.snapshot().tasks
      expect(before?.polls).toEqual([])
      expect(requestsOf(h, "subscriptions/listen")).toHaveLength(1)

      yield* dropStreams(h)
      // The listener waits out its backoff (5 s, jittered); meanwhile the task is polled.
      yield* advance(h, 3_000)
      const [during] = h.server.ledger.snapshot().tasks
      expect(during?.polls.length).toBeGreaterThanOrEqual(1)
      expect(requestsOf(h, "subscriptions/listen")).toHaveLength(1)

      yield* advance(h, 8_000)
      expect(requestsOf(h, "subscriptions/listen")).toHaveLength(2)
      // Back on push: polling drops to the safety net again.
      const polledBack = h.server.ledger.snapshot().tasks[0]?.polls.length ?? 0
      yield* advance(h, 10_000)
      expect(h.server.ledger.snapshot().tasks[0]?.polls.length).toBe(polledBack)

      const outcome = yield* runPushing(h, handle.outcome, 30_000)
      expect(outcome._tag).toBe("Completed")
      yield* p.close
    }),
  )

  it.effect("a pushed status is fenced off when another instance holds the row's lease", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool()] })
      const p = yield* startProcess(h, { background: false, push: true, instanceId: "a" })
      yield* runPushing(h, p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      yield* advance(h, 2_000)
      expect(requestsOf(h, "subscriptions/listen")).toHaveLength(1)

      // Instance b takes the row over (a's lease ran out while it was paused, say).
      const row = yield* p.client.get("k")
      const now = yield* h.store.now
      yield* h.store.update(
        new HandleRecord.HandleRecord({ ...row, leaseOwner: "b", leaseExpiresAt: now + 600_000 }),
      )
      const taken = yield* p.client.get("k")

      // The task completes; a's stream hears it, and a must not write it.
      yield* advance(h, 5_000)
      const after = yield* p.client.get("k")
      expect(after.status).toBe("working")
      expect(after.leaseOwner).toBe("b")
      expect(after.version).toBe(taken.version)
      expect(h.server.ledger.snapshot().tasks[0]?.polls).toEqual([])
      yield* p.close
    }),
  )

  it.effect("an input question pushed to the client is answered once, and the call completes", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [
          slowTool({
            durationMs: 20_000,
            inputSteps: [
              {
                atMs: 2_000,
                requests: { q: { method: "elicitation/create", params: { message: "name?" } } },
              },
            ],
          }),
        ],
      })
      let asked = 0
      const p = yield* startProcess(h, {
        background: false,
        push: true,
        onInputRequired: () =>
          Effect.sync(() => {
            asked++
            return { action: "accept", content: { name: "Ada" } }
          }),
      })
      const handle = yield* runPushing(h, p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      const outcome = yield* runPushing(h, handle.outcome, 40_000)
      expect(outcome._tag).toBe("Completed")
      expect(asked).toBe(1)
      const [task] = h.server.ledger.snapshot().tasks
      expect(task?.updates).toHaveLength(1)
      // Polled around the question only (the driver answers after a poll of its own), not throughout.
      expect(task?.polls.length).toBeLessThanOrEqual(4)
      yield* p.close
    }),
  )

  it.effect("a server without subscriptions/listen: asked once, then the tasks are polled as usual", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool()] })
      let listens = 0
      const withoutListen: Harness = {
        ...h,
        server: {
          ...h.server,
          handler: async (request) => {
            if (request.headers.get("mcp-method") !== "subscriptions/listen") return h.server.handler(request)
            listens++
            const body = (await request.json()) as { id: number }
            return Response.json(
              { jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "Method not found" } },
              { status: 404 },
            )
          },
        },
      }
      const p = yield* startProcess(withoutListen, { background: false, push: true })
      const handles = yield* runPushing(
        h,
        Effect.forEach(["a", "b"], (key) => p.client.callTool("fake", "slow", {}, { key })),
        1_000,
      )
      const outcomes = yield* runPushing(
        h,
        Effect.forEach(handles, (handle) => handle.outcome),
        15_000,
      )
      expect(outcomes.map((o) => o._tag)).toEqual(["Completed", "Completed"])
      expect(listens).toBe(1)
      for (const task of h.server.ledger.snapshot().tasks) expect(task.polls.length).toBeGreaterThanOrEqual(5)
      yield* p.close
    }),
  )

  it.effect("after a restart, the rows the sweep resumes are listened for too", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 40_000 })] })
      const first = yield* startProcess(h, { background: false })
      yield* runPushing(h, first.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      first.crash()
      const polledBefore = h.server.ledger.snapshot().tasks[0]?.polls.length ?? 0
      const second = yield* startProcess(h, { push: true })
      // Nobody waits on the call: the sweep alone takes the row up.
      yield* advance(h, 45_000, 100)
      const row = yield* second.client.get("k")
      expect(row.status).toBe("completed")
      // One poll to take the row up again (the sweep's driver polls when it is due), then push.
      const polls = (h.server.ledger.snapshot().tasks[0]?.polls.length ?? 0) - polledBefore
      expect(polls).toBeLessThanOrEqual(3)
      expect(requestsOf(h, "subscriptions/listen").length).toBeGreaterThanOrEqual(1)
      yield* second.close
    }),
  )

  it.effect(
    "in a fleet, the instance holding the row's lease listens for it, and the next one after it dies",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools: [slowTool({ durationMs: 200_000 })] })
        const a = yield* startProcess(h, { push: true, instanceId: "a", leaseMs: 10_000 })
        const b = yield* startProcess(h, { push: true, instanceId: "b", leaseMs: 10_000 })
        yield* runPushing(h, a.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
        yield* advance(h, 5_000, 100)
        // b holds nothing: it opens no stream.
        expect(requestsOf(h, "subscriptions/listen")).toHaveLength(1)
        expect((yield* b.client.get("k")).leaseOwner).toBe("a#driver")

        a.crash()
        // a's lease (10 s, renewed while its stream covered the task) runs out; b's sweep takes
        // the row and listens.
        yield* advance(h, 15_000, 500)
        const row = yield* b.client.get("k")
        expect(row.leaseOwner).toBe("b#driver")
        expect(requestsOf(h, "subscriptions/listen")).toHaveLength(2)
        const polls = h.server.ledger.snapshot().tasks[0]?.polls.length ?? 0
        expect(polls).toBeLessThanOrEqual(2)

        yield* advance(h, 185_000, 500)
        expect((yield* b.client.get("k")).status).toBe("completed")
        yield* b.close
      }),
  )

  it.effect("a holder that dies is taken over within about one lease, not after the safety net", () =>
    Effect.gen(function* () {
      // Long enough on push for its lease to have been renewed a few times.
      const { h, a, b } = yield* twoOnPush(70_000)
      expect((yield* b.client.get("k")).leaseOwner).toBe("a#driver")
      const [before] = h.server.ledger.snapshot().tasks
      const polledBefore = before?.polls.length ?? 0

      a.crash()
      const crashedAt = yield* h.store.now
      // The default lease is 30 s: b takes the row and polls it within that and a sweep or two.
      yield* advance(h, 40_000, 500)
      const [task] = h.server.ledger.snapshot().tasks
      const after = (task?.polls ?? []).slice(polledBefore)
      expect(after.length).toBeGreaterThanOrEqual(1)
      expect((after[0] ?? Number.POSITIVE_INFINITY) - crashedAt).toBeLessThanOrEqual(40_000)
      expect((yield* b.client.get("k")).leaseOwner).toBe("b#driver")
      yield* b.close
    }),
  )

  it.effect("a cancel recorded by another instance is sent by the holder within about one lease", () =>
    Effect.gen(function* () {
      const { h, a, b } = yield* twoOnPush(5_000)
      expect(requestsOf(h, "subscriptions/listen")).toHaveLength(1)

      // b records the intent; a holds the row and its stream covers the task.
      const cancelledAt = yield* h.store.now
      yield* runPushing(h, b.client.cancel("k"), 1_000)
      expect((yield* b.client.get("k")).leaseOwner).toBe("a#driver")
      yield* advance(h, 35_000, 500)
      const [task] = h.server.ledger.snapshot().tasks
      expect(task?.cancels.length).toBe(1)
      expect((task?.cancels[0] ?? Number.POSITIVE_INFINITY) - cancelledAt).toBeLessThanOrEqual(35_000)
      expect(requestsOf(h, "tasks/cancel").length).toBeGreaterThanOrEqual(1)
      yield* a.close
      yield* b.close
    }),
  )

  it.effect("metrics count the pushes received and the streams opened, dropped and opened again", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 20_000 })] })
      const before = {
        pushes: yield* counted(Telemetry.pushes),
        first: yield* counted(Telemetry.pushStreams, "first"),
        reconnect: yield* counted(Telemetry.pushStreams, "reconnect"),
        dropped: yield* counted(Telemetry.pushStreamEnds, "dropped"),
      }
      const p = yield* startProcess(h, { background: false, push: { backoffMs: 1_000, maxBackoffMs: 1_000 } })
      const handle = yield* runPushing(h, p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      yield* advance(h, 3_000)
      yield* dropStreams(h)
      yield* advance(h, 3_000)
      expect((yield* runPushing(h, handle.outcome, 30_000))._tag).toBe("Completed")
      // The first stream, and the one after the drop.
      expect((yield* counted(Telemetry.pushStreams, "first")) - before.first).toBe(1)
      expect((yield* counted(Telemetry.pushStreams, "reconnect")) - before.reconnect).toBe(1)
      expect((yield* counted(Telemetry.pushStreamEnds, "dropped")) - before.dropped).toBe(1)
      // Each stream says the task's state when it opens, and the last one says it completed.
      expect((yield* counted(Telemetry.pushes)) - before.pushes).toBeGreaterThanOrEqual(3)
      yield* p.close
    }),
  )

  it.effect("a half-open stream (nothing heard, not even a keep-alive) is opened again", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 120_000 })] })
      const silentBefore = yield* counted(Telemetry.pushStreamEnds, "silent")
      const p = yield* startProcess(h, { background: false, push: { idleMs: 40_000 } })
      const handle = yield* runPushing(h, p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      // A quiet stream lives on the server's keep-alives (every 15 s): it is not opened again.
      yield* advance(h, 60_000, 500)
      expect(requestsOf(h, "subscriptions/listen")).toHaveLength(1)

      // The connection goes half-open: the client hears nothing more, and nothing tells it so.
      h.server.muteStreams()
      yield* advance(h, 45_000, 500)
      expect(requestsOf(h, "subscriptions/listen")).toHaveLength(2)
      expect((yield* counted(Telemetry.pushStreamEnds, "silent")) - silentBefore).toBe(1)
      // The new stream tells the client when the task completes (no poll needed for it).
      const polls = h.server.ledger.snapshot().tasks[0]?.polls.length ?? 0
      const outcome = yield* runPushing(h, handle.outcome, 20_000, 500)
      expect(outcome._tag).toBe("Completed")
      expect(h.server.ledger.snapshot().tasks[0]?.polls.length).toBe(polls)
      yield* p.close
    }),
  )

  it.effect("a server busy when the listener starts is asked again, and push starts then", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools: [slowTool({ durationMs: 30_000 })] })
      let refused = 0
      const busyAtFirst: Harness = {
        ...h,
        server: {
          ...h.server,
          handler: async (request) => {
            if (request.headers.get("mcp-method") === "server/discover" && refused < 2) {
              refused++
              return new Response("busy", { status: 503 })
            }
            return h.server.handler(request)
          },
        },
      }
      const p = yield* startProcess(busyAtFirst, {
        background: false,
        push: { backoffMs: 2_000, maxBackoffMs: 2_000 },
      })
      const handle = yield* runPushing(h, p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      yield* advance(h, 10_000)
      expect(refused).toBe(2)
      expect(requestsOf(h, "subscriptions/listen")).toHaveLength(1)
      const polled = h.server.ledger.snapshot().tasks[0]?.polls.length ?? 0
      expect(polled).toBeGreaterThanOrEqual(1)
      yield* advance(h, 15_000)
      expect(h.server.ledger.snapshot().tasks[0]?.polls.length).toBe(polled)
      const outcome = yield* runPushing(h, handle.outcome, 10_000)
      expect(outcome._tag).toBe("Completed")
      yield* p.close
    }),
  )
})
