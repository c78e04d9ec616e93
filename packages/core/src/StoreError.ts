/**
 * How a store fails: the failures every operation of the port may report as themselves, and
 * `StoreError` for everything else.
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * The failures a store reports as themselves: `StoreError.refail` lets them through and wraps
 * anything else.
 *
 * @since 0.2.0
 * @category errors
 */
export type StoreFailure = StoreError | VersionConflict | TaskIdTaken | InstanceIdInUse

const isStoreFailure = (error: unknown): error is StoreFailure =>
  error instanceof StoreError ||
  error instanceof VersionConflict ||
  error instanceof TaskIdTaken ||
  error instanceof InstanceIdInUse

const messageOf = (cause: unknown): string =>
  cause instanceof Error || (typeof cause === "object" && cause !== null && "message" in cause)
    ? String((cause as { readonly message: unknown }).message)
    : String(cause)

/**
 * The store could not do its job (I/O, driver, corrupt row). Never used for "not found" (a
 * missing row is `None`, `false` or a `VersionConflict`, whichever the operation promises) or
 * for a lost compare-and-set.
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  operation: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect),
}) {
  /**
   * Reports every failure of `effect` as a StoreError of `operation`, the driver's own failure
   * kept as its cause; the store's typed failures (`StoreFailure`) pass as they are. The one
   * place a driver error (an SQL error, a schema error) becomes a store error.
   *
   * @since 0.2.0
   */
  static refail(
    operation: string,
    describe: (cause: unknown) => string = messageOf,
  ): <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, Extract<E, StoreFailure> | StoreError, R> {
    return <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.mapError(effect, (cause): Extract<E, StoreFailure> | StoreError =>
        isStoreFailure(cause)
          ? (cause as Extract<E, StoreFailure>)
          : new StoreError({ operation, message: describe(cause), cause }),
      )
  }
}

/**
 * A compare-and-set lost: the row changed since it was read (another fiber, another instance, or
 * a lease that was taken over), or is gone. The writer must re-read before deciding anything.
 *
 * @since 0.1.0
 * @category errors
 */
export class VersionConflict extends Schema.TaggedError<VersionConflict>()("VersionConflict", {
  scope: Schema.String,
  key: Schema.String,
  expectedVersion: Schema.Number,
}) {
  override get message(): string {
    return `the call ${JSON.stringify(this.key)} in scope ${JSON.stringify(this.scope)} changed since it was read (version ${this.expectedVersion} expected), or is gone; read it again`
  }
}

/**
 * The write would give a server task id to a second row: the server handed one task id out for
 * two calls. A task id names one task, so it is held by one row; the second call must end
 * visibly instead of being merged into the first.
 *
 * @since 0.2.0
 * @category errors
 */
export class TaskIdTaken extends Schema.TaggedError<TaskIdTaken>()("TaskIdTaken", {
  scope: Schema.String,
  key: Schema.String,
  serverId: Schema.String,
}) {
  override get message(): string {
    return `the server gave the call ${JSON.stringify(this.key)} in scope ${JSON.stringify(this.scope)} a task id another call holds: one task id names one task, so this call cannot take it`
  }
}

/**
 * Another live client (another process, or another client of this process) holds this instance
 * id on the store. Clients sharing a store need distinct ids; two live clients under one id would
 * each take the other's rows for its own.
 *
 * @since 0.2.0
 * @category errors
 */
export class InstanceIdInUse extends Schema.TaggedError<InstanceIdInUse>()("InstanceIdInUse", {
  instanceId: Schema.String,
  /** Who holds it, as far as the store can tell (a process id, a database backend). */
  holder: Schema.String,
}) {
  override get message(): string {
    return `instance id ${JSON.stringify(this.instanceId)} is held by ${this.holder}; give each live client sharing a store its own instanceId`
  }
}
