/**
 * The companion tools of handle mode: `check_call` looks at a call without waiting and
 * `wait_for_call` waits a bounded time. Both take the handle a tool returned (the call's key,
 * never the server's task id) and only handles of their own conversation.
 */
import type { PromiseClient } from "@mcp-handles/core"
import { jsonSchema, type ToolSet, tool } from "ai"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ToolOutput from "../ToolOutput.js"
import { current, feed, follow } from "./follow.js"

/** @internal */
export const names = ["check_call", "wait_for_call"] as const

/** The longest `wait_for_call` waits, so that a turn of the model never hangs on it. */
export const maxWaitSeconds = 300
const defaultWaitSeconds = 30

const CheckInput = Schema.Struct({ handle: Schema.NonEmptyString })
const WaitInput = Schema.Struct({
  handle: Schema.NonEmptyString,
  seconds: Schema.optional(Schema.Int.pipe(Schema.between(1, maxWaitSeconds))),
})

/** The model's input, decoded at the boundary: the AI SDK reports a failure to the model. */
const validated = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (value: unknown) =>
    Either.match(decode(value), {
      onLeft: (error) => ({
        success: false as const,
        error: new Error(ParseResult.TreeFormatter.formatErrorSync(error)),
      }),
      onRight: (decoded) => ({ success: true as const, value: decoded }),
    })
}

const handleProperty = { type: "string", description: "The handle a tool returned." } as const

/** @internal */
export interface Options {
  readonly scope: string | undefined
  readonly owns: (handle: string) => boolean
  readonly progress: boolean
  readonly route: (key: string) => (() => () => void) | undefined
}

const unknownHandle = (handle: string) =>
  new Error(`No call has the handle ${JSON.stringify(handle)} in this conversation.`)

/** @internal */
export const make = (client: PromiseClient.PromiseTaskClient, options: Options): ToolSet => ({
  check_call: tool({
    description:
      "Looks at a call started earlier, by its handle, without waiting: where it stands, or its result.",
    inputSchema: jsonSchema<typeof CheckInput.Type>(
      {
        type: "object",
        properties: { handle: handleProperty },
        required: ["handle"],
        additionalProperties: false,
      },
      { validate: validated(CheckInput) },
    ),
    execute: async ({ handle }) => {
      if (!options.owns(handle)) throw unknownHandle(handle)
      return await current(client, handle, options.scope, "Still running; look again later.").catch(
        (error) => {
          throw (error as { _tag?: unknown })._tag === "UnknownKey" ? unknownHandle(handle) : error
        },
      )
    },
    toModelOutput: ({ output }) => ToolOutput.toModelOutput(output),
  }),
  wait_for_call: tool({
    description: `Waits for a call started earlier, by its handle, up to \`seconds\` (default ${defaultWaitSeconds}, at most ${maxWaitSeconds}); returns its result, or where it stands if it is still running.`,
    inputSchema: jsonSchema<typeof WaitInput.Type>(
      {
        type: "object",
        properties: {
          handle: handleProperty,
          seconds: { type: "integer", minimum: 1, maximum: maxWaitSeconds },
        },
        required: ["handle"],
        additionalProperties: false,
      },
      { validate: validated(WaitInput) },
    ),
    execute: async function* ({ handle, seconds }, { abortSignal }) {
      if (!options.owns(handle)) throw unknownHandle(handle)
      // Fails with UnknownKey for a handle nobody recorded, before any wait.
      await client.get(handle, options.scope).catch((error) => {
        throw (error as { _tag?: unknown })._tag === "UnknownKey" ? unknownHandle(handle) : error
      })
      const limit = AbortSignal.timeout((seconds ?? defaultWaitSeconds) * 1000)
      const events = options.progress ? feed(client, handle, options.scope) : undefined
      try {
        yield* follow({
          client,
          key: handle,
          scope: options.scope,
          signal: abortSignal === undefined ? limit : AbortSignal.any([abortSignal, limit]),
          feed: events,
          route: options.route(handle),
          stopped: "Still running; wait again, or check later.",
        })
      } finally {
        await events?.close()
      }
    },
    toModelOutput: ({ output }) => ToolOutput.toModelOutput(output),
  }),
})
