/**
 * Launching a call without waiting past an abort, and the sentences a handed-off call carries:
 * what the model reads when a tool returned before its call came to rest.
 */
import type { PromiseClient, Wire } from "@mcp-handles/core"

/** @internal */
export type Launched =
  /** The dispatch was answered; `rests` when the call rests already (a direct answer, an earlier end). */
  | { readonly _tag: "Launched"; readonly rests: boolean }
  /** `signal` aborted first; `calling` settles once the dispatch does. */
  | { readonly _tag: "Aborted"; readonly calling: Promise<unknown> }

const open = (status: string) => status === "pending" || status === "working" || status === "input_required"

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
    .then((handle): Launched => ({ _tag: "Launched", rests: !open(handle.record.status) }))
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

/** What a tool in handle mode says of a call it started. */
export const started =
  "Started; it runs on under this handle. Call wait_for_call with the handle to wait for its result, or check_call to look without waiting."

/** What a wait that stopped says of a call that runs on. */
export const stopped = (companions: boolean): string =>
  companions
    ? "Stopped waiting; the call runs on under this handle. Call wait_for_call or check_call with the handle to get its result."
    : "Stopped waiting; the call runs on and its result is kept under this handle. Do not call the tool again for it."

/** The tool's description, with what handle mode changes. */
export const describe = (info: Wire.ToolInfo, mode: "wait" | "handle"): string | undefined => {
  const own = info.description ?? info.title
  if (mode === "wait") return own
  const note =
    "Returns at once with a handle while the work runs; get the result with wait_for_call or check_call."
  return own === undefined ? note : `${own}\n\n${note}`
}
