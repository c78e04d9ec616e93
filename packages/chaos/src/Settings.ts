/**
 * Run counts and seeds. CI runs a moderate number of sequences per store; `CHAOS_RUNS` (or
 * `pnpm chaos --runs N`) asks for more. `CHAOS_SEED` replays a printed seed.
 *
 * @since 0.1.0
 */
import type * as Stores from "./Stores.js"

/**
 * Sequences per store in CI: sized so that the whole chaos package runs in a few minutes.
 *
 * @since 0.1.0
 */
export const ciRuns: Readonly<Record<Stores.Kind, number>> = { memory: 150, sqlite: 80, postgres: 50 }

/**
 * Fleet sequences per store in CI (several live instances each: slower than the single model).
 *
 * @since 0.1.0
 */
export const ciFleetRuns: Readonly<Record<Stores.Kind, number>> = { memory: 200, sqlite: 100, postgres: 40 }

/** @since 0.1.0 */
export const fleetRunsFor = (store: Stores.Kind): number => {
  const fromEnv = Number(process.env.CHAOS_FLEET_RUNS)
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : ciFleetRuns[store]
}

/**
 * While hunting for one class of violation past another already known (a bug with its
 * regression test), CHAOS_IGNORE=regex,regex drops violations whose message matches.
 *
 * @since 0.1.0
 */
export const ignoredViolations = (): ReadonlyArray<RegExp> =>
  (process.env.CHAOS_IGNORE ?? "")
    .split(",")
    .filter((text) => text !== "")
    .map((text) => new RegExp(text))

/** @since 0.1.0 */
export const runsFor = (store: Stores.Kind): number => {
  const fromEnv = Number(process.env.CHAOS_RUNS)
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : ciRuns[store]
}

/**
 * The seed: CHAOS_SEED when set, else a fresh one (always printed, so a failure reproduces).
 *
 * @since 0.1.0
 */
export const seedFrom = (): number => {
  const fromEnv = Number(process.env.CHAOS_SEED)
  return Number.isInteger(fromEnv) && process.env.CHAOS_SEED !== ""
    ? fromEnv
    : (Date.now() ^ (process.pid << 8)) >>> 0
}

/** @since 0.1.0 */
export const pathFrom = (): string | undefined => {
  const path = process.env.CHAOS_PATH
  return path === undefined || path === "" ? undefined : path
}

/**
 * SIGKILLs of real client processes per run: CHAOS_KILLS, at least 50 in CI.
 *
 * @since 0.1.0
 */
export const killsFor = (): number => {
  const fromEnv = Number(process.env.CHAOS_KILLS)
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 50
}
