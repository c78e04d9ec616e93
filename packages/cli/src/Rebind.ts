/**
 * Moving the calls of one server name to another server the store knows, in every scope: the
 * operation behind `mcp-handles servers --rebind OLD=NEW` and the ui's rebind action.
 *
 * @since 0.5.0
 */
import * as ServerIdentity from "@mcp-handles/core/ServerIdentity"
import * as Effect from "effect/Effect"
import { type CliError, fromKnown, usage } from "./CliError.js"
import * as Common from "./Common.js"

/**
 * Moves every call of server name `from` to the server `target`, through the store's `rebind`
 * once per identity the old name was written under (one per URL it had). Returns how many
 * moved. A call whose task id a call of the target already holds stops the move there, with a
 * usage error that starts with `label` and says how many moved before it.
 *
 * @since 0.5.0
 */
export const calls = (
  session: Common.Session,
  from: string,
  target: { readonly id: string; readonly name: string },
  label: string,
): Effect.Effect<number, CliError> =>
  Effect.gen(function* () {
    const rows = yield* Common.listAllScopes(session)
    const identities = new Set(
      rows.filter((r) => ServerIdentity.nameOf(r.serverId) === from).map((r) => r.serverId),
    )
    let moved = 0
    for (const id of identities) {
      moved += yield* session.store.rebind({ from: id, to: target.id }).pipe(
        Effect.catchTag("TaskIdTaken", (e) =>
          Effect.fail(
            usage(
              `${label}: call ${e.key} (scope ${e.scope}) has a task id a call of ${target.name} already holds; moved ${moved} call(s) before it`,
            ),
          ),
        ),
        Effect.mapError((e) => (e._tag === "StoreError" ? fromKnown(e) : e)),
      )
    }
    return moved
  })
