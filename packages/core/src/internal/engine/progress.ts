/**
 * Progress of a call while its `tools/call` answer is on the way: the server's notices are
 * written to the row only when they change materially (see `HandleRecord.progressChanged`), by
 * one fiber per dispatch, so a chatty server costs a write per tenth, not per notice.
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as HandleRecord from "../../HandleRecord.js"
import * as Transition from "../../Transition.js"
import type * as Wire from "../../Wire.js"
import type { Engine } from "./context.js"
import { commit } from "./leases.js"

export interface Tracker {
  /** Given to the wire: called from its callbacks, never blocks. */
  readonly onProgress: (notice: Wire.ProgressNotice) => void
  /** Writes material changes until interrupted. */
  readonly write: Effect.Effect<never>
}

export const track = (ctx: Engine, initial: HandleRecord.HandleRecord): Effect.Effect<Tracker> =>
  Effect.map(Queue.sliding<Wire.ProgressNotice>(64), (queue) => {
    let record = initial
    let kept = initial.progress
    const step = Effect.gen(function* () {
      const notice = yield* Queue.take(queue)
      const now = yield* ctx.store.now
      const next = new HandleRecord.Progress({ ...notice, at: now })
      if (!HandleRecord.progressChanged(kept, next)) return
      kept = next
      record = yield* commit(
        ctx,
        record,
        Transition.Event.Progressed({ progress: next, now }),
        "action",
      ).pipe(
        // Progress is advice: a write that fails is not worth failing the call for.
        Effect.catchAll((error) =>
          Effect.as(
            Effect.logDebug("could not store progress", { key: record.key, error: error._tag }),
            record,
          ),
        ),
      )
    })
    return {
      onProgress: (notice) => {
        Queue.unsafeOffer(queue, notice)
      },
      write: Effect.forever(step),
    }
  })
