/**
 * An intent recorded by another instance reaches the server within one reconciler tick, whoever
 * holds the row: a cancel (`tasks/cancel`) and an input answer (`tasks/update`), on the memory,
 * SQLite and PostgreSQL stores, with push on and off, and with the call awaited on the holder or
 * not. The task's interval (5 s) is far longer than a tick, so waiting for the holder's next poll
 * (or its next lease renewal, every 10 s) is not fast enough.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { confirmForm } from "./support/forms.js"
import { elapse, flush, makeHarness, runFor, startProcess, withStore } from "./support/harness.js"
import * as Stores from "./support/stores.js"

type Kind = Stores.Kind

/** The reconciler's default tick (TaskClient `background.tickMs`). */
const tickMs = 500

const world = (kind: Kind, push: boolean, tool: Config.Tool) =>
  Effect.gen(function* () {
    const h = withStore(yield* makeHarness({ tools: [tool] }), yield* Stores.open(kind))
    const a = yield* startProcess(h, { instanceId: "a", push })
    const b = yield* startProcess(h, { instanceId: "b", push })
    return {
      h,
      a,
      b,
      elapse,
      runFor,
      settle: flush,
      start: (id: string) => startProcess(h, { instanceId: id, push }),
    }
  })

const kinds = Stores.kinds

describe("an intent recorded by another instance reaches the server within one tick", {
  timeout: 120_000,
}, () => {
  for (const kind of kinds)
    for (const push of [true, false])
      for (const awaited of [true, false]) {
        const name = `${kind}, push ${push ? "on" : "off"}, ${awaited ? "awaited" : "not awaited"} on the holder`

        it.scoped(`a cancel: ${name}`, () =>
          Effect.gen(function* () {
            const w = yield* world(kind, push, {
              name: "slow",
              shape: "task",
              durationMs: 10_000,
              pollIntervalMs: 5_000,
            })
            const started = yield* w.h.store.now
            const handle = yield* w.runFor(w.a.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
            const outcome = awaited ? yield* Effect.fork(handle.outcome) : undefined
            yield* w.elapse(started + 1_200 - (yield* w.h.store.now))
            expect((yield* w.b.client.get("k")).leaseOwner).toBe("a#driver")

            const cancelledAt = yield* w.h.store.now
            yield* w.runFor(w.b.client.cancel("k"), 1_000)
            yield* w.elapse(2 * tickMs)
            const [task] = w.h.server.ledger.snapshot().tasks
            expect(task?.cancels.length).toBeGreaterThanOrEqual(1)
            expect((task?.cancels[0] ?? Number.POSITIVE_INFINITY) - cancelledAt).toBeLessThanOrEqual(
              2 * tickMs,
            )
            if (outcome !== undefined)
              expect((yield* w.runFor(Fiber.join(outcome), 10_000))._tag).toBe("Cancelled")
            yield* w.a.close
            yield* w.b.close
          }),
        )

        if (!push && !awaited)
          it.scoped(`a cancel of a row another instance's sweep took over: ${kind}, push off`, () =>
            Effect.gen(function* () {
              const w = yield* world(kind, push, {
                name: "slow",
                shape: "task",
                durationMs: 120_000,
                pollIntervalMs: 5_000,
              })
              yield* w.runFor(w.a.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
              yield* w.elapse(2_000)
              // a hands the row off; at its next poll b's sweep takes it (no driver: nothing on b
              // awaits it, and without push the sweep acts on the row itself).
              yield* w.a.close
              yield* w.elapse(12_000, 250)
              expect((yield* w.b.client.get("k")).leaseOwner).toBe("b")
              yield* w.elapse(1_200)

              const c = yield* w.start("c")
              const cancelledAt = yield* w.h.store.now
              yield* w.runFor(c.client.cancel("k"), 1_000)
              yield* w.elapse(2 * tickMs)
              const [task] = w.h.server.ledger.snapshot().tasks
              expect(task?.cancels.length).toBeGreaterThanOrEqual(1)
              expect((task?.cancels[0] ?? Number.POSITIVE_INFINITY) - cancelledAt).toBeLessThanOrEqual(
                2 * tickMs,
              )
              yield* w.b.close
              yield* c.close
            }),
          )

        it.scoped(`an input answer: ${name}`, () =>
          Effect.gen(function* () {
            const w = yield* world(kind, push, {
              name: "delete",
              shape: "task",
              durationMs: 20_000,
              pollIntervalMs: 5_000,
              inputSteps: [{ atMs: 0, requests: { confirm: confirmForm } }],
              outcome: { kind: "result", text: "deleted: {{inputs.confirm.content.confirm}}" },
            })
            yield* w.runFor(w.a.client.callTool("fake", "delete", {}, { key: "d" }), 1_000)
            const outcome = awaited
              ? yield* Effect.fork(w.a.client.settle("d", undefined, { waitForInput: true }))
              : undefined
            // The holder has polled the question itself, and its next poll is a while off.
            for (let waited = 0; waited < 20_000; waited += 50) {
              const [asked] = w.h.server.ledger.snapshot().tasks
              if ((yield* w.b.client.get("d")).status === "input_required" && (asked?.polls.length ?? 0) > 0)
                break
              yield* w.elapse(50)
            }
            yield* w.elapse(1_200)
            expect((yield* w.b.client.get("d")).leaseOwner).toBe("a#driver")

            const answeredAt = yield* w.h.store.now
            yield* w.b.client.answer("d", "confirm", { action: "accept", content: { confirm: true } })
            yield* w.elapse(2 * tickMs)
            const [task] = w.h.server.ledger.snapshot().tasks
            const accepted = (task?.updates ?? []).filter((update) => update.accepted.includes("confirm"))
            expect(accepted.length).toBe(1)
            expect((accepted[0]?.at ?? Number.POSITIVE_INFINITY) - answeredAt).toBeLessThanOrEqual(2 * tickMs)
            // The answer is sent once, and the poll discipline holds around it.
            expect(task?.earlyPolls).toBe(0)
            if (outcome !== undefined)
              expect((yield* w.runFor(Fiber.join(outcome), 30_000))._tag).toBe("Completed")
            yield* w.a.close
            yield* w.b.close
          }),
        )
      }
})
