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
import { StoreError, type UpdateOptions } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
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
  /** Resumes the caller; an Either is an Effect, so an outcome resumes it as it is. */
  readonly resume: (outcome: Effect.Effect<unknown, unknown>) => void
}

export interface Writer {
  /**
   * Queues `run` for the next batch. A `routine` write (see `HandleStore.UpdateOptions`) may wait
   * up to the writer's commit delay for others to join its batch; any other write starts the
   * batch at the next turn of the event loop, taking the waiting routine writes with it.
   */
  readonly submit: <A, E>(
    operation: string,
    run: Operation<A, E>,
    options?: UpdateOptions,
  ) => Effect.Effect<A, E | StoreError>
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

const fail = (item: Pending, message: string, cause: unknown) =>
  item.resume(
    Either.left(
      new StoreError({ operation: item.operation, message: `${message}: ${describe(cause)}`, cause }),
    ),
  )

/**
 * Runs one batch to completion and resumes every caller in it: the writes that committed after
 * the commit, the others with a StoreError. Never throws.
 */
const runBatch = (transactor: Transactor, batch: ReadonlyArray<Pending>): void => {
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
      for (const item of remaining) fail(item, "could not start a write transaction", error)
      return
    }
    const outcomes: Array<Either.Either<unknown, unknown>> = []
    let poisoned = -1
    for (let index = 0; index < remaining.length; index++) {
      const item = remaining[index] as Pending
      try {
        outcomes.push(item.run())
      } catch (error) {
        poisoned = index
        rollback()
        fail(item, "the write failed and was rolled back", error)
        break
      }
    }
    if (poisoned >= 0) {
      remaining = remaining.filter((_, index) => index !== poisoned)
      continue
    }
    try {
      transactor.commit()
    } catch (error) {
      // Nothing of this batch is durable: every caller gets an error, and the connection is
      // left without an open transaction.
      rollback()
      for (const item of remaining) fail(item, "the commit failed; the write is not saved", error)
      return
    }
    for (let index = 0; index < remaining.length; index++) {
      ;(remaining[index] as Pending).resume(outcomes[index] as Either.Either<unknown, unknown>)
    }
    return
  }
}

/**
 * Starts the writer in the current scope. At close, writes already submitted are committed (their
 * callers are still waiting for them); later ones fail with a StoreError.
 *
 * There is no writer fiber: the first write into an empty queue schedules a flush with
 * `setImmediate`, which runs once every fiber that is ready has run, so everything they submit
 * meanwhile joins the batch. A lone caller waits one turn of the event loop. A lone routine
 * write waits up to `commitDelayMs` instead: polls spread evenly over time (one every few
 * milliseconds with thousands of tasks open) then share commits, where each would otherwise pay
 * a commit and an fsync of its own, most of a poll's cost in the store.
 */
export const make = (options: {
  readonly transactor: Transactor
  readonly maxBatchSize: number
  readonly commitDelayMs: number
}): Effect.Effect<Writer, never, Scope.Scope> =>
  Effect.gen(function* () {
    let queue: Array<Pending> = []
    let scheduled: ReturnType<typeof setImmediate> | undefined
    let delayed: ReturnType<typeof setTimeout> | undefined
    let closed = false

    const flush = () => {
      scheduled = undefined
      if (delayed !== undefined) {
        clearTimeout(delayed)
        delayed = undefined
      }
      while (queue.length > 0) {
        const batch = queue.length <= options.maxBatchSize ? queue : queue.slice(0, options.maxBatchSize)
        queue = batch === queue ? [] : queue.slice(options.maxBatchSize)
        runBatch(options.transactor, batch)
      }
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (scheduled !== undefined) clearImmediate(scheduled)
        flush()
        closed = true
      }),
    )

    const schedule = (routine: boolean) => {
      if (scheduled !== undefined) return
      if (routine && options.commitDelayMs > 0) {
        delayed ??= setTimeout(flush, options.commitDelayMs)
        return
      }
      scheduled = setImmediate(flush)
    }

    const submit = <A, E>(
      operation: string,
      run: Operation<A, E>,
      submitOptions?: UpdateOptions,
    ): Effect.Effect<A, E | StoreError> =>
      Effect.async<A, E | StoreError>((resume) => {
        if (closed) {
          resume(Effect.fail(new StoreError({ operation, message: "the store is closed" })))
          return
        }
        const item: Pending = {
          operation,
          run,
          resume: resume as (outcome: Effect.Effect<unknown, unknown>) => void,
        }
        queue.push(item)
        schedule(submitOptions?.routine === true)
        // An interrupted caller whose write has not started yet is taken out of the queue: it
        // is then never written. Once its batch has started it runs to the end.
        return Effect.sync(() => {
          const at = queue.indexOf(item)
          if (at >= 0) queue.splice(at, 1)
        })
      })

    return { submit }
  })
