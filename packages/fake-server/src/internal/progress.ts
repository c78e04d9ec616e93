/**
 * Progress of a direct `tools/call`: when the request carries `_meta.progressToken`, the answer
 * is an SSE stream of `notifications/progress` (one per configured step, `intervalMs` apart in
 * real time) followed by the JSON-RPC response itself, as Streamable HTTP carries notifications
 * related to a request on that request's response stream.
 */
import type { Progress } from "../Config.js"
import type { Json } from "../Json.js"
import type { RequestId } from "./envelope.js"
import { isObject } from "./json.js"
import { renderString } from "./template.js"

/** `params._meta.progressToken` when it is a string or a number. */
export const progressTokenOf = (params: Record<string, unknown>): string | number | undefined => {
  const meta = params._meta
  if (!isObject(meta)) return undefined
  const token = meta.progressToken
  return typeof token === "string" || typeof token === "number" ? token : undefined
}

const encoder = new TextEncoder()
const frame = (message: Json): Uint8Array =>
  encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`)

/** The stream: each step's notification, then `{ jsonrpc, id, ...final }` (a `result` or an `error`). */
export const progressStream = (
  requestId: RequestId,
  progressToken: string | number,
  progress: Progress,
  final: Record<string, Json>,
): ReadableStream<Uint8Array> => {
  const intervalMs = progress.intervalMs ?? 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let closed = false
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      const steps = [...progress.steps]
      const next = () => {
        timer = undefined
        if (closed) return
        const step = steps.shift()
        if (step === undefined) {
          controller.enqueue(frame({ jsonrpc: "2.0", id: requestId, ...final }))
          closed = true
          controller.close()
          return
        }
        const params: Record<string, Json> = { progressToken, progress: step }
        if (progress.total !== undefined) params.total = progress.total
        if (progress.message !== undefined)
          params.message = renderString(progress.message, { progress: step })
        controller.enqueue(frame({ jsonrpc: "2.0", method: "notifications/progress", params }))
        // The last notification is followed at once by the result.
        if (steps.length === 0 || intervalMs <= 0) next()
        else timer = setTimeout(next, intervalMs)
      }
      next()
    },
    cancel: () => {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
    },
  })
}
