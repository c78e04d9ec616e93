/**
 * Launching a call without waiting past an abort, and where a call stands when its wait stopped:
 * what the model reads when a tool returned before its call came to rest.
 */
import { Outcome, type PromiseClient, ServerRequest, type Wire } from "@mcp-handles/core"
import * as ToolOutput from "../ToolOutput.js"

/** @internal */
export type Launched =
  /** The dispatch was answered; `rests` when the call rests already (a direct answer, an earlier end). */
  | { readonly _tag: "Launched"; readonly rests: boolean }
  /** `signal` aborted first; `calling` settles once the dispatch does. */
  | { readonly _tag: "Aborted"; readonly calling: Promise<unknown> }

const isOpen = (status: string) => status === "pending" || status === "working" || status === "input_required"

/**
 * `callTool`, given up on (not cancelled) when `signal` aborts first: the call is recorded
 * before the request leaves, so it goes on and can be looked at later.
 */
export const launch = async (
  client: PromiseClient.PromiseTaskClient,
  options: { readonly server: string; readonly scope?: string | undefined },
  tool: string,
  input: unknown,
  key: string,
  signal: AbortSignal | undefined,
): Promise<Launched> => {
  const scope = options.scope === undefined ? {} : { scope: options.scope }
  const calling = client
    .callTool(options.server, tool, input, { key, ...scope })
    .then((handle): Launched => ({ _tag: "Launched", rests: !isOpen(handle.record.status) }))
  if (signal === undefined) return calling
  // A call still being dispatched when the wait is given up on must not reject unheard.
  calling.catch(() => undefined)
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

/** What a wait that stopped says of a call that runs on. */
export const stopped = (companions: boolean): string =>
  companions
    ? "Stopped waiting; the call runs on under this handle. Call wait_for_call or check_call with the handle to get its result."
    : "Stopped waiting; the call runs on and its result is kept under this handle. Do not call the tool again for it: running the same tool call again (same thread, same tool call id) picks the result up."

/** The tool's description, with what handle mode changes. */
export const describe = (info: Wire.ToolInfo, mode: "wait" | "handle"): string => {
  const own = info.description ?? info.title ?? info.name
  if (mode === "wait") return own
  return `${own}\n\nReturns at once with a handle while the work runs; get the result with wait_for_call or check_call.`
}

const runningStatus = (status: string) =>
  status === "pending" || status === "working" || status === "input_required"
    ? (status as "pending" | "working" | "input_required")
    : "working"

/** What a tool in handle mode says of a call it started. */
export const started =
  "Started; it runs on under this handle. Call wait_for_call with the handle to wait for its result, or check_call to look without waiting."

/**
 * What a call waiting for input says, with its questions: in handle mode nothing interrupts the
 * graph for them (a companion runs in a LangGraph task of its own, where an interrupt would not
 * be replayed), so the model is told, and the app answers (`client.answer`, the CLI) or
 * `onInput` does.
 */
export const asking = (
  key: string,
  questions: ReadonlyArray<ServerRequest.ServerRequest>,
  message: string,
): ToolOutput.ToolOutput => ({
  status: "input_required",
  handle: key,
  message: `The call asks: ${questions.map(ServerRequest.message).join(" / ")}. It waits for the user's answer. ${message}`,
})

/** The output of a call that has not come to rest, as the store has it now. */
export const current = async (
  client: PromiseClient.PromiseTaskClient,
  key: string,
  scope: string | undefined,
  message: string,
): Promise<ToolOutput.ToolOutput> => {
  const record = await client.get(key, scope).catch((error: unknown) => {
    // Aborted before its intent was written: it is still on its way, and will be.
    if ((error as { _tag?: unknown } | null)?._tag === "UnknownKey") return undefined
    throw error
  })
  if (record === undefined) return { status: "pending", handle: key, message }
  const rested = Outcome.fromRecord(record)
  if (rested !== undefined) return ToolOutput.fromOutcome(rested)
  const questions = Object.values(record.inputRequests ?? {})
  if (record.status === "input_required" && questions.length > 0)
    return asking(key, questions.map(ServerRequest.decode), message)
  const said = record.snapshot?.statusMessage
  return {
    status: runningStatus(record.status),
    handle: key,
    message: said === undefined ? message : `${said}. ${message}`,
  }
}

/** Cancels the call (the wait was aborted and the caller asked for it); says where it stands. */
export const cancelled = async (
  client: PromiseClient.PromiseTaskClient,
  key: string,
  scope: string | undefined,
): Promise<ToolOutput.ToolOutput> => {
  const rested = Outcome.fromRecord(await client.cancel(key, scope))
  return rested === undefined
    ? { status: "working", handle: key, message: "The wait was aborted: the call is being cancelled." }
    : ToolOutput.fromOutcome(rested)
}
