/**
 * Progress of a held direct `tools/call`: when the request carries `_meta.progressToken`, the
 * answer is an SSE stream of `notifications/progress` (one per configured step, paced by the
 * server's `sleep`) followed by the JSON-RPC response itself, as Streamable HTTP carries
 * notifications related to a request on that request's response stream.
 */
import type { Progress } from "../Config.js"
import type { Json } from "../Json.js"
import { isObject } from "./json.js"
import { renderString } from "./template.js"

/** `params._meta.progressToken` when it is a string or a number. */
export const progressTokenOf = (params: Record<string, unknown>): string | number | undefined => {
  const meta = params._meta
  if (!isObject(meta)) return undefined
  const token = meta.progressToken
  return typeof token === "string" || typeof token === "number" ? token : undefined
}

/**
 * When each step is reported and when the result leaves, in ms after the call was handled:
 * `intervalMs` apart, or spread evenly over the hold; never a result before the hold is over.
 */
export const progressTimes = (
  progress: Progress,
  holdMs: number,
): { readonly steps: readonly number[]; readonly resultAt: number } => {
  const count = progress.steps.length
  const gap = progress.intervalMs ?? (count > 1 ? holdMs / (count - 1) : 0)
  const steps = progress.steps.map((_, index) => index * Math.max(0, gap))
  return { steps, resultAt: Math.max(holdMs, steps.at(-1) ?? 0) }
}

const encoder = new TextEncoder()
const frame = (message: Json): Uint8Array =>
  encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`)

export interface ProgressStreamOptions {
  readonly token: string | number
  readonly progress: Progress
  readonly holdMs: number
  /** The JSON-RPC response that ends the stream. */
  readonly final: Record<string, Json>
  /** Waits this long; false when the wait was cut (the client left, the server restarted). */
  readonly wait: (ms: number, cut: AbortSignal) => Promise<boolean>
  /** Called once: the final message left (true), or the stream was cut before it (false). */
  readonly onEnd: (delivered: boolean) => void
}

/** The stream: each step's notification on time, then the response. */
export const progressStream = (options: ProgressStreamOptions): ReadableStream<Uint8Array> => {
  const { token, progress, final } = options
  const times = progressTimes(progress, options.holdMs)
  const cancelled = new AbortController()
  const run = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    let elapsed = 0
    const until = async (at: number) => {
      const ok = await options.wait(at - elapsed, cancelled.signal)
      elapsed = at
      return ok
    }
    for (const [index, step] of progress.steps.entries()) {
      if (!(await until(times.steps[index] ?? elapsed))) return false
      const params: Record<string, Json> = { progressToken: token, progress: step }
      if (progress.total !== undefined) params.total = progress.total
      if (progress.message !== undefined) params.message = renderString(progress.message, { progress: step })
      controller.enqueue(frame({ jsonrpc: "2.0", method: "notifications/progress", params }))
    }
    if (!(await until(times.resultAt))) return false
    controller.enqueue(frame(final))
    controller.close()
    return true
  }
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      void run(controller)
        .catch(() => false)
        .then((delivered) => {
          // Cut before the response: the connection breaks, as a real cut one does.
          if (!delivered && !cancelled.signal.aborted) controller.error(new Error("the call was cut"))
          options.onEnd(delivered)
        })
    },
    cancel: () => cancelled.abort(),
  })
}
