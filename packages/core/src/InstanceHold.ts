/**
 * One client per instance id in a process. Two clients of one process under one id would each
 * run a sweep as that id and take the other's live driver leases for a dead predecessor's (a
 * call marked in doubt and launched again): a store refuses the second one instead of sharing
 * the first one's hold. Refusing keeps the rule simple: every hold a client gets is new to this
 * process, so taking over the id's leases at start is always taking them from a process that
 * is gone.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as HandleStore from "./HandleStore.js"

/**
 * The ids held in one place (a process, or one in-memory store), by a key that names the store
 * and the id.
 *
 * @since 0.2.0
 * @category models
 */
export interface Holds {
  readonly keys: Set<string>
}

/**
 * @since 0.2.0
 * @category constructors
 */
export const make = (): Holds => ({ keys: new Set() })

/**
 * This process's holds: stores that other processes can open too (a file, a database) keep
 * theirs here, so two store layers over one file in one process still see each other.
 *
 * @since 0.2.0
 * @category constants
 */
export const thisProcess: Holds = make()

/**
 * Runs `take` (the store's own lock, which keeps other processes out) unless another client in
 * this process holds `key`; the key is marked before `take` starts, so two clients starting at
 * once cannot both get there, and freed only after `take`'s release has run.
 *
 * @since 0.2.0
 */
export const once = <E>(
  holds: Holds,
  key: string,
  instanceId: string,
  take: Effect.Effect<void, E, Scope.Scope>,
): Effect.Effect<void, E | HandleStore.InstanceIdInUse, Scope.Scope> =>
  Effect.zipRight(
    Effect.acquireRelease(
      Effect.suspend(() => {
        if (holds.keys.has(key))
          return Effect.fail(
            new HandleStore.InstanceIdInUse({ instanceId, holder: "another client in this process" }),
          )
        holds.keys.add(key)
        return Effect.void
      }),
      () => Effect.sync(() => holds.keys.delete(key)),
    ),
    take,
  )

/**
 * What a store knows about the ids it holds: those it can no longer prove it holds (a lost
 * database session, a lock row another process took over), and why. While any is lost, the
 * store writes nothing (see `HandleStoreDriver.writable`): another process may be driving the
 * same rows under that id.
 *
 * @since 0.2.0
 * @category models
 */
export interface Guard {
  /** The ids its clients hold, for a store no other store can reach (in memory). */
  readonly holds: Holds
  readonly lost: Map<string, string>
  /** Fails with a `StoreError` naming `operation` while an id is lost. */
  readonly writable: (operation: string) => Effect.Effect<void, HandleStore.StoreError>
}

/**
 * @since 0.2.0
 * @category constructors
 */
export const makeGuard = (): Guard => {
  const lost = new Map<string, string>()
  return {
    holds: make(),
    lost,
    writable: (operation) =>
      Effect.suspend(() => {
        const first = lost.entries().next()
        if (first.done === true) return Effect.void
        const [instanceId, why] = first.value
        return Effect.fail(
          new HandleStore.StoreError({
            operation,
            message: `the instance lock of ${JSON.stringify(instanceId)} was lost (${why}): nothing is written as that instance until the lock is held again`,
          }),
        )
      }),
  }
}
