/**
 * Outcome delivery (issue 15): the store as the app's inbox. A consumer (a durable name) gets
 * every call that rests, including those that settled while the app was down or on another
 * instance, until it acknowledges them; members of one consumer (instances) share the work.
 * Built on the store's `claimOutcomes`/`ackOutcome`/`releaseOutcomes`; the engine is not
 * involved: whoever settled a call, the row says so.
 */
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { HandleStore, OutcomeDelivery, StoreError } from "../HandleStore.js"
import * as Outcome from "../Outcome.js"
import type { Delivered, OutcomesOptions as FeedOptions } from "../TaskClient.js"

/** The client's members built here rather than by the engine. */
export type Members = "outcomes" | "ack" | "onSettled"

/** What the feed uses for an option that is not given. */
export const defaults = {
  pollInterval: Duration.seconds(1),
  redeliverAfter: Duration.minutes(1),
  batchSize: 100,
} as const

export const make = (
  store: HandleStore,
  config: { readonly member: string; readonly defaultScope: string },
) => {
  const ack = (consumer: string, key: string, scope?: string) =>
    store.ackOutcome({ consumer, scope: scope ?? config.defaultScope, key })

  const delivered = (delivery: OutcomeDelivery): Delivered | undefined => {
    const { record } = delivery
    const outcome = Outcome.fromRecord(record)
    if (outcome === undefined) return undefined
    return {
      consumer: delivery.consumer,
      scope: record.scope,
      key: record.key,
      outcome,
      record,
      deliveries: delivery.deliveries,
      // Acknowledges exactly this rest: if the call rests differently by then (reissued and
      // completed), that later rest is still delivered.
      ack: store.ackOutcome({
        consumer: delivery.consumer,
        scope: record.scope,
        key: record.key,
        rest: { status: record.status, launches: record.launches },
      }),
    }
  }

  const outcomes = (options: FeedOptions): Stream.Stream<Delivered, StoreError> => {
    const scope = options.scope ?? config.defaultScope
    const limit = Math.max(1, Math.floor(options.batchSize ?? defaults.batchSize))
    const leaseMs = Duration.toMillis(options.redeliverAfter ?? defaults.redeliverAfter)
    const pollInterval = options.pollInterval ?? defaults.pollInterval
    const claim = Effect.flatMap(store.now, (now) =>
      store.claimOutcomes({ consumer: options.consumer, member: config.member, scope, now, leaseMs, limit }),
    )
    // A full batch means more may be waiting: claim again at once; otherwise wait a poll interval.
    const feed = Stream.unfoldChunkEffect(true, (again: boolean) =>
      Effect.map(again ? claim : Effect.delay(claim, pollInterval), (batch) =>
        Option.some([
          Chunk.filterMap(Chunk.fromIterable(batch), (d) => Option.fromNullable(delivered(d))),
          batch.length >= limit,
        ] as const),
      ),
    )
    // This member's previous process (one live process per instance id) may have been handed
    // outcomes it never acknowledged: they are due again at once, not after their claim runs out.
    return Stream.concat(
      Stream.drain(
        Stream.fromEffect(store.releaseOutcomes({ consumer: options.consumer, member: config.member })),
      ),
      feed,
    )
  }

  /**
   * Runs `handler` on each outcome and acknowledges it once the handler succeeded. A handler
   * that fails leaves its outcome unacknowledged: it is delivered again after `redeliverAfter`.
   */
  const onSettled = <E, R>(
    options: FeedOptions,
    handler: (delivered: Delivered) => Effect.Effect<void, E, R>,
  ): Effect.Effect<void, StoreError, R> =>
    outcomes(options).pipe(
      Stream.runForEach((d) =>
        handler(d).pipe(
          Effect.matchCauseEffect({
            onSuccess: () => Effect.asVoid(d.ack),
            onFailure: (cause) =>
              Effect.logWarning(
                "onSettled: the handler failed; the outcome will be delivered again",
                cause,
              ).pipe(Effect.annotateLogs({ "mcp_handles.key": d.key, "mcp_handles.scope": d.scope })),
          }),
        ),
      ),
    )

  return { outcomes, ack, onSettled }
}
