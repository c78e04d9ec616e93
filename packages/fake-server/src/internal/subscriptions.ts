import type { Json } from "../Json.js"
import type { RequestId } from "./envelope.js"
import { subscriptionIdKey } from "./envelope.js"

/** What a subscription needs to know about one task at the current instant. */
export interface TaskSnapshot {
  /** Equal while the task would be rendered the same (see `stateKey`): compared, not rendered. */
  readonly key: string
  /** The `DetailedTask`, exactly as `tasks/get` would answer now. */
  readonly task: () => Record<string, Json>
  readonly terminal: boolean
  /**
   * Before this instant the clock alone changes nothing about the task (a request that changes
   * it moves the store's version): a stream need not look at it again until then.
   */
  readonly quietUntil: number
}

interface Subscription {
  readonly id: string
  readonly requestId: RequestId
  readonly controller: ReadableStreamDefaultController<Uint8Array>
  /** Task id → the key of the last snapshot sent, to send only changes. */
  readonly sent: Map<string, string>
  /** Task id → its `quietUntil` when last looked at, while the store's version is `version`. */
  readonly quiet: Map<string, number>
  version: number
  /**
   * The earliest `quietUntil` of its open tasks while the store's version is `version`: before
   * then a poke has nothing to look at on this stream. A poke follows every request the server
   * answers, so at 100,000 tasks over 100 streams and hundreds of requests a second, looking at
   * each task on each poke saturated the fake server.
   */
  wakeAt: number
  closed: boolean
  /** Half-open: still open, but nothing more is written to it (see `muteAll`). */
  muted: boolean
  /** When something was last written to it (server clock). */
  lastWrite: number
}

const encoder = new TextEncoder()

const sseFrame = (message: Json): Uint8Array =>
  encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`)

/** An SSE comment: no message, only bytes that tell the client the stream lives. */
const keepAlive = encoder.encode(": keep-alive\n\n")

/**
 * Open `subscriptions/listen` streams. Task state is derived lazily from the clock, so nothing
 * "happens" by itself: the server calls `poke()` after every request it handles and on a timer
 * (or a test calls it after moving a virtual clock), and each stream gets a `notifications/tasks`
 * for every task whose observable state changed since it last heard.
 */
export interface Subscriptions {
  readonly size: number
  listen(
    requestId: RequestId,
    taskIds: readonly string[],
    signal: AbortSignal | undefined,
  ): ReadableStream<Uint8Array>
  poke(): void
  /** End every stream abruptly (a restart or shutdown). */
  closeAll(): void
  /** Every open stream stays open and says nothing more, keep-alives included: half-open. */
  muteAll(): void
}

export interface SubscriptionOptions {
  /** The server's clock. */
  readonly now: () => number
  /** A stream that had nothing to say for this long gets a keep-alive comment on the next poke; 0: never. */
  readonly keepAliveMs: number
  /** The task store's version (see `TaskStore.version`). */
  readonly version: () => number
  /** Told of every task state a stream was sent (for the ledger). */
  readonly sent?: ((taskId: string, task: Record<string, Json>, terminal: boolean) => void) | undefined
}

export const makeSubscriptions = (
  snapshot: (taskId: string) => TaskSnapshot | undefined,
  options: SubscriptionOptions,
): Subscriptions => {
  const open = new Set<Subscription>()
  let counter = 0

  const drop = (subscription: Subscription) => {
    subscription.closed = true
    open.delete(subscription)
  }

  const write = (subscription: Subscription, bytes: Uint8Array) => {
    if (subscription.muted) return
    try {
      subscription.controller.enqueue(bytes)
      subscription.lastWrite = options.now()
    } catch {
      drop(subscription)
    }
  }
  const enqueue = (subscription: Subscription, message: Json) => write(subscription, sseFrame(message))

  /** `graceful`: end with the `subscriptions/listen` result, as the spec asks on teardown. */
  const close = (subscription: Subscription, graceful: boolean) => {
    if (subscription.closed) return
    if (graceful) {
      enqueue(subscription, {
        jsonrpc: "2.0",
        id: subscription.requestId,
        result: { resultType: "complete", _meta: { [subscriptionIdKey]: subscription.id } },
      })
    }
    drop(subscription)
    try {
      subscription.controller.close()
    } catch {
      // Already closed or errored by the consumer.
    }
  }

  const keepAliveOf = (subscription: Subscription) => {
    if (options.keepAliveMs > 0 && options.now() - subscription.lastWrite >= options.keepAliveMs) {
      write(subscription, keepAlive)
    }
  }

  const pokeOne = (subscription: Subscription) => {
    if (subscription.closed || subscription.muted || subscription.sent.size === 0) return
    let allTerminal = true
    const version = options.version()
    if (version !== subscription.version) {
      subscription.quiet.clear()
      subscription.version = version
      subscription.wakeAt = Number.NEGATIVE_INFINITY
    }
    const now = options.now()
    if (now < subscription.wakeAt) return keepAliveOf(subscription)
    let wakeAt = Number.POSITIVE_INFINITY
    for (const [taskId, last] of subscription.sent) {
      // Only open tasks are kept quiet: at 100,000 tasks on a stream, looking at each on every
      // poke made the fake server the benchmark's bottleneck.
      const quietUntil = subscription.quiet.get(taskId) ?? now
      if (now < quietUntil) {
        allTerminal = false
        wakeAt = Math.min(wakeAt, quietUntil)
        continue
      }
      const current = snapshot(taskId)
      if (current === undefined) {
        // Expired or lost: nothing more will be said about it.
        subscription.sent.delete(taskId)
        continue
      }
      if (!current.terminal) {
        allTerminal = false
        subscription.quiet.set(taskId, current.quietUntil)
        wakeAt = Math.min(wakeAt, current.quietUntil)
      }
      if (current.key === last) continue
      subscription.sent.set(taskId, current.key)
      const task = current.task()
      enqueue(subscription, {
        jsonrpc: "2.0",
        method: "notifications/tasks",
        params: { ...task, _meta: { [subscriptionIdKey]: subscription.id } },
      })
      if (!subscription.closed) options.sent?.(taskId, task, current.terminal)
    }
    if (allTerminal) return close(subscription, true)
    subscription.wakeAt = wakeAt
    keepAliveOf(subscription)
  }

  return {
    get size() {
      return open.size
    },
    listen: (requestId, taskIds, signal) => {
      const id = `sub-${++counter}`
      let subscription: Subscription | undefined
      const stream = new ReadableStream<Uint8Array>({
        start: (controller) => {
          subscription = {
            id,
            requestId,
            controller,
            sent: new Map(taskIds.map((t) => [t, ""])),
            quiet: new Map(),
            version: options.version(),
            wakeAt: Number.NEGATIVE_INFINITY,
            closed: false,
            muted: false,
            lastWrite: options.now(),
          }
          open.add(subscription)
          // The acknowledgement must be the first message carrying this subscription's id.
          controller.enqueue(
            sseFrame({
              jsonrpc: "2.0",
              method: "notifications/subscriptions/acknowledged",
              params: { notifications: { taskIds: [...taskIds] }, _meta: { [subscriptionIdKey]: id } },
            }),
          )
          pokeOne(subscription)
        },
        cancel: () => {
          if (subscription !== undefined) drop(subscription)
        },
      })
      signal?.addEventListener("abort", () => {
        if (subscription !== undefined) close(subscription, false)
      })
      return stream
    },
    poke: () => {
      for (const subscription of open) pokeOne(subscription)
    },
    closeAll: () => {
      for (const subscription of [...open]) close(subscription, false)
    },
    muteAll: () => {
      for (const subscription of open) subscription.muted = true
    },
  }
}
