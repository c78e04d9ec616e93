/**
 * The Promise facade's streams (issues 15, items 1 and 3): outcomes, `onSettled` and events
 * behind async iterables and Promises. Part of `PromiseClient`, kept apart for size.
 */
import * as Cause from "effect/Cause"
import type * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as DurationInput from "../DurationInput.js"
import type {
  EventFeed,
  OutcomeFeed,
  PromiseDelivered,
  PromiseOutcomesOptions,
  Subscription,
} from "../PromiseClient.js"
import type * as TaskClient from "../TaskClient.js"

export type Run = <A, E>(
  operation: string,
  effect: Effect.Effect<A, E, TaskClient.TaskClient>,
  signal?: AbortSignal,
) => Promise<A>

const optionalDuration = (input: DurationInput.DurationInput | undefined) =>
  input === undefined ? Either.right(undefined) : DurationInput.decodeEither(input)

const decodeOutcomesOptions = (options: PromiseOutcomesOptions): TaskClient.OutcomesOptions => {
  const durations = Either.all({
    pollInterval: optionalDuration(options.pollInterval),
    redeliverAfter: optionalDuration(options.redeliverAfter),
  })
  if (Either.isLeft(durations)) throw durations.left
  return { ...options, ...durations.right }
}

/**
 * A stream as an async iterable: each `next()` pulls through `run` (so `close()` of the client
 * ends a pending one with `ClientClosed`); leaving the loop or the feed's `close()` ends the
 * stream, and a `next()` pending then ends the loop (done), whatever is closed after.
 */
const iterate = <A, E>(run: Run, operation: string, stream: Stream.Stream<A, E>) => {
  const scope = Effect.runSync(Scope.make())
  let pull: Promise<Effect.Effect<Chunk.Chunk<A>, Option.Option<E>>> | undefined
  const buffer: Array<A> = []
  let closed = false
  // Stops the pull in flight: the feed is closed, its pending `next()` ends the loop.
  const stopped = new AbortController()
  const close = async () => {
    closed = true
    stopped.abort()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  const next = async (): Promise<IteratorResult<A, undefined>> => {
    for (;;) {
      if (buffer.length > 0) return { done: false, value: buffer.shift() as A }
      if (closed) return { done: true, value: undefined }
      pull ??= run(operation, Scope.extend(Stream.toPull(stream), scope))
      const pulling = pull
      const chunk = await run(
        operation,
        Effect.catchAll(
          Effect.flatMap(
            Effect.promise(() => pulling),
            (p) => Effect.map(p, (c): ReadonlyArray<A> | null => Array.from(c)),
          ),
          Option.match({ onNone: () => Effect.succeed(null), onSome: Effect.fail }),
        ),
        stopped.signal,
      ).catch((error: unknown) => {
        if (stopped.signal.aborted) return null
        throw error
      })
      if (chunk === null) {
        closed = true
        return { done: true, value: undefined }
      }
      buffer.push(...chunk)
    }
  }
  return {
    [Symbol.asyncIterator]: () => ({
      next,
      return: async () => {
        await close()
        return { done: true as const, value: undefined }
      },
    }),
    close,
    [Symbol.asyncDispose]: close,
  }
}

/** `events` behind an async iterable. */
export const events =
  (client: TaskClient.TaskClient, run: Run) =>
  (key?: string, options?: TaskClient.EventsOptions): EventFeed =>
    iterate(run, "events", client.events(key, options))

export const outcomeDelivery = (client: TaskClient.TaskClient, run: Run) => {
  const promiseDelivered = (delivered: TaskClient.Delivered): PromiseDelivered => ({
    ...delivered,
    ack: () => run("ack", delivered.ack),
  })

  const outcomes = (options: PromiseOutcomesOptions): OutcomeFeed => {
    const feed = iterate(
      run,
      "outcomes",
      Stream.map(client.outcomes(decodeOutcomesOptions(options)), promiseDelivered),
    )
    return {
      ...feed,
      ack: (key, keyScope) => run("ack", client.ack(options.consumer, key, keyScope ?? options.scope)),
    }
  }

  const onSettled = (
    options: PromiseOutcomesOptions,
    handler: (delivered: PromiseDelivered) => Promise<void> | void,
  ): Subscription => {
    const decoded = decodeOutcomesOptions(options)
    const stopped = Effect.runSync(Deferred.make<void>())
    const done = run(
      "onSettled",
      Effect.raceFirst(
        client
          .onSettled(decoded, (delivered) =>
            Effect.tryPromise(async () => handler(promiseDelivered(delivered))),
          )
          .pipe(
            Effect.tapErrorCause((cause) =>
              Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("onSettled stopped", cause),
            ),
          ),
        Deferred.await(stopped),
      ),
    )
    // Whoever ignores `done` gets the failure in the log (above), not an unhandled rejection.
    done.catch(() => {})
    const stop = () => {
      Effect.runSync(Deferred.succeed(stopped, undefined))
      return done.catch(() => {})
    }
    return { done, stop, [Symbol.asyncDispose]: stop }
  }

  return {
    outcomes,
    ack: (consumer: string, key: string, scope?: string) => run("ack", client.ack(consumer, key, scope)),
    onSettled,
  }
}
