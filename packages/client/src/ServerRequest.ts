/**
 * What a server asks while a call waits for input, as plain types: narrow on `method`.
 * Every object keeps the fields the server sent besides these.
 *
 * @since 0.2.0
 */
import type { JsonObject, JsonValue } from "./Json.js"

/** Whatever else an object holds, kept as it came. */
type Rest = { readonly [K in string]: JsonValue }

/** Its fields and `Rest` as one object type (as core's schemas declare it). */
type Struct<A> = { [K in keyof (Rest & A)]: (Rest & A)[K] } extends infer B ? B : never

type Choice = Struct<{ readonly const: string; readonly title?: string | undefined }>

/**
 * One field of an elicitation form, with the constraints an answer must meet.
 *
 * @since 0.2.0
 * @category models
 */
export type Field = Struct<{
  readonly type?: string | undefined
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly default?: JsonValue | undefined
  readonly enum?: ReadonlyArray<string> | undefined
  readonly enumNames?: ReadonlyArray<string> | undefined
  readonly oneOf?: ReadonlyArray<Choice> | undefined
  readonly items?:
    | Struct<{
        readonly type?: string | undefined
        readonly enum?: ReadonlyArray<string> | undefined
        readonly anyOf?: ReadonlyArray<Choice> | undefined
      }>
    | undefined
  readonly minimum?: number | undefined
  readonly maximum?: number | undefined
  readonly minLength?: number | undefined
  readonly maxLength?: number | undefined
  readonly minItems?: number | undefined
  readonly maxItems?: number | undefined
  readonly format?: string | undefined
}>

/**
 * `elicitation/create` in form mode: fill in `requestedSchema`'s fields.
 *
 * @since 0.2.0
 * @category models
 */
export type ElicitationForm = Struct<{
  readonly method: "elicitation/create"
  readonly params: Struct<{
    readonly mode?: "form" | undefined
    readonly message: string
    readonly requestedSchema: Struct<{
      readonly type?: "object" | undefined
      readonly properties: { readonly [x: string]: Field }
      readonly required?: ReadonlyArray<string> | undefined
    }>
  }>
}>

/**
 * `elicitation/create` in URL mode: the user visits `url`, then accepts.
 *
 * @since 0.2.0
 * @category models
 */
export type ElicitationUrl = Struct<{
  readonly method: "elicitation/create"
  readonly params: Struct<{
    readonly mode: "url"
    readonly message: string
    readonly url: string
    readonly elicitationId?: string | undefined
  }>
}>

/**
 * `sampling/createMessage`: the server asks the client's model for a message.
 *
 * @since 0.2.0
 * @category models
 */
export type Sampling = Struct<{
  readonly method: "sampling/createMessage"
  readonly params: Struct<{
    readonly messages: ReadonlyArray<JsonObject>
    readonly maxTokens: number
    readonly systemPrompt?: string | undefined
  }>
}>

/**
 * `roots/list`: the directories or files the client lets the server work on.
 *
 * @since 0.2.0
 * @category models
 */
export type RootsList = Struct<{
  readonly method: "roots/list"
  readonly params?: JsonObject | undefined
}>

/**
 * A request this client cannot read, kept whole in `request`.
 *
 * @since 0.2.0
 * @category models
 */
export type UnknownRequest = { readonly method: "unknown"; readonly request: JsonValue }

/**
 * @since 0.2.0
 * @category models
 */
export type ServerRequest = ElicitationForm | ElicitationUrl | Sampling | RootsList | UnknownRequest
