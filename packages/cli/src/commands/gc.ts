/** `mcp-handles gc --older-than 7d`: delete settled calls; open and in-doubt calls are kept. */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { describe, usage } from "../CliError.js"
import * as Common from "../Common.js"

const units: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
}

export const parseAge = (raw: string) => {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(raw.trim())
  const unit = match?.[2] === undefined ? undefined : units[match[2]]
  if (match === null || unit === undefined) {
    return Effect.fail(
      usage(`--older-than: expected a number and a unit (ms, s, m, h, d, w), like 7d; got ${raw}`),
    )
  }
  return Effect.succeed(Number(match[1]) * unit)
}

const olderThan = Options.text("older-than").pipe(
  Options.withDescription("delete calls settled longer ago than this (e.g. 7d, 12h, 30m)"),
  Options.withDefault("7d"),
)
const allScopes = Options.boolean("all-scopes").pipe(
  Options.withDescription("sweep every scope, not only --scope"),
)

export const command = Command.make(
  "gc",
  { ...Common.common, olderThan, allScopes, json: Common.json },
  (options) =>
    Effect.gen(function* () {
      const retention = yield* parseAge(options.olderThan)
      const session = yield* Common.open(options)
      const deleted = yield* session.client
        .gc(retention, options.allScopes ? undefined : session.scope)
        .pipe(Effect.mapError(describe))
      if (options.json) console.log(JSON.stringify({ deleted }))
      else
        console.log(
          `deleted ${deleted} settled call(s) older than ${options.olderThan}; open and in-doubt calls are kept`,
        )
    }).pipe(Effect.scoped),
).pipe(Command.withDescription("Delete settled calls older than a retention; keeps open and in-doubt calls"))
