/**
 * Outcome delivery (issue 15, item 1), through the client: instances sharing one store, one of
 * them killed (its in-process state dropped, only the store kept). The same scenario with real
 * processes on a SQLite file is packages/cli/test/outcomes-crash.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as TaskClient from "@mcp-handles/core/TaskClient"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { elapse, makeHarness, runFor, startProcess } from "./support/harness.js"

const tools = [
  { name: "slow", shape: "task" as const, durationMs: 5_000, pollIntervalMs: 500 },
  { name: "quick", shape: "direct" as const, outcome: { kind: "result" as const, text: "ok" } },
]

const HOUR = 3_600_000
const DAY = 24 * HOUR

const feedOptions: TaskClient.OutcomesOptions = {
  consumer: "app",
  pollInterval: "100 millis",
  redeliverAfter: "10 seconds",
}

/** Pulls one outcome at a time from a client's feed (in the test's scope), each within `limitMs`. */
const openFeed = (client: TaskClient.TaskClient, options = feedOptions, limitMs = 30_000) =>
  Effect.gen(function* () {
    const pull = yield* Stream.toPull(Stream.rechunk(client.outcomes(options), 1))
    return runFor(
      Effect.map(pull, (chunk) => Option.getOrThrow(Chunk.head(chunk))),
      limitMs,
    )
  })

describe("outcomes", () => {
  it.scoped(
    "a call settled by another instance while the caller was down reaches the caller once it acknowledges; an unacknowledged one comes again after a crash",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools })
        // Instance A calls and is killed while the task runs.
        const a = yield* startProcess(h, { instanceId: "a", leaseMs: 1_000 })
        yield* runFor(a.client.callTool("fake", "slow", {}, { key: "k1" }), 1_000)
        a.crash()
        // Instance B finishes the call.
        const b = yield* startProcess(h, { instanceId: "b", leaseMs: 1_000 })
        const settled = yield* runFor(b.client.settle("k1"), 60_000)
        expect(settled._tag).toBe("Completed")

        // A restarts and reads its outcomes.
        const a2 = yield* startProcess(h, { instanceId: "a", leaseMs: 1_000 })
        const next = yield* openFeed(a2.client)
        const first = yield* next
        expect([first.key, first.outcome._tag, first.deliveries]).toEqual(["k1", "Completed", 1])
        expect(yield* first.ack).toBe(true)
        // The next outcome is a later call's: k1 is not delivered again.
        yield* runFor(a2.client.callTool("fake", "quick", {}, { key: "k2" }), 1_000)
        const second = yield* next
        expect([second.key, second.deliveries]).toEqual(["k2", 1])
        // Not acknowledged, and A dies.
        a2.crash()

        const a3 = yield* startProcess(h, { instanceId: "a", leaseMs: 1_000 })
        // Delivered again at once (the restarted member takes back its claims, well before
        // redeliverAfter), and only k2.
        const again = yield* yield* openFeed(a3.client, feedOptions, 2_000)
        expect([again.key, again.deliveries]).toEqual(["k2", 2])
        expect(yield* a3.client.ack("app", "k2")).toBe(true)
        // Acknowledged: nothing more for this consumer, while another consumer gets both.
        const audit = yield* openFeed(a3.client, { ...feedOptions, consumer: "audit" })
        expect([(yield* audit).key, (yield* audit).key]).toEqual(["k1", "k2"])
        expect(h.server.ledger.snapshot().launches.map((l) => l.idempotencyKey)).toEqual(["k1", "k2"])
      }),
  )

  it.scoped(
    "an outcome that settled while its consumer was down outlives gc's retention, and reaches the consumer when it is back (issue 28, finding 7)",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools })
        // The consumer has read its outcomes once: the store knows it from then on.
        const a = yield* startProcess(h, { instanceId: "a" })
        yield* runFor(a.client.callTool("fake", "quick", {}, { key: "k1" }), 1_000)
        const first = yield* Effect.scoped(Effect.flatten(openFeed(a.client)))
        expect(yield* first.ack).toBe(true)
        // Down (no process runs while the days pass: their timers would tick through them).
        yield* a.close
        // Meanwhile another instance's call settles; eight days later an instance sweeps with a
        // retention of a week.
        const b = yield* startProcess(h, { instanceId: "b" })
        yield* runFor(b.client.callTool("fake", "quick", {}, { key: "k2" }), 1_000)
        yield* b.close
        yield* elapse(8 * DAY, HOUR)
        const sweeper = yield* startProcess(h, { instanceId: "b" })
        const swept = yield* sweeper.client.gc("7d")
        // Back: the outcome is still there for it.
        const a2 = yield* startProcess(h, { instanceId: "a" })
        const back = yield* yield* openFeed(a2.client)
        expect([back.key, back.outcome._tag, back.deliveries]).toEqual(["k2", "Completed", 1])
        // The sweep took only the acknowledged call and said what it kept.
        expect(swept).toEqual({ deleted: 1, kept: 1, unacknowledged: [] })
        expect(yield* back.ack).toBe(true)
        expect(yield* sweeper.client.gc("7d")).toEqual({ deleted: 1, kept: 0, unacknowledged: [] })
      }),
  )

  it.scoped("past consumerRetention, gc takes an unacknowledged outcome and names the consumer", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { instanceId: "a" })
      yield* runFor(p.client.callTool("fake", "quick", {}, { key: "k" }), 1_000)
      // Handed out, never acknowledged.
      expect((yield* Effect.scoped(Effect.flatten(openFeed(p.client)))).key).toBe("k")
      yield* p.close
      const sweep = Effect.flatMap(startProcess(h, { instanceId: "a" }), (sweeper) =>
        Effect.zipLeft(sweeper.client.gc("7d", { consumerRetention: "30d" }), sweeper.close),
      )
      yield* elapse(20 * DAY, HOUR)
      expect(yield* sweep).toEqual({ deleted: 0, kept: 1, unacknowledged: [] })
      yield* elapse(11 * DAY, HOUR)
      expect(yield* sweep).toEqual({
        deleted: 1,
        kept: 0,
        unacknowledged: [{ consumer: "app", scope: "default", outcomes: 1 }],
      })
    }),
  )

  it.scoped("an outcome left unacknowledged is delivered again once redeliverAfter passes", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { instanceId: "a" })
      yield* runFor(p.client.callTool("fake", "quick", {}, { key: "k" }), 1_000)
      const next = yield* openFeed(p.client, { ...feedOptions, redeliverAfter: "2 seconds" })
      expect((yield* next).deliveries).toBe(1)
      const again = yield* next
      expect([again.key, again.deliveries]).toEqual(["k", 2])
    }),
  )

  it.scoped("onSettled acknowledges after the handler succeeds; a failed handler gets it again", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { instanceId: "a" })
      yield* runFor(p.client.callTool("fake", "quick", {}, { key: "k" }), 1_000)
      const seen: Array<number> = []
      yield* Effect.forkScoped(
        p.client.onSettled({ ...feedOptions, redeliverAfter: "2 seconds" }, (delivered) =>
          Effect.suspend(() => {
            seen.push(delivered.deliveries)
            return seen.length === 1 ? Effect.fail("not yet") : Effect.void
          }),
        ),
      )
      yield* elapse(10_000)
      expect(seen).toEqual([1, 2])
    }),
  )
})
