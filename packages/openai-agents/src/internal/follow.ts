/**
 * One durable call, from the SDK's `callTool` to a result: recorded and launched (or attached to,
 * when its key is on record), then waited on until it rests, answering its questions on the way
 * (core's `AgentTool`). Stopping the wait (the SDK's abort signal) hands the call off: it runs
 * on, recorded, and is cancelled from here only with `onAbort: "cancel"`.
 */
import { AgentTool, type Json, type PromiseClient } from "@mcp-handles/core"
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

/** What the model reads of a call whose wait stopped: where it stands now. */
const handedOff = async (call: Call): Promise<ToolOutput.CallToolResult> => {
  const output = await AgentTool.current(call.client, call.key, call.scope, "")
  return AgentTool.rests(output)
    ? ToolOutput.fromOutput(output)
    : ToolOutput.handedOff(call.key, output.status)
}

/** What the model reads of a call whose wait the signal stopped: handed off, or cancelled. */
const aborted = async (call: Call): Promise<ToolOutput.CallToolResult> =>
  call.onAbort === "cancel"
    ? ToolOutput.fromOutput(await AgentTool.cancelled(call.client, call.key, call.scope))
    : await handedOff(call)

/** @internal */
export const call = async (call: Call): Promise<ToolOutput.CallToolResult> => {
  // Not recorded yet: an aborted run launches nothing.
  call.signal?.throwIfAborted()
  const launched = await AgentTool.launch(call.client, call, call.tool, call.args, call.key, call.signal)
  if (launched._tag === "Aborted") {
    // Cancelling needs the row, which the dispatch writes first.
    if (call.onAbort === "cancel") await launched.calling.catch(() => undefined)
    return await aborted(call)
  }
  if (call.mode === "handle" && !launched.rests)
    return ToolOutput.fromOutput(
      await AgentTool.current(call.client, call.key, call.scope, AgentTool.started),
    )
  const settled = await AgentTool.settle(call.client, call.key, {
    scope: call.scope,
    tool: call.tool,
    signal: call.signal,
    onInput: call.onInput,
    // Without a handler here, the question waits for an answer from elsewhere.
    waitForInput: call.onInput === undefined,
  })
  switch (settled._tag) {
    case "Rested":
      return ToolOutput.fromOutput(settled.output)
    case "Stopped":
      return await aborted(call)
    case "Asked":
      // Not given while waitForInput holds; said as a companion would say it.
      return ToolOutput.fromOutput(
        AgentTool.asking(
          call.key,
          settled.requests.map((open) => open.request),
          "",
        ),
      )
  }
}
