/**
 * The companion tools of handle mode: `check_call` looks at a call without waiting and
 * `wait_for_call` waits a bounded time. Both take the handle a tool returned (the call's key,
 * never the server's task id) and only handles of their owner (the conversation, thread or run
 * they are called in).
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as PromiseClient from "../../PromiseClient.js"
import * as Call from "./call.js"
import type * as Output from "./output.js"

export const names = ["check_call", "wait_for_call"] as const

export type Name = (typeof names)[number]

export const isName = (name: string): name is Name => (names as ReadonlyArray<string>).includes(name)

/** The longest `wait_for_call` waits, so that a turn of the model never hangs on it. */
export const maxWaitSeconds = 300
export const defaultWaitSeconds = 30

export const CheckInput = Schema.Struct({ handle: Schema.NonEmptyString })
export const WaitInput = Schema.Struct({
  handle: Schema.NonEmptyString,
  seconds: Schema.optional(Schema.Int.pipe(Schema.between(1, maxWaitSeconds))),
})

export type Input = typeof WaitInput.Type

const handleProperty = { type: "string", description: "The handle a tool returned." } as const

export interface Definition {
  readonly name: Name
  readonly description: string
  readonly inputSchema: {
    readonly type: "object"
    readonly properties: Record<string, Record<string, unknown>>
    readonly required: ReadonlyArray<string>
    readonly additionalProperties: false
  }
}

export const definitions: Readonly<Record<Name, Definition>> = {
  check_call: {
    name: "check_call",
    description:
      "Looks at a call started earlier, by its handle, without waiting: where it stands, or its result.",
    inputSchema: {
      type: "object",
      properties: { handle: handleProperty },
      required: ["handle"],
      additionalProperties: false,
    },
  },
  wait_for_call: {
    name: "wait_for_call",
    description: `Waits for a call started earlier, by its handle, up to \`seconds\` (default ${defaultWaitSeconds}, at most ${maxWaitSeconds}); returns its result, or where it stands if it is still running.`,
    inputSchema: {
      type: "object",
      properties: {
        handle: handleProperty,
        seconds: { type: "integer", minimum: 1, maximum: maxWaitSeconds },
      },
      required: ["handle"],
      additionalProperties: false,
    },
  },
}

export const decode = (name: Name, input: unknown): Either.Either<Input, string> =>
  Either.mapLeft(Schema.decodeUnknownEither(name === "check_call" ? CheckInput : WaitInput)(input), (error) =>
    ParseResult.TreeFormatter.formatErrorSync(error),
  )

/**
 * A part of an adapter's default key as the key writes it. `:` separates a key's parts, so a part
 * writes `%` as `%25` and `:` as `%3A`: no owner's key can be read as another owner's. A part with
 * neither is written as it is, so the keys of such ids are the ones derived before this rule.
 */
export const keyPart = (part: string): string => part.replace(/%/g, "%25").replace(/:/g, "%3A")

/** An adapter's default key: the owner (conversation, thread, run) and the call's parts. */
export const keyOf = (owner: string, parts: ReadonlyArray<string>): string =>
  [owner, ...parts].map(keyPart).join(":")

/** The key the adapters derived before parts were escaped: still the key of calls made then. */
export const legacyKeyOf = (owner: string, parts: ReadonlyArray<string>): string =>
  [owner, ...parts].join(":")

/** `handle` less `prefix`, when it has `parts` non-empty parts. */
const restFits = (handle: string, prefix: string, parts: number): boolean => {
  if (!handle.startsWith(prefix)) return false
  const rest = handle.slice(prefix.length).split(":")
  return rest.length === parts && rest.every((part) => part.length > 0)
}

/**
 * Whether `handle` is a key `keyOf(owner, …)` gives with `parts` parts after the owner. A key
 * derived before parts were escaped, for an owner whose id has a `:` or `%`, is still its own:
 * its parts have no `:` then, so it cannot be another owner's escaped key. (An old key whose
 * call id had a `:` is not recognised: it splits into more parts.)
 */
export const belongsTo = (owner: string, handle: string, parts = 1): boolean =>
  restFits(handle, `${keyPart(owner)}:`, parts) ||
  (keyPart(owner) !== owner && restFits(handle, `${owner}:`, parts))

/**
 * The key a call goes under: a call recorded under the key an older version derived for it
 * (`legacy`, when it differs) is attached to, never launched again under the new one.
 */
export const keyInUse = async (
  client: PromiseClient.PromiseTaskClient,
  key: string,
  legacy: string,
  scope: string | undefined,
): Promise<string> => {
  if (legacy === key) return key
  try {
    await client.get(legacy, scope)
    return legacy
  } catch (error) {
    if (Call.tagOf(error) === "UnknownKey") return key
    throw error
  }
}

export const unknownHandle = (handle: string, within: string): string =>
  `No call has the handle ${JSON.stringify(handle)} in this ${within}.`

export interface Options {
  readonly scope: string | undefined
  /** Whether the handle is one of this owner's calls. */
  readonly owns: (handle: string) => boolean
  /** What the owner is called in a refusal: `conversation`, `thread`, `run`. */
  readonly within: string
}

/** A refusal the model reads (and may correct). */
export interface Refused {
  readonly _tag: "Refused"
  readonly message: string
}

export type Admitted = { readonly _tag: "Admitted"; readonly input: Input; readonly tool: string } | Refused

export const admit = async (
  client: PromiseClient.PromiseTaskClient,
  name: Name,
  input: unknown,
  options: Options,
): Promise<Admitted> => {
  const decoded = decode(name, input)
  if (Either.isLeft(decoded)) return { _tag: "Refused", message: decoded.left }
  const { handle } = decoded.right
  const refused = { _tag: "Refused", message: unknownHandle(handle, options.within) } as const
  if (!options.owns(handle)) return refused
  try {
    const record = await client.get(handle, options.scope)
    return { _tag: "Admitted", input: decoded.right, tool: record.tool }
  } catch (error) {
    if (Call.tagOf(error) === "UnknownKey") return refused
    throw error
  }
}

export const lookAgain = "Still running; look again later."
export const waitAgain = "Still running; wait again, or check later."

export const limit = (input: Input, signal: AbortSignal | undefined): AbortSignal => {
  const timeout = AbortSignal.timeout((input.seconds ?? defaultWaitSeconds) * 1000)
  return signal === undefined ? timeout : AbortSignal.any([signal, timeout])
}

export interface ServeOptions extends Options {
  readonly signal: AbortSignal | undefined
  readonly onInput: Call.SettleOptions["onInput"]
  readonly answer?: Call.SettleOptions["answer"]
}

export type Served = { readonly _tag: "Output"; readonly output: Output.ToolOutput } | Refused

export const serve = async (
  client: PromiseClient.PromiseTaskClient,
  name: Name,
  input: unknown,
  options: ServeOptions,
): Promise<Served> => {
  const admitted = await admit(client, name, input, options)
  if (admitted._tag === "Refused") return admitted
  const { handle } = admitted.input
  if (name === "check_call")
    return { _tag: "Output", output: await Call.current(client, handle, options.scope, lookAgain) }
  const settled = await Call.settle(client, handle, {
    scope: options.scope,
    tool: admitted.tool,
    signal: limit(admitted.input, options.signal),
    onInput: options.onInput,
    answer: options.answer,
  })
  switch (settled._tag) {
    case "Rested":
      return { _tag: "Output", output: settled.output }
    case "Stopped":
      return { _tag: "Output", output: await Call.current(client, handle, options.scope, waitAgain) }
    case "Asked":
      return {
        _tag: "Output",
        output: Call.asking(
          handle,
          settled.requests.map((open) => open.request),
          "Wait or check again once it is answered.",
        ),
      }
  }
}
