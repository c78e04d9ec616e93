/**
 * A quiet row is polled from what its driver kept, without its record (drive.ts, `glance`): the
 * kept entry must decide every answer as the record's own transition would. For any row a quiet
 * poll can leave behind and any answer, `quietAnswer` gives the next poll exactly when the
 * poll's transition of the record is quiet (`isQuietStep`, the TTL backstop before it), and the
 * same next poll.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Polling from "@mcp-handles/core/Polling"
import * as Transition from "@mcp-handles/core/Transition"
import * as Wire from "@mcp-handles/core/Wire"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import { pollDelay, ttlDeadline } from "../src/internal/engine/answers.js"
import type { Engine } from "../src/internal/engine/context.js"
import * as Quiet from "../src/internal/engine/quiet.js"
import { pending, T0 } from "./support/transitions.js"

/** Small pools, so that an answer often says what the row already holds. */
const state = fc.record({
  statusMessage: fc.constantFrom(undefined, "busy", "nearly"),
  pollIntervalMs: fc.constantFrom(undefined, 1_000, 2_500, 90_000),
  ttlMs: fc.constantFrom(null, 10_000, 600_000),
  createdAt: fc.constantFrom(T0, T0 + 1),
  lastUpdatedAt: fc.constantFrom(T0, T0 + 5),
})

type State = typeof state extends fc.Arbitrary<infer A> ? A : never

const taskOf = (taskId: string, status: Wire.TaskState["status"], fields: State) =>
  new Wire.TaskState({
    taskId,
    status,
    createdAt: fields.createdAt,
    lastUpdatedAt: fields.lastUpdatedAt,
    ttlMs: fields.ttlMs,
    ...(fields.statusMessage === undefined ? {} : { statusMessage: fields.statusMessage }),
    ...(fields.pollIntervalMs === undefined ? {} : { pollIntervalMs: fields.pollIntervalMs }),
    ...(status === "completed" ? { result: { content: [] } } : {}),
    ...(status === "input_required" ? { inputRequests: { a: { method: "elicitation/create" } } } : {}),
  })

/** A working row as a quiet poll leaves it: its task created, polled since, maybe without an interval. */
const rowOf = (fields: State, pollsWithoutInterval: number, polls: number) => {
  const created = Transition.step(
    pending,
    Transition.Event.TaskCreated({ task: taskOf("task-1", "working", fields), now: T0, nextPollAt: T0 }),
  )
  return new HandleRecord.HandleRecord({ ...created, pollsWithoutInterval, polls, version: 7 }, true)
}

/** Each of the answer's fields: mostly the row's own (`keep`), sometimes another from the pool. */
const keep = Symbol("keep")
const orKeep = <A>(value: fc.Arbitrary<A>) =>
  fc.oneof({ arbitrary: fc.constant<typeof keep>(keep), weight: 8 }, { arbitrary: value, weight: 1 })
const overrides = fc.record({
  statusMessage: orKeep(state.map((one) => one.statusMessage)),
  pollIntervalMs: orKeep(state.map((one) => one.pollIntervalMs)),
  ttlMs: orKeep(state.map((one) => one.ttlMs)),
  createdAt: orKeep(state.map((one) => one.createdAt)),
  lastUpdatedAt: orKeep(state.map((one) => one.lastUpdatedAt)),
})

/** A quiet row, and an answer to its next poll (when, and what it says). */
const rowAndAnswer = fc
  .record({
    fields: state,
    pollsWithoutInterval: fc.nat(12),
    polls: fc.nat(50),
    overrides,
    taskId: fc.constantFrom("task-1", "task-1", "task-1", "task-2"),
    status: fc.constantFrom<Wire.TaskState["status"]>(
      "working",
      "working",
      "working",
      "input_required",
      "completed",
    ),
    // Around the TTL backstop of the longest TTL above.
    at: fc.integer({ min: T0, max: T0 + 700_000 }),
  })
  .map(({ fields, pollsWithoutInterval, polls, overrides, taskId, status, at }) => {
    const answered = { ...fields }
    for (const [name, value] of Object.entries(overrides)) {
      if (value !== keep) Object.assign(answered, { [name]: value })
    }
    return { record: rowOf(fields, pollsWithoutInterval, polls), task: taskOf(taskId, status, answered), at }
  })

const engine = (polling: Polling.Options) => ({ polling, quiet: new Map() }) as unknown as Engine

/** What drive.ts does with the answer when it holds the record: undefined unless quiet. */
const fromRecord = (ctx: Engine, record: HandleRecord.HandleRecord, task: Wire.TaskState, now: number) =>
  Effect.gen(function* () {
    const deadline = ttlDeadline(record)
    const stillOpen = task.status === "working" || task.status === "input_required"
    if (stillOpen && deadline !== undefined && now >= deadline && task.ttlMs === record.snapshot?.ttlMs) {
      return undefined
    }
    const delay = yield* pollDelay(ctx, task, record)
    const after = Transition.step(record, Transition.Event.Polled({ task, now, nextPollAt: now + delay }))
    return (yield* Quiet.isQuietStep(ctx, record, after)) ? (after.nextPollAt ?? undefined) : undefined
  })

describe("quietAnswer", () => {
  it.effect.prop(
    "decides every answer as the record's own transition does",
    [rowAndAnswer, fc.constantFrom(Polling.defaults, { ...Polling.defaults, defaultMaxMs: 2_000 })],
    ([{ record, task, at }, polling]) =>
      Effect.gen(function* () {
        const ctx = engine(polling)
        // The entry a quiet poll of the row leaves (its first: `after` is the row's next state).
        Quiet.remember(
          ctx,
          record,
          new HandleRecord.HandleRecord({ ...record, polls: record.polls + 1 }, true),
          1_000,
        )
        const known = ctx.quiet.get(HandleRecord.rowId(record.scope, record.key))
        if (known === undefined) return expect.unreachable("a quiet poll's row is remembered")
        expect(known.version).toBe(7)
        const expected = yield* fromRecord(ctx, record, task, at)
        expect(yield* Quiet.quietAnswer(ctx, known, task, at)).toBe(expected)
      }),
    // A thousand runs take a few seconds on a quiet machine and 43 s at load 12 on two cores: the
    // bound is for a busy machine, the property is the same.
    { timeout: 180_000, fastCheck: { numRuns: 1_000 } },
  )

  it.effect("finds quiet answers and loud ones alike among its cases", () =>
    Effect.gen(function* () {
      // The property above is only as good as its mix: both outcomes must be common in it.
      const samples = fc.sample(rowAndAnswer, { numRuns: 2_000, seed: 42 })
      let quiet = 0
      for (const { record, task, at } of samples) {
        const found = yield* fromRecord(engine(Polling.defaults), record, task, at)
        if (found !== undefined) quiet++
      }
      expect(quiet).toBeGreaterThan(50)
      expect(quiet).toBeLessThan(samples.length - 50)
    }),
  )
})
