/**
 * Group commit. Every write (begin, update, claimDue, release) is queued to one writer fiber,
 * which runs whatever has queued up as a single transaction and fsyncs once for all of them.
 * A caller resumes only after the commit that holds its write, so "returned" means "durable".
 *
 * better-sqlite3 is synchronous: while the writer commits, no other fiber runs, and every write
 * submitted meanwhile waits in the queue for the next batch. Batches therefore form on their
 * own under load, and a lone caller never waits on a timer.
 */
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import { StoreError } from "@mcp-handles/core/HandleStore"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/**
 * One write, run inside the batch's transaction. It may fail with its own typed error (a lost
 * compare-and-set): that fails only this write. A SqlError or a defect fails this write too,
 * and the rest of the batch is re-run without it, so one bad write never takes others down.
 */
export type Operation<A, E> = (connection: Connection) => Effect.Effect<A, E>

interface Pending {
  readonly operation: string
  readonly run: Operation<unknown, unknown>
  readonly deferred: Deferred.Deferred<unknown, unknown>
}

export interface Writer {
  readonly submit: <A, E>(
    operation: string,
    run: Operation<A, E>,
  ) => Effect.Effect<A, Exclude<E, SqlError> | StoreError>
}

const isPoisoned = <E>(exit: Exit.Exit<unknown, E>): boolean =>
  Exit.isFailure(exit) &&
  (Cause.isDie(exit.cause) ||
    Cause.isInterrupted(exit.cause) ||
    Cause.failureOption(exit.cause).pipe((failure) => failure._tag === "Some" && isSqlError(failure.value)))

const isSqlError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "SqlError"

const asStoreError = (operation: string, message: string, cause: Cause.Cause<unknown>) =>
  new StoreError({ operation, message, cause: Cause.squash(cause) })

/**
 * Starts the writer in the current scope. `reserve` gives exclusive use of the connection for a
 * batch (readers wait for the commit, so they never see a write that is not yet durable).
 */
export const make = (options: {
  readonly reserve: Effect.Effect<Connection, unknown, Scope.Scope>
  readonly maxBatchSize: number
}): Effect.Effect<Writer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Pending>()
    let closed = false

    const settle = (item: Pending, exit: Exit.Exit<unknown, unknown>) => Deferred.done(item.deferred, exit)

    const failAll = (items: ReadonlyArray<Pending>, message: string, cause: Cause.Cause<unknown>) =>
      Effect.forEach(
        items,
        (item) => Deferred.fail(item.deferred, asStoreError(item.operation, message, cause)),
        { discard: true },
      )

    const statement = (connection: Connection, text: string) => connection.execute(text, [], undefined)

    const runBatch = (connection: Connection, batch: ReadonlyArray<Pending>) =>
      Effect.gen(function* () {
        let remaining = batch
        while (remaining.length > 0) {
          // IMMEDIATE takes the write lock up front (waiting up to the busy timeout for another
          // process), instead of failing half-way when a read would have to become a write.
          const begun = yield* Effect.exit(statement(connection, "BEGIN IMMEDIATE"))
          if (Exit.isFailure(begun)) {
            return yield* failAll(remaining, "could not start a write transaction", begun.cause)
          }
          const outcomes: Array<Exit.Exit<unknown, unknown>> = []
          let poisoned = -1
          for (const [index, item] of remaining.entries()) {
            const exit = yield* Effect.exit(item.run(connection))
            if (isPoisoned(exit)) {
              poisoned = index
              const cause = Exit.isFailure(exit) ? exit.cause : Cause.empty
              yield* Effect.exit(statement(connection, "ROLLBACK"))
              yield* failAll([item], "the write failed and was rolled back", cause)
              break
            }
            outcomes.push(exit)
          }
          if (poisoned >= 0) {
            remaining = remaining.filter((_, index) => index !== poisoned)
            continue
          }
          const committed = yield* Effect.exit(statement(connection, "COMMIT"))
          if (Exit.isFailure(committed)) {
            // A failed COMMIT may leave the transaction open; roll it back so the connection is
            // usable again. Nothing of this batch is durable, so every caller gets an error.
            yield* Effect.exit(statement(connection, "ROLLBACK"))
            return yield* failAll(remaining, "the commit failed; the write is not saved", committed.cause)
          }
          for (const [index, item] of remaining.entries()) {
            yield* settle(item, outcomes[index] ?? Exit.void)
          }
          return
        }
      })

    const commitNext = Effect.gen(function* () {
      const batch = Array.from(yield* Queue.takeBetween(queue, 1, options.maxBatchSize))
      yield* Effect.scoped(Effect.flatMap(options.reserve, (connection) => runBatch(connection, batch))).pipe(
        Effect.catchAllCause((cause) => failAll(batch, "could not reach the database", cause)),
        // A batch in flight always finishes, so no caller is left waiting on a write that
        // was half done when the store closed.
        Effect.uninterruptible,
      )
    })

    // Registered before the writer is forked, so it runs after the writer has stopped: writes
    // still queued at close fail instead of hanging their callers.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        closed = true
        const left = yield* Queue.takeAll(queue)
        yield* failAll(Array.from(left), "the store is closed", Cause.empty)
      }),
    )
    yield* Effect.forkScoped(Effect.forever(commitNext))

    const submit = <A, E>(
      operation: string,
      run: Operation<A, E>,
    ): Effect.Effect<A, Exclude<E, SqlError> | StoreError> =>
      Effect.suspend(() => {
        if (closed) return Effect.fail(new StoreError({ operation, message: "the store is closed" }))
        return Effect.flatMap(Deferred.make<unknown, unknown>(), (deferred) =>
          Effect.zipRight(
            Queue.offer(queue, { operation, run: run as Operation<unknown, unknown>, deferred }),
            Deferred.await(deferred) as Effect.Effect<A, Exclude<E, SqlError> | StoreError>,
          ),
        )
      })

    return { submit }
  })
