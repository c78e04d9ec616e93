/**
 * The agent side of the tests: the AI SDK's own mock model, scripted from the prompt it is given
 * (so a run restarted from its messages behaves as the first one would have), and a client on
 * an in-process fake server.
 */
import { openTaskClient, type PromiseClient } from "@mcp-handles/core"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { MemoryStore } from "@mcp-handles/store-memory"
import {
  type GenerateTextResult,
  generateText,
  isStepCount,
  type ModelMessage,
  type Output,
  type ToolSet,
} from "ai"
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test"
import { expect } from "vitest"
import { InputRouter } from "../src/index.js"

type Prompt = MockLanguageModelV4["doGenerateCalls"][number]["prompt"]
type ToolResultOutput = Extract<Prompt[number], { role: "tool" }>["content"][number] extends infer P
  ? P extends { type: "tool-result"; output: infer O }
    ? O
    : never
  : never

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

/** What the model read in a tool result, as one line. */
export const readOutput = (output: ToolResultOutput): string => {
  switch (output.type) {
    case "text":
      return output.value
    case "error-text":
      return `error: ${output.value}`
    case "json":
    case "error-json":
      return JSON.stringify(output.value)
    case "content":
      return output.value.map((part) => (part.type === "text" ? part.text : part.type)).join(" ")
    default:
      return output.type
  }
}

/** A step of the model: the tool calls it makes, given what it read last (undefined at first). */
export type Script = (
  lastResult: string | undefined,
  step: number,
) =>
  | ReadonlyArray<{ readonly toolName: string; readonly input: object; readonly toolCallId?: string }>
  | undefined

type Generated = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer P> ? P : never

/**
 * The AI SDK's mock model. While `script` returns tool calls, it makes them; once it returns
 * none, it answers `final: <what it read last>`. It streams the same answers (`streamText`).
 */
export const scriptedModel = (script: Script) => {
  let step = 0
  const generate = async ({ prompt }: { readonly prompt: Prompt }): Promise<Generated> => {
    const last = prompt.at(-1)
    const read =
      last?.role === "tool"
        ? last.content
            .flatMap((part) => (part.type === "tool-result" ? [readOutput(part.output)] : []))
            .join(" | ")
        : undefined
    const calls = script(read, step++) ?? []
    return {
      content:
        calls.length === 0
          ? [{ type: "text", text: `final: ${read ?? "nothing"}` }]
          : calls.map((call, at) => ({
              type: "tool-call" as const,
              toolCallId: call.toolCallId ?? `call-${step}-${at}`,
              toolName: call.toolName,
              input: JSON.stringify(call.input),
            })),
      finishReason: { unified: calls.length === 0 ? "stop" : "tool-calls", raw: undefined },
      usage,
      warnings: [],
    }
  }
  return new MockLanguageModelV4({
    doGenerate: generate,
    doStream: async (options) => {
      const generated = await generate(options)
      const parts = generated.content.flatMap((part): ReadonlyArray<StreamPart> => {
        if (part.type === "tool-call") return [part]
        if (part.type !== "text") return []
        return [
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: part.text },
          { type: "text-end", id: "t" },
        ]
      })
      const finish: StreamPart = {
        type: "finish",
        finishReason: generated.finishReason,
        usage: generated.usage,
      }
      return { stream: convertArrayToReadableStream([...parts, finish]) }
    },
  })
}

/** One tool call, then the final answer. */
export const oneCall =
  (toolName: string, input: object = {}, toolCallId = "call-1"): Script =>
  (_, step) =>
    step === 0 ? [{ toolName, input, toolCallId }] : undefined

/** `generateText` with a model that makes one tool call, then answers with what it read. */
export const callOnce = (
  tools: ToolSet,
  call: { readonly toolName: string; readonly input?: object; readonly toolCallId?: string },
  settings: Omit<Parameters<typeof generateText>[0], "model" | "tools" | "prompt" | "messages"> = {},
): Promise<GenerateTextResult<ToolSet, Record<string, unknown>, Output.Output<string, string>>> =>
  generateText({
    model: scriptedModel(oneCall(call.toolName, call.input, call.toolCallId)),
    tools,
    prompt: "go",
    stopWhen: isStepCount(4),
    ...settings,
  })

/** A task that asks to confirm (one elicitation, key `confirm`) and says what it was told. */
export const confirmDelete: Config.Tool = {
  name: "confirm_delete",
  shape: "task",
  durationMs: 200,
  pollIntervalMs: 50,
  inputSteps: [
    {
      atMs: 50,
      requests: {
        confirm: {
          method: "elicitation/create",
          params: {
            message: "Delete {{args.file|it}}?",
            requestedSchema: {
              type: "object",
              properties: { confirmed: { type: "boolean" } },
              required: ["confirmed"],
            },
          },
        },
      },
    },
  ],
  outcome: { kind: "result", text: "deleted {{args.file|it}}: {{inputs.confirm.content.confirmed}}" },
}

/**
 * A run stopped mid-call, as a killed process would be: its tool call is in `messages` (written
 * before the tool ran) and its row reached `status`; then the run is aborted.
 */
export const stopMidCall = async (
  client: PromiseClient.PromiseTaskClient,
  tools: ToolSet,
  messages: Array<ModelMessage>,
  call: { readonly toolName: string; readonly input?: object; readonly key: string; readonly status: string },
) => {
  const stop = new AbortController()
  const running = generateText({
    model: scriptedModel(oneCall(call.toolName, call.input)),
    tools,
    messages,
    stopWhen: isStepCount(4),
    abortSignal: stop.signal,
    onToolExecutionStart: ({ toolCall }) => {
      const { toolCallId, toolName, input } = toolCall
      messages.push({ role: "assistant", content: [{ type: "tool-call", toolCallId, toolName, input }] })
    },
  })
  await expect.poll(async () => (await client.get(call.key).catch(() => undefined))?.status).toBe(call.status)
  stop.abort()
  await expect(running).rejects.toThrow()
}

let conversations = 0
/** A conversation id of its own for each run, so keys never meet across tests. */
export const conversation = () => `conv-${process.pid}-${++conversations}`

/** A fake server in process and a client on it, with an input router. */
export const setup = (config: Config.Config) => {
  const server = FakeServer.unsafeMake(config)
  const input = InputRouter.make()
  const open = () =>
    openTaskClient({
      store: MemoryStore.layer,
      servers: [{ name: "fake", url: "http://fake.test/mcp" }],
      http: { fetch: (request, init) => server.handler(new Request(request, init)) },
      polling: { minIntervalMs: 50 },
      onInputRequired: input.onInputRequired,
    })
  return { server, input, open }
}
