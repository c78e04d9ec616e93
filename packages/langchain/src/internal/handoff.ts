/**
 * Launching a call without waiting past an abort, and where a call stands when its wait stopped:
 * what the model reads when a tool returned before its call came to rest.
 */
import { Outcome, type PromiseClient } from "@mcp-handles/core"
import * as ToolOutput from "../ToolOutput.js"

/** @internal */
export type Launched =
  | { readonly _tag: "Launched" }
  /** `signal` aborted first; `calling` settles once the dispatch does. */
  | { readonly _tag: "Aborted"; readonly calling: Promise<unknown> }

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
    .then((): Launched => ({ _tag: "Launched" }))
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
export const stopped =
  "Stopped waiting; the call runs on and its result is kept under this handle. Do not call the tool again for it: running the same tool call again (same thread, same tool call id) picks the result up."

const runningStatus = (status: string) =>
  status === "pending" || status === "working" || status === "input_required"
    ? (status as "pending" | "working" | "input_required")
    : "working"

/** The output of a call whose wait stopped, as the store has it now. */
export const current = async (
  client: PromiseClient.PromiseTaskClient,
  key: string,
  scope: string | undefined,
): Promise<ToolOutput.ToolOutput> => {
  const record = await client.get(key, scope).catch((error: unknown) => {
    // Aborted before its intent was written: it is still on its way, and will be.
    if ((error as { _tag?: unknown } | null)?._tag === "UnknownKey") return undefined
    throw error
  })
  if (record === undefined) return { status: "pending", handle: key, message: stopped }
  const rested = Outcome.fromRecord(record)
  if (rested !== undefined) return ToolOutput.fromOutcome(rested)
  const said = record.snapshot?.statusMessage
  return {
    status: runningStatus(record.status),
    handle: key,
    message: said === undefined ? stopped : `${said}. ${stopped}`,
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
