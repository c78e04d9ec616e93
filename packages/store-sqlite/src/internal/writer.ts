/**
 * Group commit. Writes are queued and run together as one transaction with one fsync; a caller
 * resumes only after the commit that holds its write, so "returned" means "durable".
 *
 * A batch runs synchronously, from BEGIN to COMMIT: nothing else runs on the event loop
 * meanwhile, so no reader can see a write that is not yet committed, and a write costs its
 * statement and a share of one fsync, not a round of fiber scheduling per statement. Writes
 * submitted while a batch commits wait for the next one, so batches form on their own under
 * load.
 */
import { StoreError } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
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
  readonly resume: (exit: Exit.Exit<unknown, unknown>) => void
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

/**
 * Starts the writer in the current scope. At close, writes already submitted are committed (their
 * callers are still waiting for them); later ones fail with a StoreError.
 *
 * There is no writer fiber and no timer: the first write into an empty queue schedules a flush
 * with `setImmediate`, which runs once every fiber that is ready has run, so everything they
 * submit meanwhile joins the batch. A lone caller waits one turn of the event loop.
 */
export const make = (options: {
  readonly transactor: Transactor
  readonly maxBatchSize: number
}): Effect.Effect<Writer, never, Scope.Scope> =>
  Effect.gen(function* () {
    let queue: Array<Pending> = []
    let scheduled: ReturnType<typeof setImmediate> | undefined
    let closed = false

    const flush = () => {
      scheduled = undefined
      while (queue.length > 0) {
        const batch = queue.length <= options.maxBatchSize ? queue : queue.slice(0, options.maxBatchSize)
        queue = batch === queue ? [] : queue.slice(options.maxBatchSize)
        for (const [item, exit] of runBatch(options.transactor, batch)) item.resume(exit)
      }
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (scheduled !== undefined) clearImmediate(scheduled)
        flush()
        closed = true
      }),
    )

    const submit = <A, E>(operation: string, run: Operation<A, E>): Effect.Effect<A, E | StoreError> =>
      Effect.async<A, E | StoreError>((resume) => {
        if (closed) {
          resume(Effect.fail(new StoreError({ operation, message: "the store is closed" })))
          return
        }
        const item: Pending = {
          operation,
          run,
          resume: (exit) => resume(exit as Exit.Exit<A, E | StoreError>),
        }
        queue.push(item)
        if (scheduled === undefined) scheduled = setImmediate(flush)
        // An interrupted caller whose write has not started yet is taken out of the queue: it
        // is then never written. Once its batch has started it runs to the end.
        return Effect.sync(() => {
          const at = queue.indexOf(item)
          if (at >= 0) queue.splice(at, 1)
        })
      })

    return { submit }
  })
