/**
 * `answer(key, inputKey, response)`: an input request answered by the app rather than by a
 * handler, from any process. The answer is checked against the request, then stored as an
 * intent (compare-and-set, the lease left alone); whoever drives the row sends it as soon as it
 * learns of it (at once here, within a reconciler tick on another instance) if its own poll heard
 * the question since it took the row, else after its next poll, exactly as a handler's answer.
 * With no driver anywhere, this process drives it.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ClientError from "../../ClientError.js"
import * as ServerRequest from "../../ServerRequest.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Transition from "../../Transition.js"
import { checkAnswer } from "./answers.js"
import { type Engine, rowId } from "./context.js"
import { ensureDriving, wake } from "./drivers.js"
import { commitNow, leasedByOther, takeLease } from "./leases.js"
import { load } from "./operations.js"

export const answer =
  (ctx: Engine): TaskClient.TaskClient["answer"] =>
  (key, inputKey, response, scope = ctx.defaultScope) =>
    Effect.gen(function* () {
      const record = yield* load(ctx, scope, key)
      const refuse = (reason: ClientError.CannotAnswerReason) =>
        Effect.fail(new ClientError.CannotAnswer({ key, inputKey, status: record.status, reason }))
      if (record.status !== "input_required") return yield* refuse("not_waiting")
      if (record.answers[inputKey] !== undefined) return yield* refuse("already_answered")
      const raw = record.inputRequests?.[inputKey]
      if (raw === undefined) return yield* refuse("not_asked")
      const checked = yield* checkAnswer(ctx, key, inputKey, ServerRequest.decode(raw), response)
      const written = yield* commitNow(
        ctx,
        record,
        (now) => Transition.Event.InputAnswered({ answers: { [inputKey]: checked }, now }),
        "intent",
      ).pipe(Effect.catchTag("LeaseLost", () => Effect.succeed(record)))
      // Someone else answered it meanwhile (or the task stopped asking): theirs stands.
      const stored = written.answers[inputKey]
      if (stored === undefined || JSON.stringify(stored.response) !== JSON.stringify(checked))
        return yield* Effect.fail(
          new ClientError.CannotAnswer({
            key,
            inputKey,
            status: written.status,
            reason: stored === undefined ? "not_waiting" : "already_answered",
          }),
        )
      // The driver here sends it at once; with none anywhere, this process becomes it.
      if (!(yield* wake(ctx, scope, key)) && !ctx.drivers.has(rowId(scope, key))) {
        const now = yield* ctx.store.now
        if (!leasedByOther(ctx, written, now) && !ctx.stepping.has(rowId(scope, key))) {
          const leased = yield* takeLease(ctx, written)
          if (Option.isSome(leased)) yield* ensureDriving(ctx, leased.value)
        }
      }
      return written
    })
