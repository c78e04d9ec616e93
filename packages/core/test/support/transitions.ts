/**
 * Generated runs of the state machine: every `Transition.Event`, with task states of every
 * status, applied in any order from a fresh pending record. Shared by the properties of
 * `Transition.step` and of what the engine makes of each step (routine writes).
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStoreDriver from "@mcp-handles/core/HandleStoreDriver"
import * as Transition from "@mcp-handles/core/Transition"
import * as Wire from "@mcp-handles/core/Wire"
import * as Either from "effect/Either"
import fc from "fast-check"

export const T0 = 1_700_000_000_000
export const statuses = HandleRecord.Status.literals

export const pending = Either.getOrThrow(
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
export const taskState = (taskId: fc.Arbitrary<string>) =>
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

export const taskIds = fc.constantFrom("task-1", "task-2")
export const time = fc.integer({ min: T0, max: T0 + 1e7 })
const { Event } = Transition

export const event: fc.Arbitrary<Transition.Event> = fc.oneof(
  fc.record({ now: time }).map(({ now }) => Event.CallCompleted({ result: { content: [], ok: true }, now })),
  fc
    .record({ task: taskState(taskIds), now: time })
    .map((e) => Event.TaskCreated({ ...e, nextPollAt: e.now + 1 })),
  time.map((now) =>
    Event.CallRejected({ error: HandleRecord.RpcError.make({ code: -32601, message: "no" }), now }),
  ),
  time.map((now) => Event.CallInDoubt({ reason: "dropped", now })),
  // An answer we could not read that named a task id.
  fc
    .record({ namedTaskId: taskIds, now: time })
    .map((e) => Event.CallInDoubt({ reason: "unreadable", ...e })),
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
  fc
    .record({ taskId: taskIds, now: time })
    .map((e) => Event.StrayCancelFailed({ ...e, retryAt: e.now + 1_000 })),
  fc.record({ taskId: taskIds, now: time }).map((e) => Event.TaskIdTaken(e)),
)

/** Each step of a run: the record before, the record after, and the event between them. */
export const stepsOf = (events: ReadonlyArray<Transition.Event>) => {
  const trace = run(events)
  return events.map((cause, i) => ({
    before: trace[i] as HandleRecord.HandleRecord,
    after: trace[i + 1] as HandleRecord.HandleRecord,
    cause,
  }))
}

export const run = (events: ReadonlyArray<Transition.Event>) => {
  const trace = [pending]
  for (const e of events) trace.push(Transition.step(trace[trace.length - 1] as HandleRecord.HandleRecord, e))
  return trace
}
