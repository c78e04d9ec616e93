/**
 * A row's free texts (status message, error, last problem, progress message) with its own task
 * ids taken out and put back, for encryption at rest: a server that quotes the task id in an
 * error would otherwise leave the id in clear beside its sealed copy. The texts stay readable
 * without the key (the id reads `⟪task id⟫`), cost no cipher call, and read back exactly as
 * they were written.
 *
 * The rule that makes it exact: in a hidden text every `⟪` of the original is doubled, and a
 * placeholder is a single `⟪` followed by its name, so reading back is one pass that cannot
 * mistake one for the other.
 */
import type { JsonValue } from "../Json.js"
import { minTextLength } from "../Redaction.js"

const open = "⟪"
const escapedOpen = "⟪⟪"

/** The placeholder of the row's task id (`index` 0) or of its stray task number `index`. */
const placeholder = (index: number): string => (index === 0 ? "⟪task id⟫" : `⟪stray task ${index}⟫`)

const placeholders = /⟪(⟪|task id⟫|stray task (\d+)⟫)/g

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * The ids of one row, the row's task id first (`null` when it has none), then its strays, ready
 * to hide: built once per write and only when a text could hold one.
 */
export class RowIds {
  private pattern: RegExp | undefined
  constructor(readonly ids: ReadonlyArray<string | null>) {}

  /** Whether `text` holds anything `hide` changes. */
  private touches(text: string): boolean {
    return text.includes(open) || this.quotes(text)
  }

  /** Whether `text` holds one of the ids as `hide` would take it out. */
  quotes(text: string): boolean {
    for (const id of this.ids) {
      if (id === null || id === "") continue
      if (id.length >= minTextLength ? text.includes(id) : text === id) return true
    }
    return false
  }

  /** `text` with each id replaced by its placeholder; itself when it holds none. */
  hide(text: string): string {
    if (!this.touches(text)) return text
    // An id too short to replace inside free text is replaced only where it is the whole text.
    const whole = this.ids.findIndex((id) => id !== null && id !== "" && id === text)
    if (whole >= 0) return placeholder(whole)
    this.pattern ??= new RegExp(
      [
        ...this.ids
          .map((id, index) => ({ id, index }))
          .filter(({ id }) => id !== null && id.length >= minTextLength)
          // Longest first: an id inside another id is not taken out of it.
          .sort((a, b) => (b.id as string).length - (a.id as string).length)
          .map(({ id }) => escapeRegExp(id as string)),
        open,
      ].join("|"),
      "g",
    )
    return text.replace(this.pattern, (found) =>
      found === open ? escapedOpen : placeholder(this.ids.indexOf(found)),
    )
  }

  /** `text` as `hide` had it; placeholders of ids this row does not have are kept. */
  reveal(text: string): string {
    if (!text.includes(open)) return text
    return text.replace(placeholders, (found, body: string, stray: string | undefined) => {
      if (body === open) return open
      const id = this.ids[stray === undefined ? 0 : Number(stray)]
      return id === null || id === undefined ? found : id
    })
  }
}

/** `value` with `f` applied to every string in it, keys included; the same value when none changed. */
export const mapStrings = (value: JsonValue, f: (text: string) => string): JsonValue => {
  if (typeof value === "string") return f(value)
  if (Array.isArray(value)) {
    let changed = false
    const mapped = value.map((item) => {
      const next = mapStrings(item, f)
      if (next !== item) changed = true
      return next
    })
    return changed ? mapped : value
  }
  if (typeof value === "object" && value !== null) {
    let changed = false
    const mapped: Record<string, JsonValue> = {}
    for (const [key, item] of Object.entries(value)) {
      const nextKey = f(key)
      const next = mapStrings(item as JsonValue, f)
      if (nextKey !== key || next !== item) changed = true
      mapped[nextKey] = next
    }
    return changed ? mapped : value
  }
  return value
}
