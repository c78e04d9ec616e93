/**
 * One durable call, from the SDK's `callTool` to a result: recorded and launched (or attached to,
 * when its key is on record), then waited on until it rests, answering its questions on the way.
 * Stopping the wait (the SDK's abort signal) hands the call off: it runs on, recorded, and is
 * never cancelled from here.
 */
import { type Json, Outcome, type PromiseClient, ServerRequest } from "@mcp-handles/core"
import * as ToolOutput from "../ToolOutput.js"

/** @internal */
export interface Call {
  readonly client: PromiseClient.PromiseTaskClient
  readonly server: string
  readonly scope: string | undefined
  readonly tool: string
  readonly args: Record<string, unknown>
  readonly key: string
  readonly signal: AbortSignal | undefined
  /** `handle`: return where the call stands once it is launched, unless it rests already. */
  readonly mode: "wait" | "handle"
  /** `cancel`: a wait stopped by the signal also cancels the call on the server. */
  readonly onAbort: "hand-off" | "cancel"
  readonly onInput: ((request: PromiseClient.PromiseInputRequest) => Promise<Json.JsonInput>) | undefined
}

export const tagOf = (error: unknown): unknown => (error as { _tag?: unknown } | null)?._tag

/** Resolves with `undefined` once `signal` aborts, unless `work` settled first. */
const unlessAborted = async <A>(
  work: Promise<A>,
  signal: AbortSignal | undefined,
): Promise<A | undefined> => {
  if (signal === undefined) return await work
  // Given up on, not cancelled: a rejection after the abort must not go unheard.
  work.catch(() => undefined)
  let onAbort = () => {}
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined)
    signal.addEventListener("abort", onAbort, { once: true })
  })
  try {
    return await Promise.race([work, aborted])
  } finally {
    signal.removeEventListener("abort", onAbort)
  }
}

/** What the model reads of a call whose wait stopped: where it stands now. */
const handedOff = async (call: Call): Promise<ToolOutput.CallToolResult> => {
  const record = await call.client.get(call.key, call.scope).catch((error: unknown) => {
    // Aborted before its intent was written: it is still on its way, and will be recorded.
    if (tagOf(error) === "UnknownKey") return undefined
    throw error
  })
  if (record === undefined) return ToolOutput.handedOff(call.key, "pending")
  const rested = Outcome.fromRecord(record)
  return rested === undefined ? ToolOutput.handedOff(call.key, record.status) : ToolOutput.fromOutcome(rested)
}

/** Cancels a call whose wait was aborted (the app asked for it); says where it stands. */
const cancelled = async (call: Call): Promise<ToolOutput.CallToolResult> => {
  const rested = Outcome.fromRecord(await call.client.cancel(call.key, call.scope))
  return rested === undefined
    ? ToolOutput.text("The wait was aborted: the call is being cancelled.", true)
    : ToolOutput.fromOutcome(rested)
}

/** What the model reads of a call whose wait the signal stopped: handed off, or cancelled. */
const aborted = (call: Call) => (call.onAbort === "cancel" ? cancelled(call) : handedOff(call))

/** What a tool in handle mode says of a call it started. */
export const started =
  "Started; it runs on under this handle. Call wait_for_call with the handle to wait for its result, or check_call to look without waiting."

/**
 * What a call waiting for input says, with its questions: the app answers under the handle
 * (`client.answer`, the CLI), or `onInput` does while a companion waits.
 */
export const asking = (
  key: string,
  questions: ReadonlyArray<ServerRequest.ServerRequest>,
  message: string,
): ToolOutput.CallToolResult =>
  ToolOutput.running(
    key,
    "input_required",
    `The call asks: ${questions.map(ServerRequest.message).join(" / ")}. It waits for the user's answer. ${message}`,
  )

/** Where a call stands now, as the store has it: its outcome once it rests. */
export const current = async (
  client: PromiseClient.PromiseTaskClient,
  key: string,
  scope: string | undefined,
  message: string,
): Promise<ToolOutput.CallToolResult> => {
  const record = await client.get(key, scope)
  const rested = Outcome.fromRecord(record)
  if (rested !== undefined) return ToolOutput.fromOutcome(rested)
  const questions = Object.values(record.inputRequests ?? {})
  if (record.status === "input_required" && questions.length > 0)
    return asking(key, questions.map(ServerRequest.decode), message)
  const said = record.snapshot?.statusMessage
  return ToolOutput.running(key, record.status, said === undefined ? message : `${said}. ${message}`)
}

/** Answers the open requests through `client.answer`: checked, stored before it is sent, once. */
export const answer = async (
  call: Pick<Call, "client" | "scope" | "key" | "tool" | "onInput">,
  requests: ReadonlyArray<{ inputKey: string; request: unknown }>,
) => {
  const onInput = call.onInput
  if (onInput === undefined) return
  for (const open of requests) {
    const request = {
      scope: call.scope ?? "",
      key: call.key,
      tool: call.tool,
      inputKey: open.inputKey,
      request: open.request,
    } as PromiseClient.PromiseInputRequest
    const response = await onInput(request)
    await call.client.answer(call.key, open.inputKey, response, call.scope).catch((error: unknown) => {
      // Answered meanwhile (by another process, the CLI), or no longer asked: nothing to send.
      if (tagOf(error) === "CannotAnswer") return
      throw error
    })
  }
}

/** @internal */
export const call = async (call: Call): Promise<ToolOutput.CallToolResult> => {
  // Not recorded yet: an aborted run launches nothing.
  call.signal?.throwIfAborted()
  const launching = call.client.callTool(call.server, call.tool, call.args, {
    key: call.key,
    ...(call.scope === undefined ? {} : { scope: call.scope }),
  })
  const launched = await unlessAborted(launching, call.signal)
  if (launched === undefined) {
    // Cancelling needs the row, which the dispatch writes first.
    if (call.onAbort === "cancel") await launching.catch(() => undefined)
    return await aborted(call)
  }
  if (call.mode === "handle" && Outcome.fromRecord(launched.record) === undefined)
    return await current(call.client, call.key, call.scope, started)
  for (;;) {
    try {
      const outcome = await call.client.settle(call.key, call.scope, {
        ...(call.signal === undefined ? {} : { signal: call.signal }),
        // Without a handler here, the question waits for an answer from elsewhere.
        waitForInput: call.onInput === undefined,
      })
      return ToolOutput.fromOutcome(outcome)
    } catch (error) {
      if (call.signal?.aborted === true) return await aborted(call)
      if (tagOf(error) !== "InputRequired") throw error
      await answer(
        call,
        (error as { requests: ReadonlyArray<{ inputKey: string; request: unknown }> }).requests,
      )
    }
  }
}
