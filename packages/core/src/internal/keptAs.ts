/**
 * A wrapper of something the client could not read, written back by `JSON.stringify` as it
 * came: `toJSON` is not enumerable, so it is no field of the wrapper (equality, spreads).
 */
import type { JsonValue } from "../Json.js"

export const keptAs = <A extends object>(wrapper: A, original: JsonValue): A =>
  Object.defineProperty(wrapper, "toJSON", { value: () => original, enumerable: false })
