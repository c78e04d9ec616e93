/**
 * The instance lock as the simulation's processes see it. They are clients of one JS process, so
 * the store's own lock would take a restart under a "killed" process's id for a second client of
 * that process and refuse it (and its release is real I/O a crash cannot wait for). The world
 * keeps the holds instead: one live process per id, and a crash frees its process's hold at once,
 * as the OS frees a killed process's locks. The stores' own locks are tested by their packages and
 * by the chaos runs with real processes.
 */
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** Which process (by its number in the world) holds each instance id. */
export type Holds = Map<string, number>

export const make = (): Holds => new Map()

/** `HandleStore.lockInstance` for process `proc`. */
export const lock = (
  holds: Holds,
  proc: number,
  instanceId: string,
): Effect.Effect<void, HandleStore.InstanceIdInUse, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const holder = holds.get(instanceId)
      if (holder !== undefined && holder !== proc)
        return Effect.fail(
          new HandleStore.InstanceIdInUse({ instanceId, holder: `simulated process ${holder}` }),
        )
      holds.set(instanceId, proc)
      return Effect.void
    }),
    () => Effect.sync(() => free(holds, proc)),
  )

/** What a crash does: every id `proc` held is free. */
export const free = (holds: Holds, proc: number): void => {
  for (const [instanceId, holder] of holds) if (holder === proc) holds.delete(instanceId)
}
