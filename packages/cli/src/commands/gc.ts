/**
 * `mcp-handles gc --older-than 7d`: delete settled calls; open and in-doubt calls are kept.
 *
 * @since 0.1.0
 */
import * as DurationInput from "@mcp-handles/core/DurationInput"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { fromKnown, usage } from "../CliError.js"
import * as Common from "../Common.js"
import * as Output from "../Output.js"
import * as Spec from "../Spec.js"

/**
 * `7d`, `12h`, `30m`: a retention in milliseconds, read by core's `DurationInput` (the library's
 * `gc("7d")` takes the same).
 *
 * @since 0.1.0
 */
export const parseAge = (raw: string) =>
  Either.match(DurationInput.decodeEither(raw), {
    onLeft: () =>
      Effect.fail(
        usage(`--older-than: expected a number and a unit (ms, s, m, h, d, w), like 7d; got ${raw}`),
      ),
    onRight: (retention) => Effect.succeed(Duration.toMillis(retention)),
  })

const olderThan = Spec.withDefault(
  Spec.text("older-than", {
    placeholder: "AGE",
    description: "delete calls settled longer ago than this: a number and ms, s, m, h, d or w",
    example: "--older-than 12h",
  }),
  "7d",
  "7d",
)
const allScopes = Spec.boolean("all-scopes", {
  description: "sweep every scope, not only --scope",
  example: "--all-scopes",
})

/**
 * @since 0.1.0
 * @category commands
 */
export const spec = Spec.command(
  "gc",
  {
    summary: "Delete settled calls older than a retention; keeps open and in-doubt calls",
    description: [
      "Deletes calls that settled (completed, failed, cancelled, expired) longer ago than the retention. Open and in-doubt calls are never deleted.",
    ],
    examples: [
      { command: "mcp-handles gc --older-than 7d" },
      { command: "mcp-handles gc --older-than 30d --all-scopes --json" },
    ],
  },
  { ...Common.common, olderThan, allScopes, json: Common.json },
  (options) =>
    Effect.gen(function* () {
      const retention = yield* parseAge(options.olderThan)
      const session = yield* Common.open(options)
      const scope = options.allScopes ? undefined : session.scope
      const deleted = yield* session.client.gc(retention, scope).pipe(
        // Read already (parseAge): a retention the library cannot read here is a bug.
        Effect.catchTag("InvalidDuration", Effect.die),
        Effect.mapError(fromKnown),
      )
      if (options.json)
        Output.json(Output.Gc, { deleted, olderThan: options.olderThan, scope: scope ?? null })
      else
        Output.line(
          `deleted ${deleted} settled call(s) older than ${options.olderThan}; open and in-doubt calls are kept`,
        )
    }).pipe(Effect.scoped),
)
