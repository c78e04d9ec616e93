import type { Json } from "../Json.js"
import { isObject } from "./json.js"

/**
 * Render `{{path}}` / `{{path|fallback}}` placeholders in every string of a JSON value. Paths are
 * dotted lookups into `context`; a missing value renders as its fallback (or the empty string).
 */
export const renderTemplate = (value: Json, context: Record<string, unknown>): Json => {
  if (typeof value === "string") return renderString(value, context)
  if (Array.isArray(value)) return value.map((item: Json) => renderTemplate(item, context))
  if (isObject(value)) {
    const out: Record<string, Json> = {}
    for (const [key, item] of Object.entries(value)) out[key] = renderTemplate(item as Json, context)
    return out
  }
  return value
}

export const renderString = (template: string, context: Record<string, unknown>): string =>
  template.replace(/\{\{\s*([^}|]+?)\s*(?:\|([^}]*))?\}\}/g, (_match, path: string, fallback?: string) => {
    const found = lookup(context, path)
    if (found === undefined || found === null) return fallback ?? ""
    return typeof found === "string" ? found : JSON.stringify(found)
  })

const lookup = (context: Record<string, unknown>, path: string): unknown => {
  let current: unknown = context
  for (const segment of path.split(".")) {
    // Own properties only: a template must never reach into the prototype chain.
    if (!isObject(current) || !Object.hasOwn(current, segment)) return undefined
    current = current[segment]
  }
  return current
}
