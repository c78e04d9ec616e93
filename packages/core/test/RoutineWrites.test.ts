/**
 * Which writes the engine marks routine (`HandleStore.UpdateOptions`): a store may hold those a
 * moment to share a commit, so only a poll that found a working task still working (with
 * something new to write, such as its interval) may be one.
 * A write anything waits on (the task id, an outcome, an answer, a cancel) must never be.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Outcome from "@mcp-handles/core/Outcome"
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { isRoutine } from "../src/internal/engine/leases.js"
import { elapse, makeHarness, runFor, startProcess, withStore } from "./support/harness.js"
import { event, stepsOf } from "./support/transitions.js"

interface Write {
  readonly before: HandleRecord.Status | undefined
  readonly after: HandleRecord.Status
  readonly pollsBefore: number
  readonly pollsAfter: number
  readonly routine: boolean
}

describe("routine writes", () => {
  it.effect("only a poll that finds a working task still working is routine", () =>
    Effect.gen(function* () {
      // The interval changes at every poll: a poll that finds nothing new is not written at all
      // (QuietPolls.test.ts), so each poll here brings the row something to write.
      const h = yield* makeHarness({
        tools: [
          {
            name: "job",
            shape: "task",
            durationMs: 6_000,
            pollIntervalMs: [
              { afterMs: 0, pollIntervalMs: 1_000 },
              { afterMs: 500, pollIntervalMs: 1_050 },
              { afterMs: 1_500, pollIntervalMs: 1_100 },
              { afterMs: 2_600, pollIntervalMs: 1_150 },
              { afterMs: 3_700, pollIntervalMs: 1_200 },
            ],
          },
        ],
      })
      const writes: Array<Write> = []
      const recording = withStore(h, {
        ...h.store,
        update: (record, options) =>
          Effect.flatMap(h.store.get(record.scope, record.key), (stored) =>
            Effect.tap(h.store.update(record, options), () =>
              Effect.sync(() => {
                const before = stored._tag === "Some" ? stored.value : undefined
                writes.push({
                  before: before?.status,
                  after: record.status,
                  pollsBefore: before?.polls ?? 0,
                  pollsAfter: record.polls,
                  routine: options?.routine === true,
                })
              }),
            ),
          ),
      })
      // Polls are what is weighed: no stream stands in for them.
      const client = (yield* startProcess(recording, { instanceId: "a", push: false })).client
      yield* runFor(client.callTool("fake", "job", {}, { key: "k" }), 1_000)
      yield* elapse(3_500)
      yield* runFor(client.cancel("k"), 1_000)
      const outcome = yield* runFor(client.settle("k"), 10_000)
      expect(outcome._tag).toBe("Cancelled")

      const routine = writes.filter((write) => write.routine)
      expect(routine.length, "the polls while the task ran were routine").toBeGreaterThanOrEqual(2)
      for (const write of writes) {
        const pollStillWorking =
          write.before === "working" && write.after === "working" && write.pollsAfter > write.pollsBefore
        expect(write.routine, JSON.stringify(write)).toBe(pollStillWorking)
      }
      expect(writes.some((write) => write.after === "cancelled" && !write.routine)).toBe(true)
    }),
  )

  it("for every event in every run, a routine write changes nothing anyone waits on", () =>
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        for (const { before, after, cause } of stepsOf(events)) {
          if (!isRoutine(cause, before, after)) continue
          const step = `${cause._tag}: ${before.status} -> ${after.status}`
          expect([before.status, after.status], step).toEqual(["working", "working"])
          expect(Outcome.fromRecord(after), step).toBeUndefined()
          expect(after.taskId, step).toBe(before.taskId)
          expect(after.cancel, step).toEqual(before.cancel)
          expect(after.answers, step).toEqual(before.answers)
          expect(after.inputRequests, step).toEqual(before.inputRequests)
          expect(after.strayTasks, step).toEqual(before.strayTasks)
          expect(after.history, step).toEqual(before.history)
          expect(after.launches, step).toBe(before.launches)
        }
      }),
      { numRuns: 500 },
    ))

  it("the generated runs do reach routine writes (the property above is not vacuous)", () => {
    const samples = fc.sample(fc.array(event, { maxLength: 40 }), { numRuns: 1_000, seed: 7 })
    const routine = samples
      .flatMap(stepsOf)
      .filter(({ before, after, cause }) => isRoutine(cause, before, after))
    expect(routine.length).toBeGreaterThan(0)
  })
})
