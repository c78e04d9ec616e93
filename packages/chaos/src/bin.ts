#!/usr/bin/env node
/**
 * `pnpm chaos [--runs N] [--kills K] [--seed S] [--store memory|sqlite|postgres] [--path P]
 * [--model-only | --process-only]`: the long version of the chaos tests. Runs N model sequences
 * per store and K real SIGKILLs, and prints the totals. A failure prints the seed and the shrunk
 * sequence; `--seed S --path P` replays exactly that case.
 */
import { parseArgs } from "node:util"
import { checkModel } from "./model.js"
import { runProcessChaos } from "./process-chaos.js"
import { ciRuns, killsFor, seedFrom } from "./settings.js"
import { type StoreKind, storeKinds } from "./stores.js"
import { addStats, emptyStats } from "./world.js"

const { values } = parseArgs({
  options: {
    runs: { type: "string" },
    kills: { type: "string" },
    seed: { type: "string" },
    store: { type: "string", multiple: true },
    path: { type: "string" },
    "model-only": { type: "boolean", default: false },
    "process-only": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
})
if (values.help) {
  console.log(
    "usage: pnpm chaos [--runs N] [--kills K] [--seed S] [--store memory|sqlite|postgres]... [--path P] [--model-only | --process-only]",
  )
  process.exit(0)
}
const positive = (text: string | undefined, name: string): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text)
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} needs a non-negative integer`)
    process.exit(2)
  }
  return n
}
const runs = positive(values.runs, "runs")
const kills = positive(values.kills, "kills") ?? killsFor()
const seed = positive(values.seed, "seed") ?? seedFrom()
const stores = (values.store ?? storeKinds) as ReadonlyArray<StoreKind>
for (const store of stores) {
  if (!storeKinds.includes(store)) {
    console.error(`unknown store ${store} (memory, sqlite, postgres)`)
    process.exit(2)
  }
}

const started = Date.now()
const totals = emptyStats()
console.log(`chaos: seed ${seed}`)
try {
  if (!values["process-only"]) {
    for (const store of stores) {
      const result = await checkModel({
        store,
        runs: runs ?? ciRuns[store],
        seed,
        ...(values.path === undefined ? {} : { path: values.path }),
      })
      const s = result.stats
      console.log(
        `  model ${store.padEnd(8)}: ${s.sequences} sequences, ${s.steps} steps, ${s.crashes} crashes, ${s.restarts} restarts, ${s.serverFaults} server faults, ${s.serverRestarts} server restarts, ${s.checks} checks (${(result.millis / 1000).toFixed(1)} s)`,
      )
      addStats(totals, s)
    }
  }
  if (!values["model-only"] && kills > 0) {
    const result = await runProcessChaos({ kills, seed })
    totals.kills += result.kills
    totals.checks += result.checks
    console.log(
      `  processes     : ${result.kills} SIGKILLs, ${result.runs} client processes, ${result.calls} calls, ${result.checks} checks (${(result.millis / 1000).toFixed(1)} s)`,
    )
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error))
  console.error(`chaos: FAILED (seed ${seed})`)
  process.exit(1)
}
console.log(
  `chaos: OK: ${totals.sequences} sequences, ${totals.steps} steps, ${totals.crashes} crashes, ${totals.kills} kills, ${totals.checks} invariant checks in ${((Date.now() - started) / 1000).toFixed(1)} s`,
)
process.exit(0)
