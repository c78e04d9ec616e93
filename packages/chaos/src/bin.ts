#!/usr/bin/env node
/**
 * `pnpm chaos [--runs N] [--instances K] [--kills K] [--seed S] [--store memory|sqlite|postgres]
 * [--path P] [--model-only | --process-only] [--generation 2025-11-25] [--push on]`: the long version of the chaos tests. Runs N model
 * sequences per store (with `--instances`, the fleet model: up to K live instances on one store)
 * and K real SIGKILLs, and ends with one summary line. `--push on` runs the instances with push
 * (`subscriptions/listen`) and adds stream drops and half-open streams to the fleet model's
 * steps (the fleet model then, one instance unless `--instances` says more); the killed processes
 * listen too.
 * `chaos: <N> sequences, <steps> steps, <crashes> crashes, <kills> kills, up to <K> instances, store <name>: <V> violations`.
 * A failure prints the seed and the shrunk sequence and exits 1; `--seed S --path P` replays
 * exactly that case.
 */
import { parseArgs } from "node:util"
import * as FleetModel from "./FleetModel.js"
import { complain, say } from "./internal/output.js"
import * as Model from "./Model.js"
import * as ProcessChaos from "./ProcessChaos.js"
import { ciFleetRuns, ciRuns, killsFor, seedFrom } from "./Settings.js"
import * as Stores from "./Stores.js"
import { emptyStats } from "./World.js"

const { values } = parseArgs({
  options: {
    runs: { type: "string" },
    instances: { type: "string" },
    kills: { type: "string" },
    seed: { type: "string" },
    store: { type: "string", multiple: true },
    path: { type: "string" },
    generation: { type: "string" },
    push: { type: "string" },
    "model-only": { type: "boolean", default: false },
    "process-only": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
})
if (values.help) {
  say(
    "usage: pnpm chaos [--runs N] [--instances K] [--kills K] [--seed S] [--store memory|sqlite|postgres]... [--path P] [--model-only | --process-only] [--generation 2025-11-25] [--push on|off]",
  )
  process.exit(0)
}
const positive = (text: string | undefined, name: string): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text)
  if (!Number.isInteger(n) || n < 0) {
    complain(`--${name} needs a non-negative integer`)
    process.exit(2)
  }
  return n
}
const runs = positive(values.runs, "runs")
// Push runs in the fleet model (one instance unless told more).
const instances = positive(values.instances, "instances") ?? (values.push === "on" ? 1 : undefined)
if (instances !== undefined && (instances < 1 || instances > 4)) {
  complain("--instances needs 1 to 4")
  process.exit(2)
}
const kills = positive(values.kills, "kills") ?? killsFor()
// The models' fake server speaks this generation (the process runs: 2026-07-28).
const generation = values.generation
if (generation !== undefined && generation !== "2025-11-25" && generation !== "2026-07-28") {
  complain("--generation needs 2025-11-25 or 2026-07-28")
  process.exit(2)
}
if (values.push !== undefined && values.push !== "on" && values.push !== "off") {
  complain("--push needs on or off")
  process.exit(2)
}
const push = values.push === "on"
const seed = positive(values.seed, "seed") ?? seedFrom()
const stores = (values.store ?? Stores.kinds) as ReadonlyArray<Stores.Kind>
for (const store of stores) {
  if (!Stores.kinds.includes(store)) {
    complain(`unknown store ${store} (memory, sqlite, postgres)`)
    process.exit(2)
  }
}

const totals = emptyStats()
/** The one line a run ends with. */
const summary = (violations: number) =>
  `chaos: ${totals.sequences} sequences, ${totals.steps} steps, ${totals.crashes} crashes, ${totals.kills} kills, up to ${instances ?? 1} instances, store ${stores.join(",")}${push ? ", push on" : ""}: ${violations} violations`
say(`chaos: seed ${seed}`)
try {
  if (!values["process-only"]) {
    for (const store of stores) {
      const path = values.path
      // Counted straight into the totals, so that a failed run's summary still has them.
      const before = { ...totals }
      const result =
        instances === undefined
          ? await Model.check({ store, runs: runs ?? ciRuns[store], seed, stats: totals, path, generation })
          : await FleetModel.check({
              store,
              runs: runs ?? ciFleetRuns[store],
              seed,
              instances,
              stats: totals,
              path,
              generation,
              push,
            })
      const d = (key: keyof typeof totals) => totals[key] - before[key]
      say(
        `  model ${store.padEnd(8)}: ${d("sequences")} sequences, ${d("steps")} steps, ${d("crashes")} crashes, ${d("restarts")} restarts, ${d("serverFaults")} server faults, ${d("storeFaults")} store faults, ${d("serverRestarts")} server restarts, ${d("checks")} checks (${(result.millis / 1000).toFixed(1)} s)`,
      )
    }
  }
  if (!values["model-only"] && kills > 0) {
    const result = await ProcessChaos.run({ kills, seed, push })
    totals.kills += result.kills
    totals.checks += result.checks
    say(
      `  processes     : ${result.kills} SIGKILLs, ${result.runs} client processes, ${result.calls} calls, ${result.checks} checks (${(result.millis / 1000).toFixed(1)} s)`,
    )
  }
} catch (error) {
  complain(error instanceof Error ? error.message : String(error))
  complain(`chaos: FAILED (seed ${seed})`)
  say(summary(1))
  process.exit(1)
}
say(summary(0))
process.exit(0)
