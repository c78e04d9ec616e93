/**
 * `TaskClient.gc` (issue 28): retentions read as people write them, turned into the store's
 * cutoffs on the store's clock. The store keeps what a known consumer has not acknowledged;
 * `consumerRetention` bounds how long.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as DurationInput from "../DurationInput.js"
import type { GcReport, HandleStore, StoreError } from "../HandleStore.js"
import type { GcOptions } from "../TaskClient.js"

const cutoff = (now: number, retention: DurationInput.DurationInput) =>
  Effect.map(DurationInput.decode(retention), (duration) => now - Duration.toMillis(duration))

/** A string is the scope, as `gc(retention, scope)` took it before it took options. */
export const run = (
  store: HandleStore,
  retention: DurationInput.DurationInput,
  options: string | GcOptions = {},
): Effect.Effect<GcReport, StoreError | DurationInput.InvalidDuration> => {
  const { scope, consumerRetention } = typeof options === "string" ? { scope: options } : options
  return Effect.flatMap(store.now, (now) =>
    Effect.all([
      cutoff(now, retention),
      consumerRetention === undefined ? Effect.succeed(undefined) : cutoff(now, consumerRetention),
    ]).pipe(
      Effect.flatMap(([settledBefore, unacknowledgedBefore]) =>
        store.deleteSettledBefore({ scope, settledBefore, unacknowledgedBefore }),
      ),
    ),
  )
}
