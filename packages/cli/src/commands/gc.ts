/**
 * `mcp-handles gc --older-than 7d`: delete settled calls; open and in-doubt calls are kept, and
 * so are calls a known consumer has not acknowledged (issue 28), until `--consumer-retention`.
 *
 * @since 0.1.0
 */
import * as DurationInput from "@mcp-handles/core/DurationInput"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { fromKnown, usage } from "../CliError.js"
import * as Common from "../Common.js"
import * as Output from "../Output.js"
import * as Spec from "../Spec.js"

/**
 * `7d`, `12h`, `30m`: a retention in milliseconds, read by core's `DurationInput` (the library's
 * `gc("7d")` takes the same). `flag` names the option in the usage error.
 *
 * @since 0.1.0
 */
export const parseAge = (raw: string, flag = "--older-than") =>
  Either.match(DurationInput.decodeEither(raw), {
    onLeft: () =>
      Effect.fail(usage(`${flag}: expected a number and a unit (ms, s, m, h, d, w), like 7d; got ${raw}`)),
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
const consumerRetention = Spec.optional(
  Spec.text("consumer-retention", {
    placeholder: "AGE",
    description:
      "also delete calls settled longer ago than this that a consumer has not acknowledged, and report them (default: keep them while the consumer is known)",
    example: "--consumer-retention 30d",
  }),
)
const forgetConsumer = Spec.repeated(
  Spec.text("forget-consumer", {
    placeholder: "NAME",
    description:
      "forget a decommissioned consumer before sweeping, so it no longer holds calls it never acknowledged",
    example: "--forget-consumer audit",
  }),
)

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
      "A call whose outcome a consumer has not acknowledged is kept too, for every consumer that has read outcomes in its scope, until --consumer-retention has passed; what goes unacknowledged then is reported per consumer. --forget-consumer NAME stops a decommissioned consumer from holding calls.",
    ],
    examples: [
      { command: "mcp-handles gc --older-than 7d" },
      { command: "mcp-handles gc --older-than 7d --consumer-retention 30d --all-scopes --json" },
      { command: "mcp-handles gc --forget-consumer audit" },
    ],
  },
  { ...Common.common, olderThan, allScopes, consumerRetention, forgetConsumer, json: Common.json },
  (options) =>
    Effect.gen(function* () {
      const retention = yield* parseAge(options.olderThan)
      const consumerRetention = Option.isSome(options.consumerRetention)
        ? yield* parseAge(options.consumerRetention.value, "--consumer-retention")
        : undefined
      const session = yield* Common.open(options)
      const scope = options.allScopes ? undefined : session.scope
      const forgotten: Array<string> = []
      for (const consumer of options.forgetConsumer) {
        const scopes = yield* session.store
          .forgetConsumer({ consumer, scope })
          .pipe(Effect.mapError(fromKnown))
        if (scopes > 0) forgotten.push(consumer)
      }
      const report = yield* session.client.gc(retention, { scope, consumerRetention }).pipe(
        // Read already (parseAge): a retention the library cannot read here is a bug.
        Effect.catchTag("InvalidDuration", Effect.die),
        Effect.mapError(fromKnown),
      )
      if (options.json) {
        Output.json(Output.Gc, {
          deleted: report.deleted,
          olderThan: options.olderThan,
          scope: scope ?? null,
          kept: report.kept,
          unacknowledged: report.unacknowledged,
          forgotten,
        })
        return
      }
      for (const consumer of forgotten) Output.line(`forgot consumer ${consumer}`)
      Output.line(
        `deleted ${report.deleted} settled call(s) older than ${options.olderThan}; open and in-doubt calls are kept`,
      )
      for (const { consumer, scope, outcomes } of report.unacknowledged)
        Output.line(
          `  ${outcomes} of them consumer ${consumer} (scope ${scope}) had not acknowledged (settled before --consumer-retention)`,
        )
      if (report.kept > 0) {
        const consumers = yield* session.store.listConsumers(scope).pipe(Effect.mapError(fromKnown))
        Output.line(
          `kept ${report.kept} settled call(s) a consumer has not acknowledged (consumers: ${consumers.map((c) => c.consumer).join(", ")}); --consumer-retention AGE bounds the wait, --forget-consumer NAME drops a consumer`,
        )
      }
    }).pipe(Effect.scoped),
)
