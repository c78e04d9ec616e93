/** A plain JSON object (not an array, not null): what every field lookup on a body needs first. */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
