/**
 * Runs a chaos property: fast-check generates sequences, each runs in its simulation, and a
 * failure is shrunk to a short sequence printed with the seed and path that replay it.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import { InvariantViolation } from "./Simulation.js"
import type * as Stores from "./Stores.js"
import * as World from "./World.js"

/**
 * A generated sequence: the setup it starts from and its steps.
 *
 * @since 0.2.0
 * @category models
 */
export interface Sequence<Setup, Step> {
  readonly setup: Setup
  readonly steps: ReadonlyArray<Step>
}

/**
 * One step a line (for failures and the counterexample notes).
 *
 * @since 0.2.0
 */
export const describe = <Setup, Step>(
  sequence: Sequence<Setup, Step>,
  describeStep: (step: Step) => string,
) =>
  [
    `  setup ${JSON.stringify(sequence.setup)}`,
    ...sequence.steps.map((step, i) => `  #${i} ${describeStep(step)}`),
  ].join("\n")

/**
 * @since 0.2.0
 * @category models
 */
export interface Options<Setup, Step> {
  /** What runs, for the message: `chaos (memory)`. */
  readonly title: string
  /** The `pnpm chaos` options that choose this property (`--store memory --instances 3`). */
  readonly command: string
  readonly arbitrary: fc.Arbitrary<Sequence<Setup, Step>>
  readonly run: (sequence: Sequence<Setup, Step>) => Promise<void>
  readonly describeStep: (step: Step) => string
  readonly runs: number
  readonly seed: number
  /** A counterexample path printed by a failed run: replays exactly that (shrunk) case. */
  readonly path?: string | undefined
}

/**
 * Checks `runs` random sequences; throws an InvariantViolation with the seed and the shrunk
 * sequence on failure.
 *
 * @since 0.2.0
 */
export const check = async <Setup, Step>(options: Options<Setup, Step>): Promise<void> => {
  const details = await fc.check(fc.asyncProperty(options.arbitrary, options.run), {
    numRuns: options.runs,
    seed: options.seed,
    ...(options.path === undefined ? {} : { path: options.path }),
  })
  if (!details.failed) return
  const shrunk = details.counterexample?.[0]
  const error = details.errorInstance
  const path = details.counterexamplePath ?? ""
  throw new InvariantViolation({
    message: [
      `${options.title} failed after ${details.numRuns} run(s), shrunk ${details.numShrinks}×.`,
      `Reproduce: CHAOS_SEED=${details.seed} CHAOS_PATH=${path} (pnpm chaos ${options.command} --seed ${details.seed} --path ${path})`,
      "Shrunk sequence:",
      shrunk === undefined ? "  (none)" : describe(shrunk, options.describeStep),
      `Error: ${error instanceof Error ? error.message : String(error)}`,
    ].join("\n"),
  })
}

/**
 * What a model's property is run with.
 *
 * @since 0.2.0
 * @category models
 */
export interface RunOptions {
  readonly store: Stores.Kind
  readonly runs: number
  readonly seed: number
  readonly maxSteps?: number | undefined
  /** A counterexample path printed by a failed run: replays exactly that (shrunk) case. */
  readonly path?: string | undefined
  /** Where to count (so that a caller still has the totals when the run throws). */
  readonly stats?: World.Stats | undefined
}

/**
 * @since 0.2.0
 * @category models
 */
export interface RunResult {
  readonly stats: World.Stats
  readonly seed: number
  readonly millis: number
}

/**
 * Checks a model's property as `options` say, counting into `options.stats` (or fresh counts);
 * `property` describes it, given where to count.
 *
 * @since 0.2.0
 */
export const run = async <Setup, Step>(
  options: RunOptions,
  property: (stats: World.Stats) => Omit<Options<Setup, Step>, "runs" | "seed" | "path">,
): Promise<RunResult> => {
  const stats = options.stats ?? World.emptyStats()
  const started = Date.now()
  await check({ ...property(stats), runs: options.runs, seed: options.seed, path: options.path })
  return { stats, seed: options.seed, millis: Date.now() - started }
}

/**
 * Replays one sequence exactly (regression tests); resolves with what it counted.
 *
 * @since 0.2.0
 */
export const replay = (sequence: (stats: World.Stats) => Effect.Effect<void>): Promise<World.Stats> => {
  const stats = World.emptyStats()
  return Effect.runPromise(sequence(stats)).then(() => stats)
}
