import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStoreDriver from "@mcp-handles/core/HandleStoreDriver"
import * as Transition from "@mcp-handles/core/Transition"
import * as Wire from "@mcp-handles/core/Wire"
import * as Either from "effect/Either"
import fc from "fast-check"

const T0 = 1_700_000_000_000
const statuses = HandleRecord.Status.literals

const pending = Either.getOrThrow(
  HandleStoreDriver.initialRecord({
    scope: "s",
    key: "k",
    serverId: "srv",
    tool: "t",
    arguments: {},
    argumentsHash: "h",
    owner: "me",
    leaseMs: 30_000,
    now: T0,
  }),
)

const taskStatus = fc.constantFrom(...Wire.TaskStatus.literals)
const taskState = (taskId: fc.Arbitrary<string>) =>
  fc
    .record({
      taskId,
      status: taskStatus,
      pollIntervalMs: fc.option(fc.integer({ min: -10, max: 100_000 }), { nil: undefined }),
      ttlMs: fc.option(fc.nat(1e7), { nil: null }),
      inputKeys: fc.array(fc.constantFrom("a", "b", "c"), { maxLength: 3 }),
    })
    .map(
      ({ inputKeys, pollIntervalMs, ...rest }) =>
        new Wire.TaskState({
          ...rest,
          ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
          createdAt: T0,
          lastUpdatedAt: T0,
          ...(rest.status === "input_required"
            ? {
                inputRequests: Object.fromEntries(
                  inputKeys.map((k) => [k, { method: "elicitation/create" }]),
                ),
              }
            : {}),
          ...(rest.status === "completed" ? { result: { content: [] } } : {}),
          ...(rest.status === "failed"
            ? { error: HandleRecord.RpcError.make({ code: -1, message: "x" }) }
            : {}),
        }),
    )

const taskIds = fc.constantFrom("task-1", "task-2")
const time = fc.integer({ min: T0, max: T0 + 1e7 })
const { Event } = Transition

const event: fc.Arbitrary<Transition.Event> = fc.oneof(
  fc.record({ now: time }).map(({ now }) => Event.CallCompleted({ result: { ok: true }, now })),
  fc
    .record({ task: taskState(taskIds), now: time })
    .map((e) => Event.TaskCreated({ ...e, nextPollAt: e.now + 1 })),
  time.map((now) =>
    Event.CallRejected({ error: HandleRecord.RpcError.make({ code: -32601, message: "no" }), now }),
  ),
  time.map((now) => Event.CallInDoubt({ reason: "dropped", now })),
  time.map((now) => Event.CallDeferred({ reason: "refused", now, retryAt: now + 5 })),
  time.map((now) =>
    Event.CallAbandonedUnsent({ error: HandleRecord.RpcError.make({ code: -32000, message: "x" }), now }),
  ),
  fc
    .record({ task: taskState(taskIds), now: time })
    .map((e) => Event.Polled({ ...e, nextPollAt: e.now + 1 })),
  time.map((now) => Event.PollFailed({ problem: "503", now, retryAt: now + 10 })),
  time.map((now) => Event.TaskGone({ now })),
  time.map((now) => Event.TtlElapsed({ now })),
  fc
    .record({ keys: fc.array(fc.constantFrom("a", "b", "c"), { maxLength: 3 }), now: time })
    .map(({ keys, now }) =>
      Event.InputAnswered({ answers: Object.fromEntries(keys.map((k) => [k, k])), now }),
    ),
  fc
    .record({ keys: fc.array(fc.constantFrom("a", "b", "c"), { maxLength: 3 }), now: time })
    .map(({ keys, now }) => Event.InputAcknowledged({ keys, now })),
  time.map((now) => Event.CancelRequested({ now })),
  time.map((now) => Event.CancelSent({ now, nextPollAt: now + 1 })),
  time.map((now) => Event.Recovered({ now })),
  time.map((now) => Event.Reissued({ now })),
  time.map((now) => Event.Abandoned({ now })),
  time.map((now) => Event.Rescheduled({ now, nextPollAt: now + 3 })),
  fc.record({ taskId: taskIds, now: time }).map((e) => Event.StrayCancelled(e)),
  fc.record({ taskId: taskIds, now: time }).map((e) => Event.TaskIdTaken(e)),
)

/** Each step of a run: the record before, the record after, and the event between them. */
const stepsOf = (events: ReadonlyArray<Transition.Event>) => {
  const trace = run(events)
  return events.map((cause, i) => ({
    before: trace[i] as HandleRecord.HandleRecord,
    after: trace[i + 1] as HandleRecord.HandleRecord,
    cause,
  }))
}

const run = (events: ReadonlyArray<Transition.Event>) => {
  const trace = [pending]
  for (const e of events) trace.push(Transition.step(trace[trace.length - 1] as HandleRecord.HandleRecord, e))
  return trace
}

describe("Transition.step", () => {
  it("terminal is final: no event changes a terminal record, but for a stray task it records", () =>
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), event, (events, extra) => {
        for (const record of run(events)) {
          if (!HandleRecord.isTerminal(record.status)) continue
          const after = Transition.step(record, extra)
          if (extra._tag !== "TaskCreated" && extra._tag !== "StrayCancelled") {
            expect(after).toBe(record)
            continue
          }
          // Only the strays may change: the status, outcome and task id stay as they were.
          expect({ ...after, strayTasks: record.strayTasks, updatedAt: record.updatedAt }).toEqual({
            ...record,
          })
        }
      }),
    ))

  it("a task id handed out for a row that holds another one, or rests, is kept as a stray", () =>
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        for (const { before, after, cause } of stepsOf(events)) {
          if (cause._tag !== "TaskCreated") continue
          const id = cause.task.taskId
          // Every task id an answer carried is on the row afterwards: as its task, or a stray.
          expect(after.taskId === id || after.strayTasks.some((s) => s.taskId === id)).toBe(true)
          // Strays only grow; none is forgotten.
          for (const stray of before.strayTasks) {
            expect(after.strayTasks.some((s) => s.taskId === stray.taskId)).toBe(true)
          }
        }
      }),
    ))

  it("a task id, once recorded, never changes, and none appears without a task answer", () =>
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        for (const { before, after, cause } of stepsOf(events)) {
          if (before.taskId !== null) expect(after.taskId).toBe(before.taskId)
          if (before.taskId === null && after.taskId !== null) {
            expect(cause._tag).toBe("TaskCreated")
            expect(after.taskId).toBe(
              (cause as Extract<Transition.Event, { _tag: "TaskCreated" }>).task.taskId,
            )
          }
        }
      }),
    ))

  it("every reachable record is in a listed state, decodes, and rests consistently", () =>
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        for (const record of run(events)) {
          expect(statuses).toContain(record.status)
          expect(new HandleRecord.HandleRecord(record)).toEqual(record)
          if (HandleRecord.isTerminal(record.status)) {
            expect(record.settledAt).not.toBeNull()
            expect(record.nextPollAt).toBeNull()
            expect(record.leaseOwner).toBeNull()
          }
          if (record.status === "working" || record.status === "input_required")
            expect(record.taskId).not.toBeNull()
          if (record.status === "completed") expect(record.result).not.toBeNull()
          if (record.status === "failed") expect(record.error).not.toBeNull()
        }
      }),
    ))

  it("an answered input key keeps its first answer, and acknowledgement is never undone", () =>
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const trace = run(events)
        for (let i = 1; i < trace.length; i++) {
          const before = trace[i - 1] as HandleRecord.HandleRecord
          const after = trace[i] as HandleRecord.HandleRecord
          for (const [key, answer] of Object.entries(before.answers)) {
            expect(after.answers[key]?.response).toEqual(answer.response)
            if (answer.acknowledged) expect(after.answers[key]?.acknowledged).toBe(true)
          }
        }
      }),
    ))

  it("launches grow only by an explicit reissue of an in-doubt call", () =>
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const trace = run(events)
        for (let i = 1; i < trace.length; i++) {
          const before = trace[i - 1] as HandleRecord.HandleRecord
          const after = trace[i] as HandleRecord.HandleRecord
          if (after.launches !== before.launches) {
            expect(events[i - 1]?._tag).toBe("Reissued")
            expect(before.status).toBe("in_doubt")
            expect(after.launches).toBe(before.launches + 1)
          }
        }
      }),
    ))

  it("transient failures never end a task", () =>
    fc.assert(
      fc.property(
        fc.array(event, { maxLength: 40 }),
        fc.integer({ min: T0, max: T0 + 1e7 }),
        (events, now) => {
          for (const record of run(events)) {
            const after = Transition.step(
              record,
              Event.PollFailed({ problem: "timeout", now, retryAt: now + 1 }),
            )
            expect(after.status).toBe(record.status)
          }
        },
      ),
    ))

  it("waiting only on answered, acknowledged keys is marked stuck and shown, not silently awaited", () => {
    const task = (status: "working" | "input_required") =>
      new Wire.TaskState({
        taskId: "t",
        status,
        createdAt: T0,
        lastUpdatedAt: T0,
        ttlMs: null,
        ...(status === "input_required" ? { inputRequests: { a: { method: "elicitation/create" } } } : {}),
      })
    let r = Transition.step(
      pending,
      Event.TaskCreated({ task: task("input_required"), now: T0, nextPollAt: T0 + 1 }),
    )
    expect(r.stuckSince).toBeNull()
    r = Transition.step(r, Event.InputAnswered({ answers: { a: "yes" }, now: T0 + 1 }))
    r = Transition.step(r, Event.InputAcknowledged({ keys: ["a"], now: T0 + 2 }))
    r = Transition.step(r, Event.Polled({ task: task("input_required"), now: T0 + 3, nextPollAt: T0 + 4 }))
    expect(r.stuckSince).toBe(T0 + 3)
    expect(r.lastProblem).toMatch(/already answered: a/)
    r = Transition.step(r, Event.Polled({ task: task("input_required"), now: T0 + 9, nextPollAt: T0 + 10 }))
    expect(r.stuckSince).toBe(T0 + 3)
    r = Transition.step(r, Event.Polled({ task: task("working"), now: T0 + 11, nextPollAt: T0 + 12 }))
    expect(r.stuckSince).toBeNull()
    expect(r.lastProblem).toBeNull()
  })

  it("a late task answer to an in-doubt call records the handle", () => {
    const inDoubt = Transition.step(pending, Event.CallInDoubt({ reason: "timeout", now: T0 + 1 }))
    const task = new Wire.TaskState({
      taskId: "late",
      status: "working",
      createdAt: T0,
      lastUpdatedAt: T0,
      ttlMs: 60_000,
      pollIntervalMs: 500,
    })
    const recorded = Transition.step(inDoubt, Event.TaskCreated({ task, now: T0 + 2, nextPollAt: T0 + 502 }))
    expect(recorded.status).toBe("working")
    expect(recorded.taskId).toBe("late")
    expect(recorded.snapshot?.receivedAt).toBe(T0 + 2)
  })
})
