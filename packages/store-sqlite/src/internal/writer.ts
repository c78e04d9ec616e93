/**
 * Group commit. Every write is queued to one writer fiber, which runs whatever has queued up as a
 * single transaction and fsyncs once for all of them. A caller resumes only after the commit
 * that holds its write, so "returned" means "durable".
 *
 * A batch runs synchronously, in one step of the writer fiber: nothing else runs on the event
 * loop meanwhile, so no reader can see a write that is not yet committed, and a write costs its
 * statement and a share of one fsync, not a round of fiber scheduling per statement. Writes
 * submitted while a batch commits wait for the next one: batches form on their own under load,
 * and a lone caller never waits on a timer.
 */
import { StoreError } from "@mcp-handles/core/HandleStore"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/** Transaction control of the writer's connection. Each method throws on a driver error. */
export interface Transactor {
  readonly begin: () => void
  readonly commit: () => void
  readonly rollback: () => void
}

/**
 * One write, run synchronously inside the batch's transaction. A `Left` is the write's own
 * typed failure (a lost compare-and-set) and fails only this write. A throw (a driver error, a
 * bug) also fails only this write: the transaction is rolled back and the rest of the batch is
 * run again without it, so one bad write never takes others down.
 */
export type Operation<A, E> = () => Either.Either<A, E>

interface Pending {
  readonly operation: string
  readonly run: Operation<unknown, unknown>
  readonly deferred: Deferred.Deferred<unknown, unknown>
}

export interface Writer {
  readonly submit: <A, E>(operation: string, run: Operation<A, E>) => Effect.Effect<A, E | StoreError>
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

const failure = (item: Pending, message: string, cause: unknown): Exit.Exit<unknown, unknown> =>
  Exit.fail(new StoreError({ operation: item.operation, message: `${message}: ${describe(cause)}`, cause }))

/** Runs one batch to completion and says how each write ended; never throws. */
const runBatch = (transactor: Transactor, batch: ReadonlyArray<Pending>) => {
  const outcomes = new Map<Pending, Exit.Exit<unknown, unknown>>()
  const rollback = () => {
    try {
      transactor.rollback()
    } catch {
      // No transaction left to roll back (SQLite already did): nothing to undo.
    }
  }
  let remaining = batch
  while (remaining.length > 0) {
    try {
      // IMMEDIATE (see SqliteStore): takes the write lock up front, waiting up to the busy
      // timeout for another process, instead of failing half-way through the batch.
      transactor.begin()
    } catch (error) {
      for (const item of remaining)
        outcomes.set(item, failure(item, "could not start a write transaction", error))
      return outcomes
    }
    const results: Array<Exit.Exit<unknown, unknown>> = []
    let poisoned: Pending | undefined
    for (const item of remaining) {
      try {
        const result = item.run()
        results.push(Either.isRight(result) ? Exit.succeed(result.right) : Exit.fail(result.left))
      } catch (error) {
        poisoned = item
        rollback()
        outcomes.set(item, failure(item, "the write failed and was rolled back", error))
        break
      }
    }
    if (poisoned !== undefined) {
      remaining = remaining.filter((item) => item !== poisoned)
      continue
    }
    try {
      transactor.commit()
    } catch (error) {
      // Nothing of this batch is durable: every caller gets an error, and the connection is
      // left without an open transaction.
      rollback()
      for (const item of remaining)
        outcomes.set(item, failure(item, "the commit failed; the write is not saved", error))
      return outcomes
    }
    remaining.forEach((item, index) => {
      outcomes.set(item, results[index] ?? Exit.void)
    })
    return outcomes
  }
  return outcomes
}

/** Starts the writer in the current scope; queued writes fail when the scope closes. */
export const make = (options: {
  readonly transactor: Transactor
  readonly maxBatchSize: number
}): Effect.Effect<Writer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Pending>()
    let closed = false

    const commitNext = Effect.flatMap(Queue.takeBetween(queue, 1, options.maxBatchSize), (chunk) =>
      Effect.sync(() => {
        for (const [item, exit] of runBatch(options.transactor, Array.from(chunk))) {
          Deferred.unsafeDone(item.deferred, exit)
        }
      }),
    )

    // Registered before the writer is forked, so it runs after the writer has stopped: writes
    // still queued at close fail instead of leaving their callers waiting forever.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Queue.takeAll(queue), (left) =>
        Effect.sync(() => {
          closed = true
          for (const item of left) {
            Deferred.unsafeDone(item.deferred, failure(item, "not written", "the store is closed"))
          }
        }),
      ),
    )
    yield* Effect.forkScoped(Effect.forever(commitNext))

    const submit = <A, E>(operation: string, run: Operation<A, E>): Effect.Effect<A, E | StoreError> =>
      Effect.suspend(() => {
        if (closed) return Effect.fail(new StoreError({ operation, message: "the store is closed" }))
        return Effect.flatMap(Deferred.make<unknown, unknown>(), (deferred) =>
          Effect.zipRight(
            Queue.offer(queue, { operation, run, deferred }),
            Deferred.await(deferred) as Effect.Effect<A, E | StoreError>,
          ),
        )
      })

    return { submit }
  })
