import { describe, expect, it } from "@effect/vitest"
import * as Json from "@mcp-handles/core/Json"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import fc from "fast-check"
import * as Utf8 from "../src/internal/utf8.js"

const encoder = new TextEncoder()

/** Any UTF-16 text, lone surrogates and pairs included. */
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom("\ud800", "\udfff", "\ud83d\ude00", "é", "€"),
    fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
    fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  ),
})

describe("Utf8", () => {
  it("counts what TextEncoder makes, for any text", () =>
    fc.assert(
      fc.property(text, (value) => {
        expect(Utf8.utf8Length(value)).toBe(encoder.encode(value).byteLength)
      }),
    ))

  it("utf8Over gives the size exactly when it is over the limit", () =>
    fc.assert(
      fc.property(text, fc.nat(200), (value, maxBytes) => {
        const bytes = encoder.encode(value).byteLength
        expect(Utf8.utf8Over(value, maxBytes)).toBe(bytes > maxBytes ? bytes : undefined)
      }),
    ))

  it.effect("Json.parse refuses a text one byte over its limit and takes it at the limit", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(text, (value) => {
          const json = JSON.stringify(value)
          const size = encoder.encode(json).byteLength
          const at = Effect.runSync(Effect.either(Json.parse("t", json, { maxBytes: size, maxDepth: 4 })))
          const under = Effect.runSync(
            Effect.either(Json.parse("t", json, { maxBytes: size - 1, maxDepth: 4 })),
          )
          expect(Either.getOrThrow(at)).toBe(value)
          expect(Either.isLeft(under) && under.left.reason).toBe(
            `${size} bytes exceeds the limit of ${size - 1}`,
          )
        }),
      ),
    ),
  )
})
