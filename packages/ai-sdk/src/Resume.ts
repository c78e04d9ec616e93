/**
 * Picking a run up from its persisted messages. A process killed while a tool ran leaves an
 * assistant message with a tool call and no result; the AI SDK refuses such a history
 * (`MissingToolResultsError`). `resumeToolCalls` executes those calls again through the same
 * tool set, with their original `toolCallId`s: a durable tool derives the same key and attaches
 * to the call already recorded (its task, its result), so nothing launches twice, and the
 * results are returned as a tool message to append before the next `generateText`.
 *
 * ```ts
 * const resumed = await resumeToolCalls({ messages, tools })
 * if (resumed !== undefined) messages.push(resumed)
 * const result = await generateText({ model, tools, messages, stopWhen: isStepCount(5) })
 * ```
 *
 * @since 0.1.0
 */
import type { ModelMessage, ToolCallPart, ToolModelMessage, ToolResultPart, ToolSet } from "ai"

/**
 * The tool calls of `messages` that have no result yet (and were not executed by the provider).
 *
 * @since 0.1.0
 * @category getters
 */
export const pendingToolCalls = (messages: ReadonlyArray<ModelMessage>): ReadonlyArray<ToolCallPart> => {
  const answered = new Set<string>()
  for (const message of messages) {
    if (message.role !== "tool") continue
    for (const part of message.content) if (part.type === "tool-result") answered.add(part.toolCallId)
  }
  const pending: Array<ToolCallPart> = []
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue
    for (const part of message.content) {
      if (part.type === "tool-call" && part.providerExecuted !== true && !answered.has(part.toolCallId))
        pending.push(part)
    }
  }
  return pending
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ResumeOptions {
  readonly messages: ReadonlyArray<ModelMessage>
  /** The tool set the run uses (`mcpTools`, with the same conversation id), other tools too. */
  readonly tools: ToolSet
  readonly abortSignal?: AbortSignal | undefined
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

const resultOf = async (
  tools: ToolSet,
  call: ToolCallPart,
  options: ResumeOptions,
): Promise<ToolResultPart | undefined> => {
  const tool = tools[call.toolName]
  if (tool?.execute === undefined) return undefined
  const output = async () => {
    const produced = tool.execute?.(call.input, {
      toolCallId: call.toolCallId,
      messages: [...options.messages],
      context: undefined,
      ...(options.abortSignal === undefined ? {} : { abortSignal: options.abortSignal }),
    })
    // An iterable's last value is the result; the ones before it were preliminary.
    if (produced !== null && typeof produced === "object" && Symbol.asyncIterator in produced) {
      let last: unknown
      for await (const value of produced as AsyncIterable<unknown>) last = value
      return last
    }
    return await produced
  }
  const part = (result: ToolResultPart["output"]): ToolResultPart => ({
    type: "tool-result",
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: result,
  })
  try {
    const value = await output()
    return part(
      tool.toModelOutput === undefined
        ? { type: "json", value: (value ?? null) as never }
        : await tool.toModelOutput({ toolCallId: call.toolCallId, input: call.input, output: value }),
    )
  } catch (error) {
    // As the AI SDK reports a tool that threw: an error the model can read.
    return part({ type: "error-text", value: messageOf(error) })
  }
}

/**
 * Executes the pending tool calls of `messages` (see `pendingToolCalls`) whose tools are in
 * `tools`, and returns their results as one tool message, or undefined when none was pending.
 * Calls to tools not in the set are left as they are.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resumeToolCalls = async (options: ResumeOptions): Promise<ToolModelMessage | undefined> => {
  const results = await Promise.all(
    pendingToolCalls(options.messages).map((call) => resultOf(options.tools, call, options)),
  )
  const content = results.filter((result) => result !== undefined)
  return content.length === 0 ? undefined : { role: "tool", content }
}
