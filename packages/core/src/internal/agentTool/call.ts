/**
 * One durable tool call as an agent framework makes it: launched without waiting past an abort,
 * waited on while its questions are answered, and looked at where it stands when the wait
 * stopped. Framework-free: each adapter wraps what these give in its framework's shape.
 */
import type { JsonInput } from "../../Json.js"
import * as Outcome from "../../Outcome.js"
import type * as PromiseClient from "../../PromiseClient.js"
import * as ServerRequest from "../../ServerRequest.js"
import type * as TaskClient from "../../TaskClient.js"
import type * as Wire from "../../Wire.js"
import * as Output from "./output.js"

export const tagOf = (error: unknown): unknown => (error as { _tag?: unknown } | null)?._tag

export type Launched =
  /** The dispatch was answered; `rests` when the call rests already (a direct answer, an earlier end). */
  | { readonly _tag: "Launched"; readonly rests: boolean }
  /** `signal` aborted first; `calling` settles once the dispatch does. */
  | { readonly _tag: "Aborted"; readonly calling: Promise<unknown> }

export const launch = async (
  client: PromiseClient.PromiseTaskClient,
  options: { readonly server: string; readonly scope?: string | undefined },
  tool: string,
  input: unknown,
  key: string,
  signal: AbortSignal | undefined,
): Promise<Launched> => {
  const scope = options.scope === undefined ? {} : { scope: options.scope }
  const calling = client.callTool(options.server, tool, input, { key, ...scope }).then(
    (handle): Launched => ({
      _tag: "Launched",
      rests: Output.runningStatus(handle.record.status) === undefined,
    }),
  )
  if (signal === undefined) return calling
  // A call still being dispatched when the wait is given up on must not reject unheard.
  calling.catch(() => undefined)
  // An abort event has fired already, or never will for this signal.
  if (signal.aborted) return { _tag: "Aborted", calling }
  let onAbort = () => {}
  const aborted = new Promise<Launched>((resolve) => {
    onAbort = () => resolve({ _tag: "Aborted", calling })
    signal.addEventListener("abort", onAbort, { once: true })
  })
  try {
    return await Promise.race([calling, aborted])
  } finally {
    signal.removeEventListener("abort", onAbort)
  }
}

export const started =
  "Started; it runs on under this handle. Call wait_for_call with the handle to wait for its result, or check_call to look without waiting."

export const stopped = (companions: boolean, again?: string): string =>
  companions
    ? "Stopped waiting; the call runs on under this handle. Call wait_for_call or check_call with the handle to get its result."
    : `Stopped waiting; the call runs on and its result is kept under this handle. Do not call the tool again for it${again === undefined ? "" : `: ${again}`}.`

export const describe = (info: Wire.ToolInfo, mode: "wait" | "handle"): string | undefined => {
  const own = info.description ?? info.title
  if (mode === "wait") return own
  const note =
    "Returns at once with a handle while the work runs; get the result with wait_for_call or check_call."
  return own === undefined ? note : `${own}\n\n${note}`
}

export const inputSchema = (info: Wire.ToolInfo): Record<string, unknown> => ({
  type: "object",
  properties: {},
  ...info.inputSchema,
})

export const asking = (
  key: string,
  questions: ReadonlyArray<ServerRequest.ServerRequest>,
  message: string,
): Output.ToolOutput => ({
  status: "input_required",
  handle: key,
  message: `The call asks: ${questions.map(ServerRequest.message).join(" / ")}. It waits for the user's answer. ${message}`,
})

export const current = async (
  client: PromiseClient.PromiseTaskClient,
  key: string,
  scope: string | undefined,
  message: string,
): Promise<Output.ToolOutput> => {
  const record = await client.get(key, scope).catch((error: unknown) => {
    // Aborted before its intent was written: it is still on its way, and will be.
    if (tagOf(error) === "UnknownKey") return undefined
    throw error
  })
  if (record === undefined) return { status: "pending", handle: key, message }
  const rested = Outcome.fromRecord(record)
  if (rested !== undefined) return Output.fromOutcome(rested)
  const questions = Object.values(record.inputRequests ?? {})
  if (record.status === "input_required" && questions.length > 0)
    return asking(key, questions.map(ServerRequest.decode), message)
  const said = record.snapshot?.statusMessage
  return {
    status: Output.runningStatus(record.status) ?? "working",
    handle: key,
    message: said === undefined ? message : `${said}. ${message}`,
  }
}

export const cancelled = async (
  client: PromiseClient.PromiseTaskClient,
  key: string,
  scope: string | undefined,
): Promise<Output.ToolOutput> => {
  const rested = Outcome.fromRecord(await client.cancel(key, scope))
  return rested === undefined
    ? { status: "working", handle: key, message: "The wait was aborted: the call is being cancelled." }
    : Output.fromOutcome(rested)
}

export interface SettleOptions {
  readonly scope: string | undefined
  /** The tool's name, for the questions `onInput` gets. */
  readonly tool: string
  /** Stops the wait (not the call): `settle` gives `Stopped`. */
  readonly signal?: AbortSignal | undefined
  /** Answers the call's questions, in `inputKey` order; without it `settle` gives `Asked`. */
  readonly onInput?: ((request: PromiseClient.PromiseInputRequest) => Promise<JsonInput>) | undefined
  /**
   * Sends an answer. Default: `client.answer` (checked, stored before it is sent, once), a
   * question answered meanwhile or no longer asked (`CannotAnswer`) left alone.
   */
  readonly answer?: ((key: string, inputKey: string, response: JsonInput) => Promise<void>) | undefined
  /** Wait for an answer from elsewhere instead of giving `Asked` (`SettleOptions.waitForInput`). */
  readonly waitForInput?: boolean | undefined
}

export type Settled =
  | { readonly _tag: "Rested"; readonly output: Output.ToolOutput }
  | { readonly _tag: "Stopped" }
  | { readonly _tag: "Asked"; readonly requests: ReadonlyArray<TaskClient.InputRequest> }

export const answer =
  (client: PromiseClient.PromiseTaskClient, scope: string | undefined) =>
  async (key: string, inputKey: string, response: JsonInput): Promise<void> => {
    await client.answer(key, inputKey, response, scope).catch((error: unknown) => {
      // Answered meanwhile (by another process, the CLI), or no longer asked: nothing to send.
      if (tagOf(error) === "CannotAnswer") return
      throw error
    })
  }

export const settle = async (
  client: PromiseClient.PromiseTaskClient,
  key: string,
  options: SettleOptions,
): Promise<Settled> => {
  const { scope, signal, onInput } = options
  const send = options.answer ?? answer(client, scope)
  for (;;) {
    let requests: ReadonlyArray<TaskClient.InputRequest>
    try {
      const outcome = await client.settle(key, scope, {
        ...(signal === undefined ? {} : { signal }),
        ...(options.waitForInput === undefined ? {} : { waitForInput: options.waitForInput }),
      })
      return { _tag: "Rested", output: Output.fromOutcome(outcome) }
    } catch (error) {
      if (signal?.aborted === true) return { _tag: "Stopped" }
      if (tagOf(error) !== "InputRequired") throw error
      const open: ReadonlyArray<Omit<TaskClient.InputRequest, "scope" | "key" | "tool">> = (
        error as { readonly requests: ReadonlyArray<Omit<TaskClient.InputRequest, "scope" | "key" | "tool">> }
      ).requests
      // In one order however the server listed them: a replay asks them in the same order.
      requests = [...open]
        .sort((a, b) => (a.inputKey < b.inputKey ? -1 : a.inputKey > b.inputKey ? 1 : 0))
        .map((open) => ({
          scope: scope ?? "",
          key,
          tool: options.tool,
          inputKey: open.inputKey,
          request: open.request,
        }))
    }
    if (onInput === undefined) return { _tag: "Asked", requests }
    for (const request of requests) await send(key, request.inputKey, await onInput(request))
  }
}
