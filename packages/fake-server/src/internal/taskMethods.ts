import type { Json, JsonObject } from "../Json.js"
import type { TaskRecord } from "../Persistence.js"
import { type Call, failure, type HandlerResult, result, type ServerContext } from "./context.js"
import { isObject } from "./json.js"
import { invalidParams, RpcFailure } from "./rpcFailure.js"
import { isTerminal, type TaskView } from "./taskRecord.js"
import type { Lookup } from "./taskStore.js"
import { pollIntervalAt, viewAt } from "./timeline.js"
import { detailedTask } from "./wire.js"

const notFound = () => invalidParams("Failed to retrieve task: Task not found")
const expired = () => invalidParams("Failed to retrieve task: Task has expired")

const decodeTaskId = (params: Record<string, unknown>): string | RpcFailure =>
  typeof params.taskId === "string" ? params.taskId : invalidParams("Invalid params: taskId must be a string")

/** A lookup that failed, as the error to answer with; `undefined` when the task is live. */
const lookupFailure = (context: ServerContext, found: Lookup): RpcFailure | undefined => {
  if (found.kind === "unknown") return notFound()
  if (found.kind === "expired" && context.config.expiry?.mode !== "fail") return expired()
  return undefined
}

/** The task as the client would see it now, honouring the expiry mode. */
export const observe = (
  record: TaskRecord,
  expiredNow: boolean,
  now: number,
  skewMs: number,
): { view: TaskView; task: Record<string, Json> } => {
  const view = observedView(record, expiredNow, now)
  return { view, task: detailedTask({ record, view, now, skewMs }) }
}

/** The task's state as `observe` shows it, without rendering it. */
export const observedView = (record: TaskRecord, expiredNow: boolean, now: number): TaskView => {
  const natural = viewAt(record, now)
  if (!expiredNow || isTerminal(natural.status)) return natural
  // `fail` mode: the spec lets a server fail a task once its TTL has elapsed.
  const expiresAt = record.plan.ttlMs === null ? now : record.createdAt + record.plan.ttlMs
  return {
    status: "failed",
    lastUpdatedAt: expiresAt,
    statusMessage: "Task expired before it finished",
    inputRequests: undefined,
    outcome: { kind: "error", code: -32603, message: "Task expired before it finished" },
  }
}

export const getTask = (context: ServerContext, call: Call): HandlerResult => {
  const taskId = decodeTaskId(call.request.params)
  if (taskId instanceof RpcFailure) return failure(taskId)
  const found = context.store.lookup(taskId, call.now)
  const entry = context.ledger.taskEntry(taskId)
  if (entry !== undefined && found.kind !== "unknown") {
    // Poll discipline: compare with the interval advertised at the previous poll (or creation).
    const previousAt = entry.polls.at(-1) ?? entry.createdAt
    const interval = pollIntervalAt(found.record.plan.pollIntervalMs, found.record.createdAt, previousAt)
    // A simulated clock may stand between milliseconds (jittered sleeps): 2299.999999999999 ms
    // after the previous poll is float noise of a poll at 2300, not an early poll.
    if (interval !== undefined && call.now - previousAt < interval - 1e-6) entry.earlyPolls += 1
    entry.polls.push(call.now)
  }
  const problem = lookupFailure(context, found)
  if (problem !== undefined || found.kind === "unknown") return failure(problem ?? notFound())
  const { view, task } = observe(found.record, found.kind === "expired", call.now, call.skewMs)
  if (entry !== undefined && entry.terminalSeenAt === null && isTerminal(view.status)) {
    entry.terminalSeenAt = call.now
    entry.terminalStatus = view.status
    entry.terminalSeenBy = "tasks/get"
  }
  return result({ resultType: "complete", ...task })
}

export const updateTask = (context: ServerContext, call: Call): HandlerResult => {
  const taskId = decodeTaskId(call.request.params)
  if (taskId instanceof RpcFailure) return failure(taskId)
  const responses = call.request.params.inputResponses
  if (!isObject(responses)) return failure(invalidParams("Invalid params: inputResponses must be an object"))
  const found = context.store.lookup(taskId, call.now)
  const problem = lookupFailure(context, found)
  if (problem !== undefined || found.kind === "unknown") return failure(problem ?? notFound())
  const record = found.record
  const view = viewAt(record, call.now)
  const accepted: string[] = []
  // Keys that are not outstanding right now (never issued, already answered) are ignored.
  if (found.kind === "live" && view.status === "input_required" && view.inputRequests !== undefined) {
    for (const key of Object.keys(responses)) {
      if (Object.hasOwn(view.inputRequests, key) && !Object.hasOwn(record.answers, key)) {
        record.answers[key] = { at: call.now, response: responses[key] as Json }
        accepted.push(key)
      }
    }
  }
  if (accepted.length > 0) context.store.changed()
  context.ledger.taskEntry(taskId)?.updates.push({ at: call.now, keys: Object.keys(responses), accepted })
  return result({ resultType: "complete" })
}

export const cancelTask = (context: ServerContext, call: Call): HandlerResult => {
  const taskId = decodeTaskId(call.request.params)
  if (taskId instanceof RpcFailure) return failure(taskId)
  const found = context.store.lookup(taskId, call.now)
  const problem = lookupFailure(context, found)
  if (problem !== undefined || found.kind === "unknown") return failure(problem ?? notFound())
  const record = found.record
  context.ledger.taskEntry(taskId)?.cancels.push(call.now)
  // Cancelling a finished task is an idempotent no-op; the first cancel of a running one counts.
  if (!isTerminal(viewAt(record, call.now).status) && record.cancelRequestedAt === null) {
    record.cancelRequestedAt = call.now
    context.store.changed()
  }
  return result({ resultType: "complete" })
}

/** `notifications.taskIds` of a `subscriptions/listen`, or an error. */
export const decodeListen = (params: Record<string, unknown>): { taskIds: string[] } | RpcFailure => {
  const notifications = params.notifications
  if (!isObject(notifications)) return invalidParams("Invalid params: notifications must be an object")
  const taskIds = (notifications as JsonObject).taskIds
  if (taskIds === undefined) return { taskIds: [] }
  if (!Array.isArray(taskIds) || !taskIds.every((id) => typeof id === "string")) {
    return invalidParams("Invalid params: notifications.taskIds must be an array of strings")
  }
  return { taskIds: taskIds as string[] }
}
