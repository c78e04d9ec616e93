/**
 * What a server asks of the client while a call waits for input (`input_required`): an
 * elicitation (a form, or a URL to visit), a sampling request, or the client's roots. Decoded
 * where it reaches the app (the input handler, events), and the one place that says whether an
 * answer fits what was asked: the client checks every answer here before it is stored, and the
 * CLI checks each field a person types with the same rule.
 *
 * @since 0.4.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { keptAs } from "./internal/keptAs.js"
import { JsonObject, JsonValue } from "./Json.js"

/** Whatever else an object holds, kept as it came. */
const rest = Schema.Record({ key: Schema.String, value: JsonValue })

const Choice = Schema.Struct({ const: Schema.String, title: Schema.optional(Schema.String) }, rest)

/**
 * One field of an elicitation form (the protocol's `PrimitiveSchemaDefinition`: a string,
 * number, integer or boolean, a single choice or several), with the constraints an answer must
 * meet.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Field = Schema.Struct(
  {
    type: Schema.optional(Schema.String),
    title: Schema.optional(Schema.String),
    description: Schema.optional(Schema.String),
    default: Schema.optional(JsonValue),
    enum: Schema.optional(Schema.Array(Schema.String)),
    enumNames: Schema.optional(Schema.Array(Schema.String)),
    oneOf: Schema.optional(Schema.Array(Choice)),
    items: Schema.optional(
      Schema.Struct(
        {
          type: Schema.optional(Schema.String),
          enum: Schema.optional(Schema.Array(Schema.String)),
          anyOf: Schema.optional(Schema.Array(Choice)),
        },
        rest,
      ),
    ),
    minimum: Schema.optional(Schema.Number),
    maximum: Schema.optional(Schema.Number),
    minLength: Schema.optional(Schema.Number),
    maxLength: Schema.optional(Schema.Number),
    minItems: Schema.optional(Schema.Number),
    maxItems: Schema.optional(Schema.Number),
    format: Schema.optional(Schema.String),
  },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type Field = typeof Field.Type

/**
 * `elicitation/create` in form mode (the default mode): fill in `requestedSchema`'s fields.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ElicitationForm = Schema.Struct(
  {
    method: Schema.Literal("elicitation/create"),
    params: Schema.Struct(
      {
        mode: Schema.optional(Schema.Literal("form")),
        message: Schema.String,
        requestedSchema: Schema.Struct(
          {
            type: Schema.optional(Schema.Literal("object")),
            // Required by the revision; a form that names no fields is read as one that takes any.
            properties: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Field }), {
              default: () => ({}),
            }),
            required: Schema.optional(Schema.Array(Schema.String)),
          },
          rest,
        ),
      },
      rest,
    ),
  },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type ElicitationForm = typeof ElicitationForm.Type

/**
 * `elicitation/create` in URL mode: the user visits `url` (out of band), then accepts.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ElicitationUrl = Schema.Struct(
  {
    method: Schema.Literal("elicitation/create"),
    params: Schema.Struct(
      {
        mode: Schema.Literal("url"),
        message: Schema.String,
        url: Schema.String,
        elicitationId: Schema.optional(Schema.String),
      },
      rest,
    ),
  },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type ElicitationUrl = typeof ElicitationUrl.Type

/**
 * `sampling/createMessage`: the server asks the client's model for a message.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Sampling = Schema.Struct(
  {
    method: Schema.Literal("sampling/createMessage"),
    params: Schema.Struct(
      {
        messages: Schema.Array(JsonObject),
        maxTokens: Schema.Number,
        systemPrompt: Schema.optional(Schema.String),
      },
      rest,
    ),
  },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type Sampling = typeof Sampling.Type

/**
 * `roots/list`: the directories or files the client lets the server work on.
 *
 * @since 0.4.0
 * @category schemas
 */
export const RootsList = Schema.Struct(
  { method: Schema.Literal("roots/list"), params: Schema.optional(JsonObject) },
  rest,
)

/**
 * @since 0.4.0
 * @category models
 */
export type RootsList = typeof RootsList.Type

/**
 * A request this client cannot read (another method, or one of the above that does not have
 * its shape), kept whole in `request`. Any JSON answers it.
 *
 * @since 0.4.0
 * @category models
 */
export type UnknownRequest = {
  readonly method: "unknown"
  /** The request as the server sent it. */
  readonly request: JsonValue
}

/**
 * @since 0.4.0
 * @category constructors
 */
export const unknownRequest = (request: JsonValue): UnknownRequest =>
  keptAs({ method: "unknown" as const, request }, request)

/**
 * @since 0.4.0
 * @category models
 */
export type ServerRequest = ElicitationForm | ElicitationUrl | Sampling | RootsList | UnknownRequest

const known = Schema.Union(ElicitationUrl, ElicitationForm, Sampling, RootsList)
const decodeKnown = Schema.decodeUnknownEither(known)

/**
 * Reads a request as the server sent it; never fails (see `UnknownRequest`).
 *
 * @since 0.4.0
 * @category decoding
 */
export const decode = (request: JsonValue): ServerRequest =>
  Either.getOrElse(decodeKnown(request), (): ServerRequest => unknownRequest(request))

/**
 * The request's message for people (or its method when it has none).
 *
 * @since 0.4.0
 * @category getters
 */
export const message = (request: ServerRequest): string =>
  request.method === "unknown"
    ? JSON.stringify(request.request)
    : request.method === "elicitation/create"
      ? request.params.message
      : request.method

// ---------------------------------------------------------------------------------------------
// Checking answers
// ---------------------------------------------------------------------------------------------

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The values a choice field allows (`enum`, titled `oneOf`, or a multi-choice's items), if it is one.
 *
 * @since 0.4.0
 * @category getters
 */
export const choices = (
  field: Field,
): ReadonlyArray<{ readonly value: string; readonly title: string }> | undefined => {
  const titled = (options: ReadonlyArray<typeof Choice.Type>) =>
    options.map((o) => ({ value: o.const, title: o.title ?? o.const }))
  const listed = (values: ReadonlyArray<string>, names: ReadonlyArray<string> = []) =>
    values.map((value, i) => ({ value, title: names[i] ?? value }))
  if (field.type === "array") {
    if (field.items?.enum !== undefined) return listed(field.items.enum)
    if (field.items?.anyOf !== undefined) return titled(field.items.anyOf)
    return undefined
  }
  if (field.enum !== undefined) return listed(field.enum, field.enumNames)
  if (field.oneOf !== undefined) return titled(field.oneOf)
  return undefined
}

const formats: Readonly<Record<string, (text: string) => boolean>> = {
  email: (text) => /^[^\s@]+@[^\s@]+$/.test(text),
  uri: (text) => URL.canParse(text),
  date: (text) => /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text)),
  "date-time": (text) => /^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(Date.parse(text)),
}

/**
 * Why `value` does not fit `field` (a few words for people), or undefined when it does.
 *
 * @since 0.4.0
 * @category checking
 */
export const fieldProblem = (field: Field, value: JsonValue): string | undefined => {
  const allowed = choices(field)
  if (field.type === "array") {
    if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) return "a list of strings"
    if (allowed !== undefined && !value.every((v) => allowed.some((c) => c.value === v)))
      return "not one of the choices"
    if (field.minItems !== undefined && value.length < field.minItems)
      return `at least ${field.minItems} items`
    if (field.maxItems !== undefined && value.length > field.maxItems)
      return `at most ${field.maxItems} items`
    return undefined
  }
  switch (field.type) {
    case "boolean":
      return typeof value === "boolean" ? undefined : "yes or no"
    case "number":
    case "integer": {
      if (typeof value !== "number") return "not a number"
      if (field.type === "integer" && !Number.isInteger(value)) return "not a whole number"
      if (field.minimum !== undefined && value < field.minimum) return `at least ${field.minimum}`
      if (field.maximum !== undefined && value > field.maximum) return `at most ${field.maximum}`
      return undefined
    }
    case "string": {
      if (typeof value !== "string") return "not text"
      if (allowed !== undefined)
        return allowed.some((c) => c.value === value) ? undefined : "not one of the choices"
      if (field.minLength !== undefined && value.length < field.minLength)
        return `at least ${field.minLength} characters`
      if (field.maxLength !== undefined && value.length > field.maxLength)
        return `at most ${field.maxLength} characters`
      const format = field.format === undefined ? undefined : formats[field.format]
      if (format !== undefined && !format(value)) return `not a valid ${field.format}`
      return undefined
    }
    default:
      // A type this revision does not define: any JSON.
      return undefined
  }
}

const actions: ReadonlyArray<string> = ["accept", "decline", "cancel"]

const elicitationProblems = (request: ElicitationForm | ElicitationUrl, answer: JsonValue): Array<string> => {
  if (!isObject(answer) || typeof answer.action !== "string" || !actions.includes(answer.action))
    return ['an elicitation answer is {"action": "accept" | "decline" | "cancel", ...}']
  if (answer.action !== "accept" || request.params.mode === "url") return []
  const schema = request.params.requestedSchema
  const content = answer.content ?? {}
  if (!isObject(content)) return ["content must be an object of the form's fields"]
  const problems: Array<string> = []
  for (const name of schema.required ?? [])
    if (!Object.hasOwn(content, name)) problems.push(`the required field ${JSON.stringify(name)} is missing`)
  for (const [name, value] of Object.entries(content)) {
    const field = schema.properties[name]
    const names = Object.keys(schema.properties)
    if (field === undefined) {
      if (names.length > 0)
        problems.push(`${JSON.stringify(name)} is not a field of the form (its fields: ${names.join(", ")})`)
      continue
    }
    const problem = fieldProblem(field, value)
    if (problem !== undefined) problems.push(`${JSON.stringify(name)}: ${problem}`)
  }
  return problems
}

/**
 * Why `answer` does not answer `request` (empty when it does): an elicitation needs an action,
 * and an accepted form every required field, no field the form does not have, and each value
 * of its field's type and within its constraints; a sampling answer a `role`, `content` and
 * `model`; a roots answer a list of `roots` with a `uri` each. An unknown request takes any JSON.
 *
 * @since 0.4.0
 * @category checking
 */
export const answerProblems = (request: ServerRequest, answer: JsonValue): ReadonlyArray<string> => {
  switch (request.method) {
    case "elicitation/create":
      return elicitationProblems(request, answer)
    case "sampling/createMessage":
      return isObject(answer) &&
        (answer.role === "assistant" || answer.role === "user") &&
        typeof answer.model === "string" &&
        answer.content !== undefined
        ? []
        : ['a sampling answer is {"role", "content", "model"}']
    case "roots/list":
      return isObject(answer) &&
        Array.isArray(answer.roots) &&
        answer.roots.every((root) => isObject(root) && typeof root.uri === "string")
        ? []
        : ['a roots answer is {"roots": [{"uri": ...}, ...]}']
    case "unknown":
      return []
  }
}
