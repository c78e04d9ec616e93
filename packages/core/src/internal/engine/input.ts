/**
 * Answering a task's input requests, exactly once: questions are asked of the handler and their
 * answers stored before anything is sent, and a stored answer is sent only while the server
 * still asks for its key as of a poll the sender made itself.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as HandleRecord from "../../HandleRecord.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Transition from "../../Transition.js"
import type * as Wire from "../../Wire.js"
import { askInput, forgetTrouble, problemOf } from "./answers.js"
import { type Engine, rowId } from "./context.js"
import { commit, commitNow, holding, type LeaseMode } from "./leases.js"
import { isUnknownTask, retryLater, type Step } from "./retry.js"

/** Whether answering input is this step's work: unasked questions with a handler, or unsent answers. */
export const needsInput = (record: HandleRecord.HandleRecord, handler: TaskClient.InputHandler | undefined) =>
  record.status === "input_required" &&
  (Object.values(record.answers).some((answer) => !answer.acknowledged) ||
    (handler !== undefined &&
      Object.keys(record.inputRequests ?? {}).some((inputKey) => record.answers[inputKey] === undefined)))

/**
 * Says, once per question, that the call waits for input no handler here answers: without it
 * the call would wait until its TTL with nothing in the log.
 */
export const warnUnanswerable = (before: HandleRecord.HandleRecord, after: HandleRecord.HandleRecord) => {
  if (after.status !== "input_required") return Effect.void
  const fresh = Object.keys(after.inputRequests ?? {}).filter(
    (inputKey) => after.answers[inputKey] === undefined && before.inputRequests?.[inputKey] === undefined,
  )
  return fresh.length === 0
    ? Effect.void
    : Effect.logWarning(
        "the call waits for input and no onInputRequired handler here answers it; answer it with answer(key, inputKey, response)",
        { key: after.key, inputKeys: fresh },
      )
}

/** Whether the caller has had a poll answer itself since it took the row (see answerInput). */
export interface Seen {
  polled: boolean
}

/**
 * Input: ask what nobody has answered yet (stored before it is sent), then send every stored
 * answer not yet acknowledged, but only for keys the server still asks for as of a poll this
 * driver made itself (after a restart it polls first, so an answer that did reach the server
 * is never sent twice). A key the server no longer asks for is settled without sending.
 */
export const answerInput = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  endpoint: Wire.ServerEndpoint,
  taskId: string,
  handler: TaskClient.InputHandler | undefined,
  mode: LeaseMode,
  seen: Seen,
): Step =>
  Effect.gen(function* () {
    const outstanding = record.inputRequests ?? {}
    const id = rowId(record.scope, record.key)
    for (const inputKey of [...(ctx.handlerTrouble.get(id)?.keys() ?? [])])
      if (outstanding[inputKey] === undefined || record.answers[inputKey] !== undefined)
        forgetTrouble(ctx, id, inputKey)
    const unasked = Object.fromEntries(
      Object.entries(outstanding).filter(([inputKey]) => record.answers[inputKey] === undefined),
    )
    let current = record
    const fresh = yield* askInput(ctx, handler, record, unasked)
    if (Object.keys(fresh).length > 0) {
      const answers = (now: number) => Transition.Event.InputAnswered({ answers: fresh, now })
      current = yield* commitNow(ctx, current, answers, "action", mode)
    }
    const unacknowledged = Object.entries(current.answers).filter(([, answer]) => !answer.acknowledged)
    const stale = unacknowledged.filter(([inputKey]) => outstanding[inputKey] === undefined).map(([k]) => k)
    if (stale.length > 0) {
      const settled = (now: number) => Transition.Event.InputAcknowledged({ keys: stale, now })
      current = yield* commitNow(ctx, current, settled, "action", mode)
    }
    const toSend = unacknowledged.filter(([inputKey]) => outstanding[inputKey] !== undefined)
    if (toSend.length === 0) return current
    const responses = Object.fromEntries(toSend.map(([inputKey, answer]) => [inputKey, answer.response]))
    // Until it is acknowledged, the server may or may not have these answers: only a poll after
    // this send can say whether to send them again.
    seen.polled = false
    const sent = yield* Effect.either(
      ctx.wire.updateTask(endpoint, taskId, responses, current.snapshot ?? undefined),
    )
    // -32602 on an update is the server refusing these answers, not the task gone: they are not
    // sent again (a stuck task is reported as such), and polling goes on.
    if (Either.isLeft(sent) && !isUnknownTask(sent.left))
      return yield* retryLater(ctx, current, sent.left, mode)
    if (Either.isLeft(sent)) {
      yield* Effect.logWarning("the server refused input answers", {
        key: record.key,
        problem: problemOf(sent.left),
      })
    }
    const now = yield* ctx.store.now
    return yield* commit(
      ctx,
      current,
      Transition.Event.InputAcknowledged({ keys: Object.keys(responses), now }),
      "action",
      mode,
    )
  }).pipe(holding(ctx, record, mode))
