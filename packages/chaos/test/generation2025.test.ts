/**
 * The chaos model against the fake server in its 2025-11-25 mode (initialize and sessions,
 * CreateTaskResult, tasks/get and tasks/result, questions on the tasks/result stream): the same
 * steps, faults, crashes and server restarts, every invariant after every step, for the
 * single-instance model and the fleet. `pnpm chaos --generation 2025-11-25 --runs N [--instances K]`
 * is the long version.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as FleetModel from "../src/FleetModel.js"
import * as Model from "../src/Model.js"
import { pathFrom, seedFrom } from "../src/Settings.js"
import * as Tools from "../src/Tools.js"

/** Sequences per run: short, the 2026-07-28 properties carry the bulk. */
const runs = (): number => {
  const fromEnv = Number(process.env.CHAOS_RUNS)
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 60
}

describe("chaos: model-based, fake server speaking 2025-11-25", () => {
  it("every sequence's server speaks 2025-11-25, with no multi round-trip tool", () => {
    for (const sequence of fc.sample(Model.sequenceArbitrary(5, "2025-11-25"), 20)) {
      expect(sequence.setup.generation).toBe("2025-11-25")
    }
    const tools = Tools.toolsFor("2025-11-25")
    expect(tools.map((tool) => tool.name)).toEqual(Tools.names)
    expect(tools.filter((tool) => tool.mrtrRounds !== undefined)).toEqual([])
  })

  it("keeps every invariant over random sequences of calls, crashes, restarts and faults (memory)", async () => {
    const path = pathFrom()
    const result = await Model.check({
      store: "memory",
      runs: runs(),
      seed: seedFrom(),
      tolerate: Model.knownEarlyPollBugs,
      generation: "2025-11-25",
      ...(path === undefined ? {} : { path }),
    })
    const { stats } = result
    console.log(
      `chaos 2025-11-25 memory: seed ${result.seed}: ${stats.sequences} sequences, ${stats.steps} steps, ${stats.crashes} crashes, ${stats.serverRestarts} server restarts, ${stats.checks} invariant checks in ${result.millis} ms`,
    )
    expect(stats.sequences).toBeGreaterThan(0)
  }, 600_000)

  it("keeps every fleet invariant with up to 3 live instances (memory)", async () => {
    const result = await FleetModel.check({
      store: "memory",
      runs: Math.ceil(runs() / 2),
      seed: seedFrom(),
      instances: 3,
      generation: "2025-11-25",
    })
    const { stats } = result
    console.log(
      `chaos fleet 2025-11-25 memory: seed ${result.seed}: ${stats.sequences} sequences, ${stats.steps} steps, ${stats.restarts} starts, ${stats.checks} checks in ${result.millis} ms`,
    )
    expect(stats.sequences).toBeGreaterThan(0)
  }, 600_000)
})
