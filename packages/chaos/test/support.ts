import { expect, it } from "vitest"
import { checkFleet } from "../src/fleet-property.js"
import { checkModel, knownEarlyPollBugs } from "../src/model.js"
import { fleetRunsFor, pathFrom, runsFor, seedFrom } from "../src/settings.js"
import type { StoreKind } from "../src/stores.js"

/** One property per store: random sequences, every invariant after every step. */
export const modelProperty = (store: StoreKind) =>
  it(`keeps every invariant over random sequences of calls, crashes, restarts and faults (${store})`, async () => {
    const path = pathFrom()
    const result = await checkModel({
      store,
      runs: runsFor(store),
      seed: seedFrom(),
      tolerate: knownEarlyPollBugs,
      ...(path === undefined ? {} : { path }),
    })
    const { stats } = result
    console.log(
      `chaos ${store}: seed ${result.seed}: ${stats.sequences} sequences, ${stats.steps} steps, ${stats.crashes} crashes, ${stats.restarts} restarts, ${stats.serverFaults} server faults, ${stats.serverRestarts} server restarts, ${stats.checks} invariant checks in ${result.millis} ms`,
    )
    expect(stats.sequences).toBeGreaterThan(0)
  }, 600_000)

/** One fleet property per store: several live instances, every fleet invariant after every step. */
export const fleetProperty = (store: StoreKind, instances = 4) =>
  it(`keeps every fleet invariant with up to ${instances} live instances on one ${store} store`, async () => {
    const path = pathFrom()
    const result = await checkFleet({
      store,
      runs: fleetRunsFor(store),
      seed: seedFrom(),
      instances,
      ...(path === undefined ? {} : { path }),
    })
    const { stats } = result
    console.log(
      `chaos fleet ${store}: seed ${result.seed}: ${stats.sequences} sequences, ${stats.steps} steps, ${stats.crashes} crashes, ${stats.restarts} starts, ${stats.serverFaults} server faults, ${stats.checks} checks in ${result.millis} ms`,
    )
    expect(stats.sequences).toBeGreaterThan(0)
  }, 900_000)
