/**
 * The fleet property: fast-check generates fleet sequences, runs each (fleet-model.ts), and
 * shrinks a failure to a short sequence printed with its seed and path.
 */
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import { runFleetSequence } from "./fleet-model.js"
import { describeFleetStep, type FleetSequence, fleetSequenceArbitrary } from "./fleet-step.js"
import { InvariantViolation } from "./model.js"
import type { StoreKind } from "./stores.js"
import { emptyStats, type Stats } from "./world.js"

export interface FleetRunOptions {
  readonly store: StoreKind
  readonly runs: number
  readonly seed: number
  /** Live instances at most (1 to 4). */
  readonly instances: number
  readonly maxSteps?: number
  /** A counterexample path printed by a failed run: replays exactly that (shrunk) case. */
  readonly path?: string
  /** Where to count (so that a caller still has the totals when the run throws). */
  readonly stats?: Stats
}

export interface FleetRunResult {
  readonly stats: Stats
  readonly seed: number
  readonly millis: number
}

/** Describes a sequence, one step a line (for failures and the counterexample notes). */
export const describeFleetSequence = (sequence: FleetSequence): string =>
  [
    `  setup ${JSON.stringify(sequence.setup)}`,
    ...sequence.steps.map((step, i) => `  #${i} ${describeFleetStep(step)}`),
  ].join("\n")

/** Checks `runs` random fleet sequences; throws with the seed and the shrunk sequence on failure. */
export const checkFleet = async (options: FleetRunOptions): Promise<FleetRunResult> => {
  const stats = options.stats ?? emptyStats()
  const started = Date.now()
  const property = fc.asyncProperty(
    fleetSequenceArbitrary(options.instances, options.maxSteps ?? 25),
    (sequence) => Effect.runPromise(runFleetSequence(options.store, sequence, stats)),
  )
  const details = await fc.check(property, {
    numRuns: options.runs,
    seed: options.seed,
    ...(options.path === undefined ? {} : { path: options.path }),
  })
  if (details.failed) {
    const shrunk = details.counterexample?.[0]
    const error = details.errorInstance
    throw new InvariantViolation(
      [
        `chaos fleet (${options.store}, up to ${options.instances} instances) failed after ${details.numRuns} run(s), shrunk ${details.numShrinks}×.`,
        `Reproduce: pnpm chaos --store ${options.store} --instances ${options.instances} --seed ${details.seed} --path ${details.counterexamplePath ?? ""}`,
        "Shrunk sequence:",
        shrunk === undefined ? "  (none)" : describeFleetSequence(shrunk),
        `Error: ${error instanceof Error ? error.message : String(error)}`,
      ].join("\n"),
    )
  }
  return { stats, seed: options.seed, millis: Date.now() - started }
}

/** Replays one fleet sequence exactly (regression tests). */
export const replayFleet = (store: StoreKind, sequence: FleetSequence): Promise<Stats> => {
  const stats = emptyStats()
  return Effect.runPromise(runFleetSequence(store, sequence, stats)).then(() => stats)
}
