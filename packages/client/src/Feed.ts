/**
 * Outcomes delivered once per consumer, and live events, as async iterables.
 *
 * @since 0.1.0
 */
import type { DurationInput } from "./DurationInput.js"
import type { HandleRecord, Status } from "./HandleRecord.js"
import type { Outcome } from "./Outcome.js"
import type { ServerRequest } from "./ServerRequest.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface OutcomesOptions {
  /** The consumer's durable name. Each consumer gets every outcome; instances under one name share them. */
  readonly consumer: string
  /** Default: the client's default scope. */
  readonly scope?: string | undefined
  /** How often the store is asked when nothing was waiting. Default 1 s. */
  readonly pollInterval?: DurationInput | undefined
  /** How long a delivered outcome waits for its acknowledgement before it comes again. Default 1 minute. */
  readonly redeliverAfter?: DurationInput | undefined
  /** Outcomes claimed per store request. Default 100. */
  readonly batchSize?: number | undefined
}

/**
 * One outcome handed to a consumer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Delivered {
  readonly consumer: string
  readonly scope: string
  readonly key: string
  readonly outcome: Outcome
  /** The row as it rests (its history included). */
  readonly record: HandleRecord
  /** How many times this outcome was delivered to the consumer, this time included. */
  readonly deliveries: number
  /** Acknowledges this outcome; true when it was still the one delivered. */
  readonly ack: () => Promise<boolean>
}

/**
 * An endless async iterable of outcomes. Leaving a `for await` loop (or `close()`) stops it;
 * outcomes it delivered without acknowledgement come again.
 *
 * @since 0.1.0
 * @category models
 */
export interface OutcomeFeed extends AsyncIterable<Delivered>, AsyncDisposable {
  readonly ack: (key: string, scope?: string) => Promise<boolean>
  readonly close: () => Promise<void>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Subscription extends AsyncDisposable {
  /** Settles when the subscription ends: resolves after `stop()`, rejects on a store failure or `close()`. */
  readonly done: Promise<void>
  readonly stop: () => Promise<void>
}

/**
 * What `events` reports.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientEvent =
  | {
      /** A status change, as the row's history has it. */
      readonly _tag: "StatusChanged"
      readonly scope: string
      readonly key: string
      readonly at: number
      readonly from: Status | null
      readonly to: Status
      readonly cause: string
      readonly instance: string | null
    }
  | {
      /** The server's status message changed. */
      readonly _tag: "StatusMessage"
      readonly scope: string
      readonly key: string
      readonly status: Status
      readonly message: string
    }
  | {
      /** How far the work is (`notifications/progress`), each material change. */
      readonly _tag: "Progress"
      readonly scope: string
      readonly key: string
      readonly progress: number
      readonly total: number | undefined
      readonly message: string | undefined
      readonly at: number
    }
  | {
      /** The server asks for input (answered by the instance driving the call). */
      readonly _tag: "InputRequested"
      readonly scope: string
      readonly key: string
      readonly inputKey: string
      readonly request: ServerRequest
    }
  | {
      /**
       * This process's input handler answered a request with what does not fit it: nothing was
       * stored or sent, the request stays open, and a wait on the call here rejects with
       * `InputRequired`. Reported once per request.
       */
      readonly _tag: "InvalidAnswer"
      readonly scope: string
      readonly key: string
      readonly inputKey: string
      readonly problems: ReadonlyArray<string>
    }

/**
 * An async iterable of events; leaving a `for await` loop or `close()` stops it.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventFeed extends AsyncIterable<ClientEvent>, AsyncDisposable {
  readonly close: () => Promise<void>
}
