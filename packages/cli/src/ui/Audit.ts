/**
 * Who did it (issue 33): an action taken from `mcp-handles ui` that changes no status by itself
 * (a cancel asked, an answer given, a rebind) is written into the call's history as an entry of
 * its own, naming the person's instance (`ui:USER`) and what was done. The status it shows is
 * the call's at that moment (`from` and `to` alike).
 *
 * @since 0.6.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** A row written meanwhile (its driver polled) is read again; this many tries, then given up. */
const attempts = 5

/**
 * Writes "`actor` did `what`" into the history of the call at `scope`/`key` (nothing when the
 * row is gone).
 *
 * @since 0.6.0
 */
export const record = (
  store: HandleStore.HandleStore,
  target: { readonly scope: string; readonly key: string },
  what: string,
  actor: string,
): Effect.Effect<void> => {
  const once = Effect.gen(function* () {
    const found = yield* store.get(target.scope, target.key)
    if (Option.isNone(found)) return
    const row = found.value
    const at = yield* store.now
    const entry = new HandleRecord.HistoryEntry({
      at,
      from: row.status,
      to: row.status,
      cause: what,
      instance: actor,
    })
    yield* store.update(HandleRecord.withHistoryEntry(row, entry))
  })
  return once.pipe(
    Effect.retry({ times: attempts - 1, while: (error) => error._tag === "VersionConflict" }),
    // The action itself is done: a history that could not say who did it is worth a warning,
    // not a page saying the action failed.
    Effect.catchAll((error) =>
      Effect.logWarning(
        `ui: the history of ${target.key} does not record "${what}" by ${actor}: ${error.message}`,
      ),
    ),
  )
}
