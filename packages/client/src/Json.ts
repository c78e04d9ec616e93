/**
 * JSON values as the client takes and returns them: arguments, results, input answers.
 *
 * @since 0.1.0
 */

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

/**
 * What an input handler may return: a `JsonValue` whose objects may also hold `undefined`
 * (what TypeScript infers for `ok ? { action: "accept", content } : { action: "decline" }`).
 * `undefined` keys are left out, as `JSON.stringify` leaves them out.
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
 * Limits on a JSON value, checked before anything is written.
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
