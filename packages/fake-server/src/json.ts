/** JSON values as they travel on the wire. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json }

export type JsonObject = { readonly [key: string]: Json }

export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
