import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Transition from "@mcp-handles/core/Transition"
import * as Wire from "@mcp-handles/core/Wire"
import fc from "fast-check"
import { event, pending, run, statuses, stepsOf, T0 } from "./support/transitions.js"

const { Event } = Transition

describe("Transition.step", () => {
  it("terminal is final: no event changes a terminal record, but for a stray task it records", () =>
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), event, (events, extra) => {
        const aboutStrays = ["TaskCreated", "StrayCancelled", "StrayCancelFailed", "Rescheduled"]
        for (const record of run(events)) {
          if (!HandleRecord.isTerminal(record.status)) continue
          const after = Transition.step(record, extra)
          if (!aboutStrays.includes(extra._tag)) {
            expect(after).toBe(record)
            continue
          }
          // Only the strays and when they are due may change: the status, outcome and task id
          // stay as they were.
          const { strayTasks, updatedAt, nextPollAt, leaseOwner, leaseExpiresAt } = record
          expect({ ...after, strayTasks, updatedAt, nextPollAt, leaseOwner, leaseExpiresAt }).toEqual({
            ...record,
          })
        }
      }),
    ))

  it("a settled record is due exactly while a stray task of it is still to cancel, and held by nobody", () =>
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        let sawDue = false
        for (const record of run(events)) {
          if (!HandleRecord.isTerminal(record.status)) continue
          const strays = Transition.uncancelledStrays(record).length
          expect(record.nextPollAt !== null, `${strays} stray(s) to cancel`).toBe(strays > 0)
          expect(record.leaseOwner).toBeNull()
          sawDue ||= strays > 0
        }
        return sawDue || true
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
            // Due only for a stray task still to cancel (see the property above).
            if (Transition.uncancelledStrays(record).length === 0) expect(record.nextPollAt).toBeNull()
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

  it("a question heard on a stream is stored at once, on a live task only, and never replaced", () => {
    const working = Transition.step(
      pending,
      Event.TaskCreated({
        task: new Wire.TaskState({
          taskId: "t",
          status: "working",
          createdAt: T0,
          lastUpdatedAt: T0,
          ttlMs: null,
        }),
        now: T0,
        nextPollAt: T0 + 1,
      }),
    )
    const question = { method: "elicitation/create", params: { message: "Name?" } }
    const heard = Transition.step(working, Event.InputHeard({ requests: { q: question }, now: T0 + 1 }))
    expect(heard).toMatchObject({
      status: "input_required",
      inputRequests: { q: question },
      nextPollAt: T0 + 1,
    })
    expect(heard.version).toBe(working.version)
    const again = Transition.step(
      heard,
      Event.InputHeard({ requests: { q: { method: "other" } }, now: T0 + 2 }),
    )
    expect(again).toBe(heard)
    const more = Transition.step(heard, Event.InputHeard({ requests: { r: question }, now: T0 + 2 }))
    expect(Object.keys(more.inputRequests ?? {})).toEqual(["q", "r"])
    const finished = Transition.step(
      pending,
      Event.CallRejected({ error: new HandleRecord.RpcError({ code: -1, message: "no" }), now: T0 }),
    )
    expect(Transition.step(finished, Event.InputHeard({ requests: { q: question }, now: T0 + 1 }))).toBe(
      finished,
    )
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
