import { expect, it } from "vitest"
import * as FleetModel from "../src/FleetModel.js"
import * as Model from "../src/Model.js"
import { fleetRunsFor, pathFrom, runsFor, seedFrom } from "../src/Settings.js"
import type * as Stores from "../src/Stores.js"

/** One property per store: random sequences, every invariant after every step. */
export const modelProperty = (store: Stores.Kind) =>
  it(`keeps every invariant over random sequences of calls, crashes, restarts and faults (${store})`, async () => {
    const path = pathFrom()
    const result = await Model.check({
      store,
      runs: runsFor(store),
      seed: seedFrom(),
      tolerate: Model.knownEarlyPollBugs,
      ...(path === undefined ? {} : { path }),
    })
    const { stats } = result
    console.log(
      `chaos ${store}: seed ${result.seed}: ${stats.sequences} sequences, ${stats.steps} steps, ${stats.crashes} crashes, ${stats.restarts} restarts, ${stats.serverFaults} server faults, ${stats.serverRestarts} server restarts, ${stats.checks} invariant checks in ${result.millis} ms`,
    )
    expect(stats.sequences).toBeGreaterThan(0)
  }, 600_000)

/** One fleet property per store: several live instances, every fleet invariant after every step. */
export const fleetProperty = (store: Stores.Kind, instances = 4, push = false) =>
  it(`keeps every fleet invariant with up to ${instances} live instances on one ${store} store${push ? ", push on" : ""}`, async () => {
    const path = pathFrom()
    const result = await FleetModel.check({
      store,
      // Push runs beside the polling ones: a quarter of their sequences.
      runs: push ? Math.max(1, Math.ceil(fleetRunsFor(store) / 4)) : fleetRunsFor(store),
      seed: seedFrom(),
      instances,
      push,
      ...(path === undefined ? {} : { path }),
    })
    const { stats } = result
    console.log(
      `chaos fleet ${store}: seed ${result.seed}: ${stats.sequences} sequences, ${stats.steps} steps, ${stats.crashes} crashes, ${stats.restarts} starts, ${stats.serverFaults} server faults, ${stats.checks} checks in ${result.millis} ms`,
    )
    expect(stats.sequences).toBeGreaterThan(0)
  }, 900_000)
