/**
 * Sending `tools/call` for a pending row, and turning what comes back into the row's next state.
 * The dispatcher holds the row's lease for as long as the request (or an input round before a
 * task exists) is in flight; what the server hands out is written whoever holds the row then.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as HandleRecord from "../../HandleRecord.js"
import * as Json from "../../Json.js"
import * as Polling from "../../Polling.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Transition from "../../Transition.js"
import * as Wire from "../../Wire.js"
import { askInput, checkResult, localError, pollDelay } from "./answers.js"
import { defaults, type Engine } from "./context.js"
import { type CommitError, commit, holding } from "./leases.js"
import * as Progress from "./progress.js"
import * as Unwritten from "./unwritten.js"

type CallResult = Either.Either<Wire.CallAnswer, Wire.WireError>

/** How a dispatch ended: the row, and the request still in flight when the call timeout fired. */
export interface Dispatched {
  readonly record: HandleRecord.HandleRecord
  readonly late: Option.Option<Fiber.Fiber<CallResult>>
}

/** Writes a task or a direct result: facts, written whoever holds the row by now. */
export const applyAnswer = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  answer: Exclude<Wire.CallAnswer, { _tag: "InputRequired" }>,
): Effect.Effect<HandleRecord.HandleRecord, CommitError> =>
  Effect.gen(function* () {
    const now = yield* ctx.store.now
    if (answer._tag === "Complete") {
      const checked = yield* Effect.either(Json.validate("tool result", answer.result, ctx.resultLimits))
      if (Either.isLeft(checked)) {
        // The call ran, but we refuse to store what it returned.
        return yield* commit(
          ctx,
          record,
          Transition.Event.CallRejected({ error: localError(checked.left.message, "result_rejected"), now }),
          "action",
        )
      }
      return yield* commit(
        ctx,
        record,
        Transition.Event.CallCompleted({ result: answer.result, now }),
        "fact",
      )
    }
    // A seed that claims to be terminal without its payload is recorded as running: the first
    // poll fetches the result or error.
    const task =
      (answer.task.status === "completed" && answer.task.result === undefined) ||
      (answer.task.status === "failed" && answer.task.error === undefined)
        ? new Wire.TaskState({ ...answer.task, status: "working" })
        : answer.task
    const delay = yield* pollDelay(ctx, task, record)
    const checked = yield* checkResult(ctx, task)
    const event = Transition.Event.TaskCreated({ task: checked, now, nextPollAt: now + delay })
    // Until the store takes it, the id is only in this process: closing must not drop it.
    return yield* Unwritten.writing(ctx, { record, event }, commit(ctx, record, event, "fact"))
  })

/**
 * What a `tools/call` failure tells us. Only a request that provably never reached the server
 * (refused connection, 429) may be sent again as never launched; a 502/503/504 or a dropped
 * connection after sending may come from a proxy after the server acted, so the call is in doubt.
 */
const onFailure = (ctx: Engine, record: HandleRecord.HandleRecord, error: Wire.WireError) =>
  Effect.gen(function* () {
    const now = yield* ctx.store.now
    const act = (event: Transition.Event) => commit(ctx, record, event, "action")
    const inDoubt = (reason: string, namedTaskId?: string) =>
      act(Transition.Event.CallInDoubt({ reason, now, namedTaskId }))
    switch (error._tag) {
      case "RpcErrorAnswer":
      case "UnsupportedVersion":
        return yield* act(Transition.Event.CallRejected({ error: error.error, now }))
      case "MalformedAnswer": {
        if (error.taskId === undefined) return yield* inDoubt(error.reason, error.namedTaskId)
        // The server created a task and named it; the rest of its answer is broken. Keep the id
        // and learn the rest by polling, rather than orphan the task.
        const task = new Wire.TaskState({
          taskId: error.taskId,
          status: "working",
          createdAt: now,
          lastUpdatedAt: now,
          ttlMs: null,
        })
        return yield* applyAnswer(ctx, record, { _tag: "Task", task })
      }
      case "NoAnswer":
        return yield* inDoubt(error.reason)
      case "Unauthorized": {
        const refused = `the server refused the credentials (HTTP ${error.status})`
        return yield* act(
          Transition.Event.CallAbandonedUnsent({ error: localError(refused, "unauthorized"), now }),
        )
      }
      case "ServerBusy":
        return error.status === 429
          ? yield* defer(ctx, record, `server busy (HTTP ${error.status})`, error.retryAfterMs)
          : yield* inDoubt(`HTTP ${error.status} after the request was sent: the server may have acted on it`)
      case "NotSent":
        return yield* defer(ctx, record, `not sent: ${error.reason}`, undefined)
    }
  })

const defer = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  reason: string,
  retryAfterMs: number | undefined,
) =>
  Effect.gen(function* () {
    const now = yield* ctx.store.now
    if (record.attempts + 1 >= ctx.polling.maxDispatchAttempts) {
      return yield* commit(
        ctx,
        record,
        Transition.Event.CallAbandonedUnsent({
          error: localError(`gave up dispatching: ${reason}`, "unsent"),
          now,
        }),
        "action",
      )
    }
    const delay = yield* Polling.retryDelay(ctx.polling, record.attempts + 1, retryAfterMs)
    return yield* commit(
      ctx,
      record,
      Transition.Event.CallDeferred({ reason, now, retryAt: now + delay }),
      "action",
    )
  })

/**
 * Sends `tools/call` until the server answers something decisive, holding the lease throughout.
 * Returns once the row is working, input_required, terminal or in doubt; when the call timeout
 * made it in doubt, the request still in flight comes back too (its answer may yet arrive).
 */
export const dispatch = (
  ctx: Engine,
  initial: HandleRecord.HandleRecord,
  endpoint: Wire.ServerEndpoint,
  args: Json.JsonObject,
  handler: TaskClient.InputHandler | undefined,
): Effect.Effect<Dispatched, CommitError> =>
  Effect.gen(function* () {
    let record = initial
    let round: Pick<Wire.CallToolRequest, "inputResponses" | "requestState"> = {}
    for (let inputRounds = 0; ; ) {
      if (record.status !== "pending") return { record, late: Option.none() }
      const progress = ctx.options.progress === false ? undefined : yield* Progress.track(ctx, record)
      const request: Wire.CallToolRequest = {
        name: record.tool,
        arguments: args,
        idempotencyKey: record.key,
        ...round,
        ...(progress === undefined ? {} : { onProgress: progress.onProgress }),
      }
      const call = yield* Effect.forkIn(Effect.either(ctx.wire.callTool(endpoint, request)), ctx.clientScope)
      const writing = progress === undefined ? undefined : yield* Effect.fork(progress.write)
      const answered = yield* (
        ctx.options.callTimeout === undefined
          ? Effect.map(Fiber.join(call), Option.some)
          : Fiber.join(call).pipe(Effect.timeoutOption(ctx.options.callTimeout))
      ).pipe(Effect.ensuring(writing === undefined ? Effect.void : Fiber.interrupt(writing)))
      if (Option.isNone(answered)) {
        const now = yield* ctx.store.now
        record = yield* commit(
          ctx,
          record,
          Transition.Event.CallInDoubt({ reason: "no answer within the call timeout", now }),
          "action",
        )
        return { record, late: Option.some(call) }
      }
      const result = answered.value
      if (Either.isLeft(result)) {
        record = yield* onFailure(ctx, record, result.left)
        if (record.status === "pending" && record.nextPollAt !== null) {
          const now = yield* ctx.store.now
          yield* Effect.sleep(Duration.millis(Math.max(0, record.nextPollAt - now)))
        }
        continue
      }
      const answer = result.right
      if (answer._tag !== "InputRequired")
        return { record: yield* applyAnswer(ctx, record, answer), late: Option.none() }
      const now = yield* ctx.store.now
      if (++inputRounds > defaults.inputRounds) {
        record = yield* commit(
          ctx,
          record,
          Transition.Event.CallAbandonedUnsent({
            error: localError("the server kept asking for input before creating a task", "input_loop"),
            now,
          }),
          "action",
        )
        continue
      }
      const answers = yield* askInput(ctx, handler, record, answer.inputRequests)
      if (Object.keys(answers).length < Object.keys(answer.inputRequests).length) {
        // Nothing was launched: without answers the stateless server has nothing to go on.
        record = yield* commit(
          ctx,
          record,
          Transition.Event.CallAbandonedUnsent({
            error: localError("the server asked for input that was not given", "input_unanswered"),
            now: yield* ctx.store.now,
          }),
          "action",
        )
        continue
      }
      round = { inputResponses: answers, requestState: answer.requestState }
    }
  }).pipe(holding(ctx, initial))

/**
 * Waits for the answer to a `tools/call` the call timeout gave up on, still holding the lease
 * (nobody reissues the call meanwhile), and writes the task it may carry.
 */
export const awaitLate = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  call: Fiber.Fiber<CallResult>,
): Effect.Effect<HandleRecord.HandleRecord, CommitError> =>
  Effect.gen(function* () {
    const result = yield* Fiber.join(call)
    // On an in-doubt row only a failure that still names its task changes anything.
    if (Either.isLeft(result)) return yield* onFailure(ctx, record, result.left)
    if (result.right._tag === "InputRequired") return record
    return yield* applyAnswer(ctx, record, result.right)
  }).pipe(holding(ctx, record))
