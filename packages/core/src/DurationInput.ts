/**
 * A duration as people write it: `"7d"`, `"30s"`, `"2h"`, `"500ms"`, as well as every form
 * Effect's `Duration.DurationInput` takes (a `Duration`, milliseconds as a number, `"5 minutes"`).
 * One parser for the library and the CLI, so `gc("7d")` and `mcp-handles gc --older-than 7d`
 * mean the same thing, and bad input is a typed `InvalidDuration`, never a thrown string.
 *
 * ```ts
 * DurationInput.decode("7d") // Effect<Duration, InvalidDuration>
 * ```
 *
 * @since 0.2.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/**
 * The short units: milliseconds, seconds, minutes, hours, days, weeks.
 *
 * @since 0.2.0
 * @category models
 */
export type ShortUnit = "ms" | "s" | "m" | "h" | "d" | "w"

/**
 * A number and a short unit, without a space: `"7d"`, `"1.5h"`.
 *
 * @since 0.2.0
 * @category models
 */
export type ShortDuration = `${number}${ShortUnit}`

/**
 * What every duration option and argument of the library takes.
 *
 * @since 0.2.0
 * @category models
 */
export type DurationInput = Duration.DurationInput | ShortDuration

/**
 * Milliseconds per short unit.
 *
 * @since 0.2.0
 * @category constants
 */
export const units: Readonly<Record<ShortUnit, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
}

/**
 * A value that is not a duration, or a negative one.
 *
 * @since 0.2.0
 * @category errors
 */
export class InvalidDuration extends Schema.TaggedError<InvalidDuration>()("InvalidDuration", {
  /** The input as text (a value that is not text is shown with `String`). */
  input: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `invalid duration ${JSON.stringify(this.input)}: ${this.reason}`
  }
}

const short = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/

const describe = (input: unknown): string => {
  if (typeof input === "string") return input
  if (Duration.isDuration(input)) return Duration.format(input)
  try {
    return Array.isArray(input) ? `[${input.map(String).join(", ")}]` : String(input)
  } catch {
    return Object.prototype.toString.call(input)
  }
}

const invalid = (input: unknown, reason: string) =>
  Either.left(new InvalidDuration({ input: describe(input), reason }))

/**
 * Reads a duration without running anything: the building block of `decode`, for code that
 * parses its input up front (a CLI option, a config file).
 *
 * @since 0.2.0
 * @category decoding
 */
export const decodeEither = (input: unknown): Either.Either<Duration.Duration, InvalidDuration> => {
  if (typeof input === "string") {
    const match = short.exec(input)
    if (match !== null) {
      const unit = units[match[2] as ShortUnit]
      return Either.right(Duration.millis(Number(match[1]) * unit))
    }
    if (/^\s*-/.test(input)) return invalid(input, "durations cannot be negative")
  }
  if (typeof input === "number" && input < 0) return invalid(input, "durations cannot be negative")
  if (typeof input === "number" && Number.isNaN(input)) return invalid(input, "not a number")
  if (typeof input === "bigint" && input < 0n) return invalid(input, "durations cannot be negative")
  // Everything else is Effect's own format, which signals bad input by throwing.
  const decoded = Duration.decodeUnknown(input)
  return decoded._tag === "Some"
    ? Either.right(decoded.value)
    : invalid(
        input,
        `expected a number and a unit (${Object.keys(units).join(", ")}), like "7d", "30s" or "2h", or an Effect Duration`,
      )
}

/**
 * Reads a duration: `"7d"`, `"30s"`, `"2h"` (units `ms`, `s`, `m`, `h`, `d`, `w`; a fraction
 * such as `"1.5h"` is fine), or anything Effect's `Duration.decode` takes (a `Duration`, a
 * number of milliseconds, `"5 minutes"`). Negative and unreadable input fails with
 * `InvalidDuration`.
 *
 * @since 0.2.0
 * @category decoding
 */
export const decode = (input: unknown): Effect.Effect<Duration.Duration, InvalidDuration> =>
  Effect.suspend(() => decodeEither(input))
