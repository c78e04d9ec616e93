/**
 * What the engine makes of the server's answers before the transition sees them: results it
 * refuses to keep, the next poll time, the TTL backstop, input questions put to the app.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ClientError from "../../ClientError.js"
import type * as HandleRecord from "../../HandleRecord.js"
import { localError } from "../../HandleRecord.js"
import * as Json from "../../Json.js"
import * as Polling from "../../Polling.js"
import * as ServerRequest from "../../ServerRequest.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Wire from "../../Wire.js"
import { type Engine, type HandlerTrouble, rowId } from "./context.js"

export { localError }

/**
 * A final result over the configured limits is not stored: the task is recorded as failed with
 * a local error saying why (the task id is kept), and the result is dropped.
 */
export const checkResult = (ctx: Engine, task: Wire.TaskState): Effect.Effect<Wire.TaskState> =>
  task.status !== "completed" || task.result === undefined
    ? Effect.succeed(task)
    : Json.validate("task result", task.result, ctx.resultLimits).pipe(
        Effect.as(task),
        Effect.catchAll((rejected) => {
          const { result: _dropped, ...rest } = task
          return Effect.succeed(
            new Wire.TaskState({
              ...rest,
              status: "failed",
              error: localError(rejected.message, "result_rejected"),
            }),
          )
        }),
      )

export const pollDelay = (
  ctx: Engine,
  task: Wire.TaskState,
  record: Pick<HandleRecord.HandleRecord, "pollsWithoutInterval">,
) =>
  Polling.interval(
    ctx.polling,
    task.pollIntervalMs,
    task.pollIntervalMs === undefined ? record.pollsWithoutInterval + 1 : 0,
  )

/** The row's own interval (for retries and hand-offs): never sooner than the server asked. */
export const recordInterval = (
  ctx: Engine,
  record: Pick<HandleRecord.HandleRecord, "snapshot" | "pollsWithoutInterval">,
) => Polling.interval(ctx.polling, record.snapshot?.pollIntervalMs, record.pollsWithoutInterval)

export const ttlDeadline = (record: Pick<HandleRecord.HandleRecord, "snapshot">): number | undefined =>
  record.snapshot === null || record.snapshot.ttlMs === null
    ? undefined
    : record.snapshot.receivedAt + record.snapshot.ttlMs

/**
 * Puts each question to the handler, one at a time. A handler that fails, dies, takes longer
 * than the input timeout, or answers with something that does not fit the request (see
 * `ServerRequest.answerProblems`) leaves its question unanswered (it is asked again later);
 * nothing it does can stop the caller. What went wrong is logged as a warning once per question
 * (the next polls ask again, and would repeat it), and an answer that does not fit is kept in
 * memory until the question is answered: the caller's wait stops on it (`InputRequired` with the
 * problems) and `events` reports it (`InvalidAnswer`), instead of a wait that never ends.
 */
export const askInput = (
  ctx: Engine,
  handler: TaskClient.InputHandler | undefined,
  record: HandleRecord.HandleRecord,
  requests: Readonly<Record<string, Json.JsonValue>>,
) =>
  Effect.gen(function* () {
    const answers: Record<string, Json.JsonValue> = {}
    if (handler === undefined) return answers
    const id = rowId(record.scope, record.key)
    for (const [inputKey, raw] of Object.entries(requests)) {
      const request = ServerRequest.decode(raw)
      const answer = yield* Effect.suspend(() =>
        handler({ scope: record.scope, key: record.key, tool: record.tool, inputKey, request }),
      ).pipe(
        Effect.timeoutFail({
          duration: ctx.inputTimeoutMs,
          onTimeout: () => `no answer within ${ctx.inputTimeoutMs} ms`,
        }),
        Effect.flatMap((value) => checkAnswer(ctx, record.key, inputKey, request, value)),
        Effect.sandbox,
        Effect.either,
      )
      if (Either.isRight(answer)) {
        answers[inputKey] = answer.right
        forgetTrouble(ctx, id, inputKey)
        continue
      }
      const cause = answer.left
      const invalid = Option.filter(
        Cause.failureOption(cause),
        (error): error is ClientError.InvalidAnswer => error instanceof ClientError.InvalidAnswer,
      )
      const problems = Option.getOrUndefined(Option.map(invalid, (error) => error.problems))
      const troubles = ctx.handlerTrouble.get(id) ?? new Map<string, HandlerTrouble>()
      const known = troubles.get(inputKey)
      troubles.set(inputKey, { problems })
      ctx.handlerTrouble.set(id, troubles)
      if (problems !== undefined && known?.problems === undefined) {
        // Waits on the row stop on it, and its events report it: both look when it is written.
        ctx.signals.notify(id)
      }
      if (known !== undefined) {
        yield* Effect.logDebug("input handler failed again; the request stays unanswered", {
          key: record.key,
          inputKey,
          ...(problems === undefined ? { reason: failureOf(cause) } : { problems }),
        })
      } else if (problems !== undefined) {
        yield* Effect.logWarning(
          "the input handler's answer does not fit the request; it stays unanswered (asked again at each poll, or answer it with answer(key, inputKey, response))",
          { key: record.key, inputKey, problems },
        )
      } else {
        yield* Effect.logWarning(
          "input handler failed; the request stays unanswered (asked again at each poll)",
          { key: record.key, inputKey, reason: failureOf(cause) },
        )
      }
    }
    return answers
  })

/**
 * A handler's failure in words: an Error's own JSON is `{}`, so a log line would say nothing of
 * what the handler said (ai-sdk's NoInputHandler, an app's own error).
 */
const failureOf = (cause: Cause.Cause<unknown>): string =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => Cause.pretty(cause),
    onSome: (error) =>
      error instanceof Error
        ? `${"_tag" in error && typeof error._tag === "string" ? error._tag : error.name}: ${error.message}`
        : typeof error === "string"
          ? error
          : JSON.stringify(error),
  })

/** The question is answered, or no longer asked: what went wrong with it is over. */
export const forgetTrouble = (ctx: Engine, id: string, inputKey: string): void => {
  const troubles = ctx.handlerTrouble.get(id)
  if (troubles === undefined) return
  troubles.delete(inputKey)
  if (troubles.size === 0) ctx.handlerTrouble.delete(id)
}

/** The row's open questions whose handler here answered with what does not fit, and why. */
export const refusedAnswers = (ctx: Engine, id: string): ReadonlyMap<string, ReadonlyArray<string>> => {
  const refused = new Map<string, ReadonlyArray<string>>()
  for (const [inputKey, trouble] of ctx.handlerTrouble.get(id) ?? [])
    if (trouble.problems !== undefined) refused.set(inputKey, trouble.problems)
  return refused
}

/** An answer as it may be stored: JSON within the limits, and fitting the request it answers. */
export const checkAnswer = (
  ctx: Engine,
  key: string,
  inputKey: string,
  request: ServerRequest.ServerRequest,
  value: unknown,
): Effect.Effect<Json.JsonValue, Json.InvalidJson | ClientError.InvalidAnswer> =>
  Effect.flatMap(
    Json.validate(`answer to input ${inputKey}`, value, ctx.argumentLimits, { undefinedKeys: "drop" }),
    (answer) => {
      const problems = ServerRequest.answerProblems(request, answer)
      return problems.length === 0
        ? Effect.succeed(answer)
        : Effect.fail(new ClientError.InvalidAnswer({ key, inputKey, problems }))
    },
  )

/** A wire failure in words, for `lastProblem` and logs. */
export const problemOf = (error: Wire.WireError): string => {
  switch (error._tag) {
    case "NotSent":
      return `not sent: ${error.reason}`
    case "NoAnswer":
      return `no answer: ${error.reason}`
    case "RpcErrorAnswer":
      return `server error ${error.error.code}: ${error.error.message}`
    case "ServerBusy":
      return `server busy (HTTP ${error.status})`
    case "Unauthorized":
      return `unauthorized (HTTP ${error.status}); check the credentials`
    case "MalformedAnswer":
      return `malformed answer: ${error.reason}`
    case "UnsupportedVersion":
      return `no protocol version in common (the server supports ${error.supported.join(", ") || "none"})`
  }
}
