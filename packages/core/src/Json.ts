/**
 * JSON values as they cross a boundary (the wire, the database, the caller). Everything that
 * enters the library is decoded against these schemas and checked against the limits before it
 * is written anywhere.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Utf8 from "./internal/utf8.js"

/**
 * @since 0.1.0
 * @category models
 */
export type JsonValue = null | boolean | number | string | ReadonlyArray<JsonValue> | JsonObject

/**
 * @since 0.1.0
 * @category models
 */
export interface JsonObject {
  readonly [key: string]: JsonValue
}

const isJsonObject = (value: object): boolean => {
  for (const key in value) {
    if (Object.hasOwn(value, key) && !isJsonValue((value as Record<string, unknown>)[key])) return false
  }
  return true
}

/** JSON data all the way down: finite numbers, strings, booleans, null, arrays and objects of them. */
const isJsonValue = (value: unknown): value is JsonValue => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isFinite(value)
    case "object":
      if (value === null) return true
      return Array.isArray(value) ? value.every(isJsonValue) : isJsonObject(value)
    default:
      return false
  }
}

/**
 * What a caller may hand back as JSON: a `JsonValue` whose objects may also hold `undefined`.
 * TypeScript infers exactly that for `ok ? { action: "accept", content } : { action: "decline" }`
 * (the second branch gets `content?: undefined`), so answer handlers return this; `validate`
 * with `undefinedKeys: "drop"` drops those keys, as `JSON.stringify` would.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonInput =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<JsonInput>
  | { readonly [key: string]: JsonInput | undefined }

/**
 * A JSON value. Declared by a guard rather than built as a recursive union of schemas: every
 * row read decodes its arguments with it, and the union cost a store read more than the query
 * (B8). The value is passed through as it is, never copied.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonValue: Schema.Schema<JsonValue> = Schema.declare(isJsonValue, {
  identifier: "JsonValue",
  description: "a JSON value (finite numbers, strings, booleans, null, arrays and objects of them)",
})

/**
 * A JSON object (see `JsonValue`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonObject: Schema.Schema<JsonObject> = Schema.declare(
  (value: unknown): value is JsonObject =>
    typeof value === "object" && value !== null && !Array.isArray(value) && isJsonObject(value),
  { identifier: "JsonObject", description: "a JSON object" },
)

/**
 * Limits on what the library accepts. Oversize or too deeply nested input is refused with a
 * typed error before anything is written.
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonLimits {
  /** Largest accepted serialised size, in UTF-8 bytes. */
  readonly maxBytes: number
  /** Deepest accepted nesting of arrays and objects. */
  readonly maxDepth: number
}

/**
 * The limits used when none are given: for what a caller passes in (arguments, input answers)
 * and for what a server sends back (results, answers on the wire).
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults: {
  readonly argumentLimits: JsonLimits
  readonly resultLimits: JsonLimits
} = {
  argumentLimits: { maxBytes: 1024 * 1024, maxDepth: 64 },
  resultLimits: { maxBytes: 16 * 1024 * 1024, maxDepth: 128 },
}

/**
 * Input that is not a JSON object, holds a non-JSON value (a function, `undefined`, `NaN`, a
 * cycle, a `__proto__` key), or exceeds a limit.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidJson extends Schema.TaggedError<InvalidJson>()("InvalidJson", {
  /** What was refused ("arguments", "tools/call answer", ...). */
  what: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `${this.what} rejected: ${this.reason}`
  }
}

const encoder = new TextEncoder()

/**
 * Checks a value that came from untrusted code or the wire: plain JSON only, no prototype
 * keys, within the depth and size limits. Returns a deep copy made only of plain objects, so a
 * later mutation by the caller cannot change what was stored.
 *
 * @since 0.1.0
 * @category validation
 */
export const validate = (
  what: string,
  value: unknown,
  limits: JsonLimits,
  options?: {
    /** `"refuse"` (the default) fails on a key whose value is `undefined`; `"drop"` leaves it out. */
    readonly undefinedKeys?: "refuse" | "drop" | undefined
  },
): Effect.Effect<JsonValue, InvalidJson> =>
  Effect.suspend(() => {
    const seen = new Set<object>()
    const copy = (input: unknown, depth: number): JsonValue => {
      if (depth > limits.maxDepth) throw new RejectedJson(`nested deeper than ${limits.maxDepth} levels`)
      if (input === null || typeof input === "string" || typeof input === "boolean") return input
      if (typeof input === "number") {
        if (!Number.isFinite(input)) throw new RejectedJson(`non-finite number ${input}`)
        return input
      }
      if (typeof input !== "object") throw new RejectedJson(`a ${typeof input} is not JSON`)
      if (seen.has(input)) throw new RejectedJson("contains a cycle")
      seen.add(input)
      try {
        if (Array.isArray(input)) return input.map((item) => copy(item, depth + 1))
        const proto = Object.getPrototypeOf(input)
        if (proto !== Object.prototype && proto !== null)
          throw new RejectedJson("only plain objects are JSON")
        const out: Record<string, JsonValue> = {}
        for (const key of Object.keys(input)) {
          if (key === "__proto__") throw new RejectedJson("a __proto__ key is refused")
          const item = (input as Record<string, unknown>)[key]
          if (item === undefined) {
            if (options?.undefinedKeys === "drop") continue
            throw new RejectedJson(`key ${JSON.stringify(key)} is undefined`)
          }
          Object.defineProperty(out, key, { value: copy(item, depth + 1), enumerable: true, writable: true })
        }
        return out
      } finally {
        seen.delete(input)
      }
    }
    try {
      const result = copy(value, 0)
      const bytes = Utf8.utf8Over(JSON.stringify(result), limits.maxBytes)
      if (bytes !== undefined) {
        return Effect.fail(
          new InvalidJson({ what, reason: `${bytes} bytes exceeds the limit of ${limits.maxBytes}` }),
        )
      }
      return Effect.succeed(result)
    } catch (error) {
      if (error instanceof RejectedJson) return Effect.fail(new InvalidJson({ what, reason: error.message }))
      throw error
    }
  })

class RejectedJson extends Error {}

/**
 * `validate`'s rules for what `JSON.parse` just built, without the copy: that value is fresh,
 * made only of plain objects and arrays, and has no cycle, so only the depth, the numbers (a
 * literal like `1e999` parses to Infinity), `__proto__` keys and the serialised size remain to
 * check. The copy was most of the cost of reading each poll's answer.
 */
const checkParsed = (
  what: string,
  parsed: unknown,
  limits: JsonLimits,
): Effect.Effect<JsonValue, InvalidJson> => {
  const check = (input: unknown, depth: number): void => {
    if (depth > limits.maxDepth) throw new RejectedJson(`nested deeper than ${limits.maxDepth} levels`)
    if (typeof input === "number") {
      if (!Number.isFinite(input)) throw new RejectedJson(`non-finite number ${input}`)
      return
    }
    if (typeof input !== "object" || input === null) return
    if (Array.isArray(input)) {
      for (const item of input) check(item, depth + 1)
      return
    }
    for (const key in input) {
      if (key === "__proto__") throw new RejectedJson("a __proto__ key is refused")
      check((input as Record<string, unknown>)[key], depth + 1)
    }
  }
  try {
    check(parsed, 0)
  } catch (error) {
    if (error instanceof RejectedJson) return Effect.fail(new InvalidJson({ what, reason: error.message }))
    throw error
  }
  // The text was within the limit, but its value may serialise longer (`1e20` is 21 digits).
  const bytes = Utf8.utf8Over(JSON.stringify(parsed), limits.maxBytes)
  return bytes === undefined
    ? Effect.succeed(parsed as JsonValue)
    : Effect.fail(new InvalidJson({ what, reason: `${bytes} bytes exceeds the limit of ${limits.maxBytes}` }))
}

/**
 * Serialises with sorted object keys, so that equal values always produce equal text (and equal
 * hashes), whatever order their keys were written in.
 *
 * @since 0.1.0
 * @category encoding
 */
export const canonical = (value: JsonValue): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  const object = value as JsonObject
  const keys = Object.keys(object).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(object[key] as JsonValue)}`).join(",")}}`
}

/**
 * SHA-256 of the canonical form, hex encoded. Uses Web Crypto, so it runs in every runtime
 * the core supports.
 *
 * @since 0.1.0
 * @category encoding
 */
export const hash = (value: JsonValue): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", encoder.encode(canonical(value)))).pipe(
    Effect.map((digest) =>
      Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join(""),
    ),
  )

/**
 * Parses text from the wire or the database, refusing `__proto__` keys and oversize text before
 * any object is built from it.
 *
 * @since 0.1.0
 * @category validation
 */
export const parse = (
  what: string,
  text: string,
  limits: JsonLimits,
): Effect.Effect<JsonValue, InvalidJson> =>
  Effect.suspend(() => {
    const bytes = Utf8.utf8Over(text, limits.maxBytes)
    if (bytes !== undefined) {
      return Effect.fail(
        new InvalidJson({ what, reason: `${bytes} bytes exceeds the limit of ${limits.maxBytes}` }),
      )
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      return Effect.fail(new InvalidJson({ what, reason: `not JSON (${String(error)})` }))
    }
    return checkParsed(what, parsed, limits)
  })
