/**
 * Waiting for a call to rest while reporting what happens on the way: the call's status changes,
 * status messages and questions (read from the store by `client.events`) become preliminary
 * outputs, and the outcome the last one. Stopping the wait (an abort, a companion tool's time
 * limit) leaves the call running: it is handed off, never cancelled, unless the caller asks.
 */
import { Outcome, type PromiseClient, type TaskClient } from "@mcp-handles/core"
import * as ToolOutput from "../ToolOutput.js"

/** @internal */
export interface Follow {
  readonly client: PromiseClient.PromiseTaskClient
  readonly key: string
  readonly scope: string | undefined
  /** Stops the wait. */
  readonly signal: AbortSignal | undefined
  /** Report status changes and messages as they come (costs a store read every half second). */
  readonly progress: boolean
  /** Routes the call's questions while the wait lasts; returns the unrouting. */
  readonly route: (() => () => void) | undefined
  /** What the output says when the wait stopped, or undefined to cancel the call instead. */
  readonly stopped: string | undefined
}

type Raced =
  | { readonly _tag: "Settled"; readonly outcome: Outcome.Outcome }
  | { readonly _tag: "Stopped" }
  | { readonly _tag: "Event"; readonly event: IteratorResult<TaskClient.ClientEvent> }

const runningStatus = (status: string) =>
  status === "pending" || status === "working" || status === "input_required"
    ? (status as "pending" | "working" | "input_required")
    : undefined

const promptOf = (request: unknown): string | undefined => {
  const params = (request as { params?: { message?: unknown } } | null)?.params
  return typeof params?.message === "string" ? params.message : undefined
}

/** The preliminary output an event makes, if any: only statuses on the way count. */
export const preliminary = (
  key: string,
  event: TaskClient.ClientEvent,
): ToolOutput.ToolOutput | undefined => {
  switch (event._tag) {
    case "StatusChanged": {
      const status = runningStatus(event.to)
      return status === undefined ? undefined : { status, handle: key, message: status }
    }
    case "StatusMessage": {
      const status = runningStatus(event.status)
      return status === undefined ? undefined : { status, handle: key, message: event.message }
    }
    case "InputRequested": {
      const prompt = promptOf(event.request)
      return {
        status: "input_required",
        handle: key,
        message: prompt === undefined ? "waiting for input" : `waiting for input: ${prompt}`,
      }
    }
  }
}

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
  const status = runningStatus(record.status) ?? "working"
  const said = record.snapshot?.statusMessage
  return { status, handle: key, message: said === undefined ? message : `${said}. ${message}` }
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

/**
 * Follows the call to its rest, yielding preliminary outputs on the way; the last output is
 * the outcome, or, once `signal` aborts, where the call stands (it runs on).
 */
export async function* follow(options: Follow): AsyncGenerator<ToolOutput.ToolOutput> {
  const { client, key, scope } = options
  // Our own stop ends the settle and the event feed together, whatever ends the wait.
  const stop = new AbortController()
  const signal = options.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal])
  const unroute = options.route?.()
  const feed = options.progress ? client.events(key, scope === undefined ? {} : { scope }) : undefined
  const events = feed?.[Symbol.asyncIterator]()
  const settled: Promise<Raced> = client.settle(key, scope, { signal }).then(
    (outcome) => ({ _tag: "Settled", outcome }),
    (error: unknown) => {
      if (options.signal?.aborted === true) return { _tag: "Stopped" }
      throw error
    },
  )
  // Never left unhandled: the loop below may return before this promise settles.
  settled.catch(() => undefined)
  try {
    let next: Promise<Raced> | undefined = events?.next().then((event) => ({ _tag: "Event", event }))
    next?.catch(() => undefined)
    for (;;) {
      const raced = await (next === undefined ? settled : Promise.race([settled, next]))
      if (raced._tag === "Settled") {
        yield ToolOutput.fromOutcome(raced.outcome)
        return
      }
      if (raced._tag === "Stopped") {
        if (options.stopped !== undefined) {
          yield await current(client, key, scope, options.stopped)
          return
        }
        yield await cancelled(client, key, scope)
        return
      }
      if (raced.event.done === true) {
        // The feed ends once the call is terminal: the outcome is a read away.
        next = undefined
        continue
      }
      const output = preliminary(key, raced.event.value)
      if (output !== undefined) yield output
      next = events?.next().then((event) => ({ _tag: "Event", event }))
      next?.catch(() => undefined)
    }
  } finally {
    stop.abort()
    unroute?.()
    await feed?.close()
  }
}
