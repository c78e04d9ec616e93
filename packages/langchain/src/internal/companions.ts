/**
 * The companion tools of handle mode: `check_call` looks at a call without waiting and
 * `wait_for_call` waits a bounded time. Both take the handle a tool returned (the call's key,
 * never the server's task id) and only handles of their own thread.
 *
 * A question of the server is never an `interrupt()` here: a companion runs in a LangGraph task
 * of its own, a later one than the tool that started the call, so a resumed graph would re-run it
 * with no interrupt to replay and no way to tell which answer belongs to which question. It
 * reports `input_required` with the question instead, or answers through `onInput` when there is
 * one; the answer itself goes through `client.answer` (checked, stored before it is sent, once).
 */
import { ToolMessage } from "@langchain/core/messages"
import { type DynamicStructuredTool, type ToolRunnableConfig, tool } from "@langchain/core/tools"
import type { Json, PromiseClient, ServerRequest } from "@mcp-handles/core"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ToolOutput from "../ToolOutput.js"
import * as Handoff from "./handoff.js"

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

const handleProperty = { type: "string", description: "The handle a tool returned." } as const

/** @internal */
export interface Options {
  readonly scope: string | undefined
  /** The thread of a run, or undefined when it has none (the tool refuses: `MissingThreadId`). */
  readonly threadOf: (config: ToolRunnableConfig) => string | undefined
  readonly missingThread: (tool: string) => Error
  readonly owns: (threadId: string, handle: string) => boolean
  readonly answer: (key: string, inputKey: string, response: unknown) => Promise<void>
  readonly onInput:
    | ((
        request: PromiseClient.PromiseInputRequest & { readonly threadId: string },
      ) => Promise<Json.JsonInput>)
    | undefined
}

const tagOf = (error: unknown): unknown => (error as { _tag?: unknown } | null)?._tag

/** A ToolMessage of a companion: what the model reads, and the `ToolOutput` as its artifact. */
const messageOf = (output: ToolOutput.ToolOutput, name: string, toolCallId: string): ToolMessage => {
  const { content, isError } = ToolOutput.toContent(output)
  return new ToolMessage({
    content: typeof content === "string" ? content : [...content],
    status: isError ? "error" : "success",
    tool_call_id: toolCallId,
    name,
    artifact: output,
  })
}

/** A refusal the model reads (and may correct), never a thrown error that would end the run. */
const refusal = (text: string, name: string, toolCallId: string): ToolMessage =>
  new ToolMessage({ content: text, status: "error", tool_call_id: toolCallId, name })

const unknownHandle = (handle: string) => `No call has the handle ${JSON.stringify(handle)} in this thread.`

/** @internal */
export const make = (
  client: PromiseClient.PromiseTaskClient,
  options: Options,
): Array<DynamicStructuredTool> => {
  const { scope } = options

  /**
   * Decodes the model's input and checks the handle belongs to this thread and is on record;
   * gives the decoded input, or the refusal to return.
   */
  const admit = async <A extends { readonly handle: string }, I>(
    schema: Schema.Schema<A, I>,
    name: string,
    input: unknown,
    config: ToolRunnableConfig,
  ): Promise<{ readonly input: A; readonly threadId: string } | ToolMessage> => {
    const toolCallId = config.toolCall?.id ?? ""
    const threadId = options.threadOf(config)
    if (threadId === undefined) throw options.missingThread(name)
    const decoded = Schema.decodeUnknownEither(schema)(input)
    if (Either.isLeft(decoded))
      return refusal(ParseResult.TreeFormatter.formatErrorSync(decoded.left), name, toolCallId)
    const { handle } = decoded.right
    if (!options.owns(threadId, handle)) return refusal(unknownHandle(handle), name, toolCallId)
    try {
      await client.get(handle, scope)
    } catch (error) {
      if (tagOf(error) === "UnknownKey") return refusal(unknownHandle(handle), name, toolCallId)
      throw error
    }
    return { input: decoded.right, threadId }
  }

  const check = tool(
    async (input: unknown, config: ToolRunnableConfig): Promise<ToolMessage> => {
      const admitted = await admit(CheckInput, "check_call", input, config)
      if (admitted instanceof ToolMessage) return admitted
      const { handle } = admitted.input
      const output = await Handoff.current(client, handle, scope, "Still running; look again later.")
      return messageOf(output, "check_call", config.toolCall?.id ?? "")
    },
    {
      name: "check_call",
      description:
        "Looks at a call started earlier, by its handle, without waiting: where it stands, or its result.",
      schema: {
        type: "object",
        properties: { handle: handleProperty },
        required: ["handle"],
        additionalProperties: false,
      },
    },
  ) as DynamicStructuredTool

  const waitFor = tool(
    async (input: unknown, config: ToolRunnableConfig): Promise<ToolMessage> => {
      const admitted = await admit(WaitInput, "wait_for_call", input, config)
      if (admitted instanceof ToolMessage) return admitted
      const { handle, seconds } = admitted.input
      const limit = AbortSignal.timeout((seconds ?? defaultWaitSeconds) * 1000)
      const signal = config.signal === undefined ? limit : AbortSignal.any([config.signal, limit])
      const stopped = "Still running; wait again, or check later."
      let output: ToolOutput.ToolOutput | undefined
      while (output === undefined) {
        try {
          output = ToolOutput.fromOutcome(await client.settle(handle, scope, { signal }))
        } catch (error) {
          if (signal.aborted) output = await Handoff.current(client, handle, scope, stopped)
          else if (tagOf(error) !== "InputRequired") throw error
          else {
            const requests = (
              error as {
                readonly requests: ReadonlyArray<{
                  readonly inputKey: string
                  readonly request: ServerRequest.ServerRequest
                }>
              }
            ).requests
            const onInput = options.onInput
            if (onInput === undefined)
              output = Handoff.asking(
                handle,
                requests.map((open) => open.request),
                "Wait or check again once it is answered.",
              )
            else {
              const tool = (await client.get(handle, scope)).tool
              for (const open of requests) {
                const response = await onInput({
                  scope: scope ?? "",
                  key: handle,
                  tool,
                  inputKey: open.inputKey,
                  request: open.request,
                  threadId: admitted.threadId,
                } as PromiseClient.PromiseInputRequest & { readonly threadId: string })
                await options.answer(handle, open.inputKey, response)
              }
            }
          }
        }
      }
      return messageOf(output, "wait_for_call", config.toolCall?.id ?? "")
    },
    {
      name: "wait_for_call",
      description: `Waits for a call started earlier, by its handle, up to \`seconds\` (default ${defaultWaitSeconds}, at most ${maxWaitSeconds}); returns its result, or where it stands if it is still running.`,
      schema: {
        type: "object",
        properties: {
          handle: handleProperty,
          seconds: { type: "integer", minimum: 1, maximum: maxWaitSeconds },
        },
        required: ["handle"],
        additionalProperties: false,
      },
    },
  ) as DynamicStructuredTool

  return [check, waitFor]
}
