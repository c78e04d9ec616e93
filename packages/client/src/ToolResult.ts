/**
 * A tool's result as the protocol defines it (`CallToolResult`), as plain types: content blocks
 * narrowed on `type`, structured content, the tool's own error flag. Every object keeps the
 * fields the server sent besides these.
 *
 * @since 0.2.0
 */
import type { JsonObject, JsonValue } from "./Json.js"

/** Whatever else an object holds, kept as it came. */
type Rest = { readonly [K in string]: JsonValue }

/** Its fields and `Rest` as one object type (as core's schemas declare it). */
type Struct<A> = { [K in keyof (Rest & A)]: (Rest & A)[K] } extends infer B ? B : never

/**
 * @since 0.2.0
 * @category models
 */
export type TextContent = Struct<{
  readonly type: "text"
  readonly text: string
  readonly _meta?: JsonObject | undefined
  readonly annotations?: JsonObject | undefined
}>

/**
 * Base64 `data` of `mimeType`.
 *
 * @since 0.2.0
 * @category models
 */
export type ImageContent = Struct<{
  readonly type: "image"
  readonly data: string
  readonly mimeType: string
  readonly _meta?: JsonObject | undefined
  readonly annotations?: JsonObject | undefined
}>

/**
 * Base64 `data` of `mimeType`.
 *
 * @since 0.2.0
 * @category models
 */
export type AudioContent = Struct<{
  readonly type: "audio"
  readonly data: string
  readonly mimeType: string
  readonly _meta?: JsonObject | undefined
  readonly annotations?: JsonObject | undefined
}>

/**
 * @since 0.2.0
 * @category models
 */
export type ResourceLink = Struct<{
  readonly type: "resource_link"
  readonly uri: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly size?: number | undefined
  readonly _meta?: JsonObject | undefined
  readonly annotations?: JsonObject | undefined
}>

/**
 * A resource included in the result: its `text`, or its base64 `blob`.
 *
 * @since 0.2.0
 * @category models
 */
export type EmbeddedResource = Struct<{
  readonly type: "resource"
  readonly resource:
    | Struct<{
        readonly uri: string
        readonly text: string
        readonly mimeType?: string | undefined
        readonly _meta?: JsonObject | undefined
      }>
    | Struct<{
        readonly uri: string
        readonly blob: string
        readonly mimeType?: string | undefined
        readonly _meta?: JsonObject | undefined
      }>
  readonly _meta?: JsonObject | undefined
  readonly annotations?: JsonObject | undefined
}>

/**
 * A block of a type this revision does not define, kept whole in `block` (`JSON.stringify`
 * writes it back as the server sent it).
 *
 * @since 0.2.0
 * @category models
 */
export type UnknownContent = {
  readonly type: "unknown"
  readonly block: JsonObject
}

/**
 * @since 0.2.0
 * @category models
 */
export type ContentBlock =
  | TextContent
  | ImageContent
  | AudioContent
  | ResourceLink
  | EmbeddedResource
  | UnknownContent

/**
 * The result of `tools/call`. `isError: true` is the tool reporting a failure.
 *
 * @since 0.2.0
 * @category models
 */
export type CallToolResult = Struct<{
  readonly content: ReadonlyArray<ContentBlock>
  readonly structuredContent?: JsonObject | undefined
  readonly isError?: boolean | undefined
  readonly _meta?: JsonObject | undefined
}>
