import { describe, expect, it } from "@effect/vitest"
import * as DurationInput from "@mcp-handles/core/DurationInput"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

const millis = (input: unknown) => Either.map(DurationInput.decodeEither(input), Duration.toMillis)

describe("DurationInput", () => {
  it("reads the short form: a number and a unit, as the CLI takes it", () => {
    expect(millis("7d")).toEqual(Either.right(7 * 86_400_000))
    expect(millis("30s")).toEqual(Either.right(30_000))
    expect(millis("2h")).toEqual(Either.right(7_200_000))
    expect(millis("15m")).toEqual(Either.right(900_000))
    expect(millis("500ms")).toEqual(Either.right(500))
    expect(millis("1w")).toEqual(Either.right(604_800_000))
    expect(millis("1.5h")).toEqual(Either.right(5_400_000))
    expect(millis(" 0s ")).toEqual(Either.right(0))
  })

  it("reads every form Effect's Duration.decode takes", () => {
    expect(millis("5 minutes")).toEqual(Either.right(300_000))
    expect(millis(1_500)).toEqual(Either.right(1_500))
    expect(millis(Duration.hours(3))).toEqual(Either.right(10_800_000))
    expect(millis([2, 0])).toEqual(Either.right(2_000))
    expect(millis(2_000_000n)).toEqual(Either.right(2))
  })

  it("refuses what is not a duration, or a negative one, with a typed error and a readable message", () => {
    for (const bad of ["7 dayz", "7", "d", "", "-1d", "1y", -5, Number.NaN, {}, null, undefined, [1]]) {
      const result = DurationInput.decodeEither(bad)
      expect(Either.isLeft(result), String(bad)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left).toBeInstanceOf(Error)
        expect(result.left._tag).toBe("InvalidDuration")
      }
    }
    const refused = Either.flip(DurationInput.decodeEither("7 dayz"))
    expect(Either.map(refused, String)).toEqual(
      Either.right(
        'InvalidDuration: invalid duration "7 dayz": expected a number and a unit (ms, s, m, h, d, w), like "7d", "30s" or "2h", or an Effect Duration',
      ),
    )
    expect(Either.map(Either.flip(DurationInput.decodeEither("-1d")), (error) => error.message)).toEqual(
      Either.right('invalid duration "-1d": durations cannot be negative'),
    )
  })

  it.effect("decode fails in the error channel, never by throwing", () =>
    Effect.gen(function* () {
      expect(Duration.toMillis(yield* DurationInput.decode("2h"))).toBe(7_200_000)
      const error = yield* Effect.flip(DurationInput.decode("soon"))
      expect(error._tag).toBe("InvalidDuration")
      expect(error.input).toBe("soon")
    }),
  )
})
