/**
 * A tool's result as the protocol defines it (`CallToolResult`): content blocks, structured
 * content, the tool's own error flag. Decoded where a result enters (the server's answer, a
 * stored row), so an app reads `outcome.result.content[0]` with types, never a cast.
 *
 * Nothing the server sent is lost: fields the schema does not name are kept as they came (each
 * object has an index signature of JSON values), and a block of a type this revision does not
 * know (a later revision's) is kept as an `UnknownContent`. A block of a known type that does
 * not have that type's shape makes the whole result invalid, as the official SDK's client
 * decides too.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import { keptAs } from "./internal/keptAs.js"
import { JsonObject, JsonValue } from "./Json.js"

/** Whatever else an object holds, kept as it came. */
const rest = Schema.Record({ key: Schema.String, value: JsonValue })

const common = {
  _meta: Schema.optional(JsonObject),
  annotations: Schema.optional(JsonObject),
}

/**
 * @since 0.4.0
 * @category schemas
 */
export const TextContent = Schema.Struct(
  { type: Schema.Literal("text"), text: Schema.String, ...common },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type TextContent = typeof TextContent.Type

/**
 * Base64 `data` of `mimeType`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ImageContent = Schema.Struct(
  { type: Schema.Literal("image"), data: Schema.String, mimeType: Schema.String, ...common },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type ImageContent = typeof ImageContent.Type

/**
 * Base64 `data` of `mimeType`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const AudioContent = Schema.Struct(
  { type: Schema.Literal("audio"), data: Schema.String, mimeType: Schema.String, ...common },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type AudioContent = typeof AudioContent.Type

/**
 * A resource the server can read, named rather than included.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ResourceLink = Schema.Struct(
  {
    type: Schema.Literal("resource_link"),
    uri: Schema.String,
    name: Schema.String,
    title: Schema.optional(Schema.String),
    description: Schema.optional(Schema.String),
    mimeType: Schema.optional(Schema.String),
    size: Schema.optional(Schema.Number),
    ...common,
  },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type ResourceLink = typeof ResourceLink.Type

/**
 * @since 0.4.0
 * @category schemas
 */
export const TextResourceContents = Schema.Struct(
  {
    uri: Schema.String,
    text: Schema.String,
    mimeType: Schema.optional(Schema.String),
    _meta: Schema.optional(JsonObject),
  },
  rest,
)

/**
 * @since 0.4.0
 * @category schemas
 */
export const BlobResourceContents = Schema.Struct(
  {
    uri: Schema.String,
    blob: Schema.String,
    mimeType: Schema.optional(Schema.String),
    _meta: Schema.optional(JsonObject),
  },
  rest,
)

/**
 * A resource included in the result: its text, or its base64 `blob`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const EmbeddedResource = Schema.Struct(
  {
    type: Schema.Literal("resource"),
    resource: Schema.Union(TextResourceContents, BlobResourceContents),
    ...common,
  },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type EmbeddedResource = typeof EmbeddedResource.Type

/**
 * The block types of this revision.
 *
 * @since 0.4.0
 * @category constants
 */
export const knownContentTypes: ReadonlyArray<string> = [
  "text",
  "image",
  "audio",
  "resource_link",
  "resource",
]

/**
 * A block of a type this revision does not define (a later revision's), kept whole in `block`.
 * Its `type` is `"unknown"`, so that checking `block.type === "text"` narrows a `ContentBlock` to
 * `TextContent` alone; `JSON.stringify` writes the block as the server sent it.
 *
 * @since 0.4.0
 * @category models
 */
export type UnknownContent = {
  readonly type: "unknown"
  /** The block as the server sent it; `block.type` is its own type. */
  readonly block: JsonObject
}

/**
 * @since 0.4.0
 * @category constructors
 */
export const unknownContent = (block: JsonObject): UnknownContent =>
  keptAs({ type: "unknown" as const, block }, block)

const isUnknownContent = (value: unknown): value is UnknownContent =>
  typeof value === "object" &&
  value !== null &&
  (value as UnknownContent).type === "unknown" &&
  typeof (value as UnknownContent).block === "object"

const OtherBlock = Schema.Struct(
  {
    type: Schema.String.pipe(
      Schema.filter((type) => !knownContentTypes.includes(type), {
        message: () => "a known content type without that type's fields",
      }),
    ),
  },
  rest,
)

/**
 * A block of a type this revision does not know, decoded as an `UnknownContent`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const UnknownContentFromJson = Schema.transform(
  OtherBlock,
  Schema.declare(isUnknownContent, { identifier: "UnknownContent" }),
  {
    strict: false,
    decode: (block) => unknownContent(block),
    encode: (unknown) => unknown.block,
  },
)

/**
 * @since 0.4.0
 * @category schemas
 */
export const ContentBlock = Schema.Union(
  TextContent,
  ImageContent,
  AudioContent,
  ResourceLink,
  EmbeddedResource,
  UnknownContentFromJson,
)

/**
 * @since 0.4.0
 * @category models
 */
export type ContentBlock = typeof ContentBlock.Type

/**
 * The result of `tools/call`. `isError: true` means the tool ran and reported a failure (the
 * protocol's tool error, as opposed to a JSON-RPC error). `content` is empty on rows written
 * before results were decoded whose result had none.
 *
 * @since 0.4.0
 * @category schemas
 */
export const CallToolResult = Schema.Struct(
  {
    content: Schema.optionalWith(Schema.Array(ContentBlock), { default: () => [] }),
    structuredContent: Schema.optional(JsonObject),
    isError: Schema.optional(Schema.Boolean),
    _meta: Schema.optional(JsonObject),
  },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type CallToolResult = typeof CallToolResult.Type

/**
 * @since 0.4.0
 * @category models
 */
export type CallToolResultEncoded = typeof CallToolResult.Encoded

/**
 * Whether the tool reported a failure (`isError: true`).
 *
 * @since 0.4.0
 * @category predicates
 */
export const isToolError = (result: CallToolResult): boolean => result.isError === true

/**
 * The text of every text block, joined by newlines (empty when there is none).
 *
 * @since 0.4.0
 * @category getters
 */
export const text = (result: CallToolResult): string =>
  result.content
    .filter((block): block is TextContent => block.type === "text")
    .map((block) => block.text)
    .join("\n")

/**
 * @since 0.4.0
 * @category decoding
 */
export const decode = Schema.decodeUnknownEither(CallToolResult)

/**
 * The result as the server sent it (JSON), e.g. to store or print it.
 *
 * @since 0.4.0
 * @category encoding
 */
export const encode: (result: CallToolResult) => CallToolResultEncoded = Schema.encodeSync(CallToolResult)
