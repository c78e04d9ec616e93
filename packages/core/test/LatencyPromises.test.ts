/**
 * How soon the engine acts after what it cannot see coming: a restart under the same instance id,
 * and another instance taking over a dead one's rows. Each promise (docs/concepts.md, "How soon")
 * is proved on every store, with push on and off, with the call awaited and not: the polls that
 * make it cheap (quiet polls write nothing) must not make it slow.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import {
  elapse,
  type Harness,
  makeHarness,
  type Process,
  runFor,
  startProcess,
  withStore,
} from "./support/harness.js"
import * as Stores from "./support/stores.js"

const intervalMs = 1_000
/** The background sweep's tick (its default): a freed row is claimed at the first tick it is due. */
const tickMs = 500
/** The clock moves in steps of this much. */
const stepMs = 100
const leaseMs = 30_000

/** A task that ends `endsAfterMs` after its launch, polled every second. */
const job = (endsAfterMs: number): Config.Tool => ({
  name: "job",
  shape: "task",
  durationMs: endsAfterMs,
  pollIntervalMs: intervalMs,
})

const earlyOf = (h: Harness) => h.server.ledger.tasks.reduce((sum, task) => sum + task.earlyPolls, 0)

/** How long after the task's end a client first heard of it (a poll or a push), in virtual ms. */
const heardAfterEnd = (h: Harness, durationMs: number): number => {
  const [task] = h.server.ledger.tasks
  expect(task?.terminalSeenAt, "the end was never heard").not.toBeNull()
  return (task?.terminalSeenAt ?? 0) - ((task?.createdAt ?? 0) + durationMs)
}

/** The first process: launches the call and, when `awaited`, waits on its outcome; quiet for a while. */
const launch = (h: Harness, instanceId: string, push: boolean, awaited: boolean) =>
  Effect.gen(function* () {
    const a = yield* startProcess(h, { instanceId, push, leaseMs })
    const handle = yield* runFor(a.client.callTool("fake", "job", {}, { key: "k" }), 1_000, stepMs)
    if (awaited) yield* Effect.fork(handle.outcome)
    return a
  })

/** Ten seconds of quiet polls (no write each), then the process dies and lets go of its id. */
const dies = (a: Process) =>
  Effect.gen(function* () {
    yield* elapse(10_000 - stepMs, stepMs)
    a.crash()
    yield* a.freed
  })

/** The next process, and (when `awaited`) the app attaching to the call by its key again. */
const attach = (h: Harness, instanceId: string, push: boolean, awaited: boolean) =>
  Effect.gen(function* () {
    const b: Process = yield* startProcess(h, { instanceId, push, leaseMs })
    if (awaited) yield* Effect.fork(b.client.settle("k"))
    return b
  })

/** The harness on a fresh store of the case's kind, its one tool ending `durationMs` after its launch. */
const world = (kind: Stores.Kind, durationMs: number) =>
  Effect.zipWith(makeHarness({ tools: [job(durationMs)] }), Stores.open(kind), withStore)

const settled = (h: Harness) =>
  Effect.map(h.store.get("default", "k"), (row) => Option.getOrUndefined(row)?.status ?? "missing")

const cases = Stores.kinds.flatMap((kind) =>
  [false, true].flatMap((push) => [false, true].map((awaited) => ({ kind, push, awaited }))),
)
const name = ({ kind, push, awaited }: (typeof cases)[number]) =>
  `${kind}, push ${push ? "on" : "off"}, ${awaited ? "awaited" : "not awaited"}`

type Case = (typeof cases)[number]

/** One test per case: every store, push on and off, awaited and not. */
const everyCase = (title: string, body: (setup: Case) => Effect.Effect<void, unknown, Scope.Scope>) =>
  describe(title, () => {
    for (const setup of cases) it.scoped(name(setup), () => body(setup), 120_000)
  })

/** One launch, and no poll sooner than the interval the server asked for. */
const neverEarly = (h: Harness) => {
  expect(earlyOf(h)).toBe(0)
  expect(h.server.ledger.tasks).toHaveLength(1)
}

describe("how soon", () => {
  everyCase(
    "a restart under the same instance id resumes each row within one interval of its due poll, never early",
    ({ kind, push, awaited }) =>
      Effect.gen(function* () {
        // Ten quiet seconds (no write per poll), the crash, the restart at once, the end 2.7 s later.
        const durationMs = 12_700
        const h = yield* world(kind, durationMs)
        yield* dies(yield* launch(h, "a", push, awaited))
        yield* attach(h, "a", push, awaited)
        yield* elapse(20_000, stepMs)
        expect(yield* settled(h)).toBe("completed")
        // Its next poll is at most one interval after the restart (and at a sweep's tick).
        expect(heardAfterEnd(h, durationMs)).toBeLessThanOrEqual(intervalMs + tickMs + stepMs)
        neverEarly(h)
      }),
  )

  everyCase(
    "another instance takes a dead instance's rows over within one lease, never early",
    ({ kind, push, awaited }) =>
      Effect.gen(function* () {
        // The task ends two seconds after its instance dies.
        const durationMs = 12_000
        const h = yield* world(kind, durationMs)
        // The other instance runs all along.
        const b = yield* startProcess(h, { instanceId: "b", push, leaseMs })
        yield* dies(yield* launch(h, "a", push, awaited))
        const diedAt = yield* Clock.currentTimeMillis
        if (awaited) yield* Effect.fork(b.client.settle("k"))
        yield* elapse(leaseMs + 10_000, stepMs)
        expect(yield* settled(h)).toBe("completed")
        // The dead instance's lease was renewed one lease and one interval ahead at most.
        const [task] = h.server.ledger.tasks
        expect((task?.terminalSeenAt ?? Number.POSITIVE_INFINITY) - diedAt).toBeLessThanOrEqual(
          leaseMs + intervalMs + tickMs + stepMs,
        )
        neverEarly(h)
      }),
  )
})
