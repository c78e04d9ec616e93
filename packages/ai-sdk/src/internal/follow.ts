/**
 * Waiting for a call to rest while reporting what happens on the way: the call's status changes,
 * status messages, progress and questions (read from the store by `client.events`) become
 * preliminary outputs, and the outcome the last one. Stopping the wait (an abort, a companion tool's time
 * limit) leaves the call running: it is handed off, never cancelled, unless the caller asks.
 */
import { AgentTool, type PromiseClient, ServerRequest, type TaskClient } from "@mcp-handles/core"

/** @internal */
export interface Follow {
  readonly client: PromiseClient.PromiseTaskClient
  readonly key: string
  readonly scope: string | undefined
  /** Stops the wait. */
  readonly signal: AbortSignal | undefined
  /** The call's events, reported as they come; none, nothing is reported on the way. */
  readonly feed: Feed | undefined
  /** Routes the call's questions while the wait lasts; returns the unrouting. */
  readonly route: (() => () => void) | undefined
  /** What the output says when the wait stopped, or undefined to cancel the call instead. */
  readonly stopped: string | undefined
}

/**
 * One call's events, read one at a time beside other work: an event pulled while that work won
 * the race is kept for the next reader, never lost.
 */
export interface Feed {
  readonly next: () => Promise<IteratorResult<TaskClient.ClientEvent>>
  /** The event `next` gave was handled: the next call pulls another. */
  readonly taken: () => void
  readonly close: () => Promise<void>
}

/** The events of call `key` (it may not be recorded yet: the feed waits for its row). */
export const feed = (
  client: PromiseClient.PromiseTaskClient,
  key: string,
  scope: string | undefined,
): Feed => {
  const events = client.events(key, scope === undefined ? {} : { scope })
  const iterator = events[Symbol.asyncIterator]()
  let pending: Promise<IteratorResult<TaskClient.ClientEvent>> | undefined
  return {
    next: () => {
      if (pending === undefined) {
        pending = iterator.next()
        // Never left unhandled: the work it races may win and end the wait first.
        pending.catch(() => undefined)
      }
      return pending
    },
    taken: () => {
      pending = undefined
    },
    close: () => events.close(),
  }
}

const runningStatus = AgentTool.runningStatus

/** The preliminary output an event makes, if any: only statuses on the way count. */
export const preliminary = (key: string, event: TaskClient.ClientEvent): AgentTool.ToolOutput | undefined => {
  switch (event._tag) {
    case "StatusChanged": {
      const status = runningStatus(event.to)
      return status === undefined ? undefined : { status, handle: key, message: status }
    }
    case "StatusMessage": {
      const status = runningStatus(event.status)
      return status === undefined ? undefined : { status, handle: key, message: event.message }
    }
    case "Progress": {
      const of = event.total === undefined ? "" : ` of ${event.total}`
      return {
        status: "working",
        handle: key,
        message: event.message ?? `progress ${event.progress}${of}`,
        progress: event.progress,
        ...(event.total === undefined ? {} : { total: event.total }),
      }
    }
    case "InputRequested":
      return {
        status: "input_required",
        handle: key,
        message: `waiting for input: ${ServerRequest.message(event.request)}`,
      }
  }
}

/**
 * Waits for `work` while reporting the feed's events as preliminary outputs; returns what the
 * work gave (or throws what it threw). Once the feed ends (the call is terminal), only the work
 * is waited for.
 */
export async function* until<A>(
  work: Promise<A>,
  events: Feed | undefined,
  key: string,
): AsyncGenerator<AgentTool.ToolOutput, A> {
  const done = work.then((value) => ({ _tag: "Done" as const, value }))
  let open = events !== undefined
  for (;;) {
    const raced =
      events === undefined || !open
        ? await done
        : await Promise.race([done, events.next().then((event) => ({ _tag: "Event" as const, event }))])
    if (raced._tag === "Done") return raced.value
    events?.taken()
    if (raced.event.done === true) {
      open = false
      continue
    }
    const output = preliminary(key, raced.event.value)
    if (output !== undefined) yield output
  }
}

/**
 * Follows the call to its rest, yielding preliminary outputs on the way; the last output is
 * the outcome, or, once `signal` aborts, where the call stands (it runs on).
 */
export async function* follow(options: Follow): AsyncGenerator<AgentTool.ToolOutput> {
  const { client, key, scope } = options
  // Our own stop ends the settle whatever ends the wait.
  const stop = new AbortController()
  const signal = options.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal])
  const unroute = options.route?.()
  try {
    const settled = client.settle(key, scope, { signal }).then(
      (outcome) => AgentTool.fromOutcome(outcome),
      (error: unknown) => {
        if (options.signal?.aborted === true) return undefined
        throw error
      },
    )
    const rested = yield* until(settled, options.feed, key)
    if (rested !== undefined) yield rested
    else if (options.stopped !== undefined) yield await AgentTool.current(client, key, scope, options.stopped)
    else yield await AgentTool.cancelled(client, key, scope)
  } finally {
    stop.abort()
    unroute?.()
  }
}
