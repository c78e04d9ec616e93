/**
 * JSON values as they travel on the wire.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category models
 */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json }

/**
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [key: string]: Json }

/**
 * Any JSON value. A record takes any key, so a config's free-form parts (an `inputSchema`, a
 * result's `content`) are never refused for keys the server does not know.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Json: Schema.Schema<Json> = Schema.Union(
  Schema.Null,
  Schema.Boolean,
  Schema.Number,
  Schema.String,
  Schema.Array(Schema.suspend(() => Json)),
  Schema.Record({ key: Schema.String, value: Schema.suspend(() => Json) }),
).annotations({ identifier: "Json" })

/**
 * @since 0.4.0
 * @category schemas
 */
export const JsonObject: Schema.Schema<JsonObject> = Schema.Record({ key: Schema.String, value: Json })
