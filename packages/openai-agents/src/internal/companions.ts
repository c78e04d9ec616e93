/**
 * The companion tools of handle mode: `check_call` looks at a call without waiting and
 * `wait_for_call` waits a bounded time. The server lists them beside its own tools and serves
 * them in `callTool`. Both take the handle a tool returned (the call's key, never the server's
 * task id) and only handles of their own run.
 */
import type { Json, PromiseClient, ServerRequest } from "@mcp-handles/core"
import type { MCPServer } from "@openai/agents-core"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ToolOutput from "../ToolOutput.js"
import * as Follow from "./follow.js"

/** @internal */
export const names: ReadonlyArray<string> = ["check_call", "wait_for_call"]

/** The longest `wait_for_call` waits, so that a turn of the model never hangs on it. */
export const maxWaitSeconds = 300
const defaultWaitSeconds = 30

const CheckInput = Schema.Struct({ handle: Schema.NonEmptyString })
const WaitInput = Schema.Struct({
  handle: Schema.NonEmptyString,
  seconds: Schema.optional(Schema.Int.pipe(Schema.between(1, maxWaitSeconds))),
})

const handleProperty = { type: "string", description: "The handle a tool returned." } as const

type MCPTool = Awaited<ReturnType<MCPServer["listTools"]>>[number]

/** The companions as `listTools` gives them to the SDK. */
export const tools = (): Array<MCPTool> => [
  {
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
  {
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
]

/** @internal */
export interface Call {
  readonly client: PromiseClient.PromiseTaskClient
  readonly scope: string | undefined
  readonly tool: string
  readonly args: Record<string, unknown>
  readonly owns: (handle: string) => boolean
  readonly signal: AbortSignal | undefined
  readonly onInput: ((request: PromiseClient.PromiseInputRequest) => Promise<Json.JsonInput>) | undefined
}

const unknownHandle = (handle: string) =>
  ToolOutput.refused(`No call has the handle ${JSON.stringify(handle)} in this run.`)

/**
 * Serves a companion call. Its input is decoded here (the SDK does not check it against the
 * schema); a bad input, a handle of another run or one nobody recorded is a refusal the model
 * reads.
 */
export const call = async (call: Call): Promise<ToolOutput.CallToolResult> => {
  const schema = call.tool === "check_call" ? CheckInput : WaitInput
  const decoded = Schema.decodeUnknownEither(schema)(call.args)
  if (Either.isLeft(decoded))
    return ToolOutput.refused(ParseResult.TreeFormatter.formatErrorSync(decoded.left))
  const { handle } = decoded.right
  if (!call.owns(handle)) return unknownHandle(handle)
  let tool: string
  try {
    tool = (await call.client.get(handle, call.scope)).tool
  } catch (error) {
    if (Follow.tagOf(error) === "UnknownKey") return unknownHandle(handle)
    throw error
  }
  if (call.tool === "check_call")
    return await Follow.current(call.client, handle, call.scope, "Still running; look again later.")
  const { seconds } = decoded.right as { readonly seconds?: number | undefined }
  const limit = AbortSignal.timeout((seconds ?? defaultWaitSeconds) * 1000)
  const signal = call.signal === undefined ? limit : AbortSignal.any([call.signal, limit])
  const stopped = "Still running; wait again, or check later."
  for (;;) {
    try {
      return ToolOutput.fromOutcome(await call.client.settle(handle, call.scope, { signal }))
    } catch (error) {
      if (signal.aborted) return await Follow.current(call.client, handle, call.scope, stopped)
      if (Follow.tagOf(error) !== "InputRequired") throw error
      const requests = (
        error as {
          readonly requests: ReadonlyArray<{
            readonly inputKey: string
            readonly request: ServerRequest.ServerRequest
          }>
        }
      ).requests
      if (call.onInput === undefined)
        return Follow.asking(
          handle,
          requests.map((open) => open.request),
          "Wait or check again once it is answered.",
        )
      await Follow.answer({ ...call, key: handle, tool }, requests)
    }
  }
}
