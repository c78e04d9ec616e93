import { expect, it } from "vitest"
import { checkModel, knownEarlyPollBugs } from "../src/model.js"
import { pathFrom, runsFor, seedFrom } from "../src/settings.js"
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
