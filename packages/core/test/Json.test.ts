import { describe, expect, it } from "@effect/vitest"
import * as Json from "@mcp-handles/core/Json"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import fc from "fast-check"

const limits = { maxBytes: 10_000, maxDepth: 8 }

describe("Json", () => {
  it.effect("any JSON value within limits is copied unchanged, unless it holds a __proto__ key", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
          const result = Effect.runSync(
            Effect.either(Json.validate("v", value, { maxBytes: 1e9, maxDepth: 10 })),
          )
          if (JSON.stringify(value).includes('"__proto__":')) expect(Either.isLeft(result)).toBe(true)
          else expect(Either.getOrThrow(result)).toEqual(value)
        }),
      ),
    ),
  )

  const rejected = (value: unknown) =>
    Effect.map(Effect.either(Json.validate("arguments", value, limits)), (result) => {
      expect(Either.isLeft(result) && result.left._tag).toBe("InvalidJson")
    })

  it.effect("non-JSON values are refused with a typed error", () =>
    Effect.gen(function* () {
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      yield* rejected({ f: () => 1 })
      yield* rejected({ u: undefined })
      yield* rejected({ n: Number.NaN })
      yield* rejected({ d: new Date() })
      yield* rejected({ b: 10n })
      yield* rejected(cyclic)
      yield* rejected(JSON.parse('{"__proto__": {"polluted": true}}'))
    }),
  )

  it.effect("oversize and too deeply nested values are refused", () =>
    Effect.gen(function* () {
      yield* rejected({ s: "x".repeat(10_001) })
      let deep: unknown = 1
      for (let i = 0; i < 10; i++) deep = [deep]
      yield* rejected(deep)
      const parsed = yield* Effect.either(Json.parse("body", "[".repeat(20) + "]".repeat(20), limits))
      expect(Either.isLeft(parsed)).toBe(true)
    }),
  )

  it("text from the wire is judged as validate judges what JSON.parse makes of it: the same value or the same refusal", () => {
    // Texts that hit every rule: deep nesting, `__proto__` keys, numbers that parse to Infinity or
    // serialise longer than written, and sizes on either side of the limit.
    const special = fc.constantFrom(
      '{"__proto__":1}',
      "1e999",
      "-1e999",
      "1e20",
      '{"a":[1e400]}',
      '"\\u00e9"',
    )
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 12 }).map((v) => JSON.stringify(v)),
      fc
        .tuple(fc.jsonValue({ maxDepth: 3 }), special)
        .map(([v, extra]) => `{"x":${JSON.stringify(v)},"y":${extra}}`),
      fc
        .tuple(fc.nat(14), special)
        .map(([depth, inner]) => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`),
    )
    fc.assert(
      fc.property(
        value,
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 0, max: 12 }),
        (text, maxBytes, maxDepth) => {
          const small = { maxBytes, maxDepth }
          const parsed = Effect.runSync(Effect.either(Json.parse("answer", text, small)))
          const validated = Effect.runSync(Effect.either(Json.validate("answer", JSON.parse(text), small)))
          const textBytes = new TextEncoder().encode(text).length
          // `parse` refuses oversize text before parsing it; below that, both must agree exactly.
          if (textBytes > maxBytes) expect(Either.isLeft(parsed)).toBe(true)
          else expect(parsed).toEqual(validated)
        },
      ),
      { numRuns: 2000 },
    )
  })

  it("canonical text ignores key order, so the hash does too", () =>
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse())
        expect(Json.canonical(reversed as Json.JsonObject)).toBe(Json.canonical(object as Json.JsonObject))
      }),
    ))
})
