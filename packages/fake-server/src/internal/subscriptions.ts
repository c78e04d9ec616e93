import type { Json } from "../json.js"
import type { RequestId } from "./envelope.js"
import { SUBSCRIPTION_ID_KEY } from "./envelope.js"

/** What a subscription needs to know about one task at the current instant. */
export interface TaskSnapshot {
  /** The `DetailedTask`, exactly as `tasks/get` would answer now. */
  readonly task: Record<string, Json>
  readonly terminal: boolean
}

interface Subscription {
  readonly id: string
  readonly requestId: RequestId
  readonly controller: ReadableStreamDefaultController<Uint8Array>
  /** Task id → the last snapshot sent (serialised), to send only changes. */
  readonly sent: Map<string, string>
  closed: boolean
}

const encoder = new TextEncoder()

const sseFrame = (message: Json): Uint8Array =>
  encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`)

/**
 * Open `subscriptions/listen` streams. Task state is derived lazily from the clock, so nothing
 * "happens" by itself: the server calls `poke()` after every request it handles and on a timer
 * (or a test calls it after moving a virtual clock), and each stream gets a `notifications/tasks`
 * for every task whose observable state changed since it last heard.
 */
export class Subscriptions {
  private readonly open = new Set<Subscription>()
  private counter = 0

  constructor(private readonly snapshot: (taskId: string) => TaskSnapshot | undefined) {}

  get size(): number {
    return this.open.size
  }

  listen(
    requestId: RequestId,
    taskIds: readonly string[],
    signal: AbortSignal | undefined,
  ): ReadableStream<Uint8Array> {
    const id = `sub-${++this.counter}`
    let subscription: Subscription | undefined
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        subscription = {
          id,
          requestId,
          controller,
          sent: new Map(taskIds.map((t) => [t, ""])),
          closed: false,
        }
        this.open.add(subscription)
        // The acknowledgement must be the first message carrying this subscription's id.
        controller.enqueue(
          sseFrame({
            jsonrpc: "2.0",
            method: "notifications/subscriptions/acknowledged",
            params: { notifications: { taskIds: [...taskIds] }, _meta: { [SUBSCRIPTION_ID_KEY]: id } },
          }),
        )
        this.pokeOne(subscription)
      },
      cancel: () => {
        if (subscription !== undefined) this.drop(subscription)
      },
    })
    signal?.addEventListener("abort", () => {
      if (subscription !== undefined) this.close(subscription, false)
    })
    return stream
  }

  poke(): void {
    for (const subscription of this.open) this.pokeOne(subscription)
  }

  /** End every stream abruptly (a restart or shutdown). */
  closeAll(): void {
    for (const subscription of [...this.open]) this.close(subscription, false)
  }

  private pokeOne(subscription: Subscription): void {
    if (subscription.closed || subscription.sent.size === 0) return
    let allTerminal = true
    for (const [taskId, last] of subscription.sent) {
      const current = this.snapshot(taskId)
      if (current === undefined) {
        // Expired or lost: nothing more will be said about it.
        subscription.sent.delete(taskId)
        continue
      }
      if (!current.terminal) allTerminal = false
      const serialised = JSON.stringify(current.task)
      if (serialised === last) continue
      subscription.sent.set(taskId, serialised)
      this.enqueue(subscription, {
        jsonrpc: "2.0",
        method: "notifications/tasks",
        params: { ...current.task, _meta: { [SUBSCRIPTION_ID_KEY]: subscription.id } },
      })
    }
    if (allTerminal) this.close(subscription, true)
  }

  private enqueue(subscription: Subscription, message: Json): void {
    try {
      subscription.controller.enqueue(sseFrame(message))
    } catch {
      this.drop(subscription)
    }
  }

  /** `graceful`: end with the `subscriptions/listen` result, as the spec asks on teardown. */
  private close(subscription: Subscription, graceful: boolean): void {
    if (subscription.closed) return
    if (graceful) {
      this.enqueue(subscription, {
        jsonrpc: "2.0",
        id: subscription.requestId,
        result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID_KEY]: subscription.id } },
      })
    }
    this.drop(subscription)
    try {
      subscription.controller.close()
    } catch {
      // Already closed or errored by the consumer.
    }
  }

  private drop(subscription: Subscription): void {
    subscription.closed = true
    this.open.delete(subscription)
  }
}
