// What the server check (conformance-check.mjs) and the client check (conformance-client/check.mjs)
// share: running the official suite through npx, reading a scenario's checks, running scenarios a
// few at a time, and comparing the failed checks with a baseline.
import { readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { runGroup } from "./testing/process-groups.mjs"

export const root = resolve(import.meta.dirname, "..")
export const concurrency = Number(process.env.CONFORMANCE_CONCURRENCY ?? 4)
export const keep = process.env.CONFORMANCE_KEEP_RESULTS === "1"
/** The revision the fake server and the client speak. */
export const SPEC_VERSION = "2026-07-28"

const version = process.env.CONFORMANCE_VERSION ?? "0.2.0-alpha.12"
const nodeMajor = Number(process.versions.node.split(".")[0])
/** `npx` arguments that start the suite. It needs Node >= 22: borrow one through npx when this Node is older. */
export const suite = [
  "-y",
  ...(nodeMajor < 22 ? ["-p", "node@22"] : []),
  "-p",
  `@modelcontextprotocol/conformance@${version}`,
  "conformance",
]

/** Runs `npx` with `args` in its own process group (killed whole on timeout). */
export const run = (args, { timeoutMs }) => runGroup("npx", args, { cwd: tmpdir(), timeoutMs })

/** The checks a scenario run wrote under `out` (none when it did not run). */
export const readChecks = (out) => {
  const dirs = (() => {
    try {
      return readdirSync(out)
    } catch {
      return []
    }
  })()
  return dirs.flatMap((dir) => {
    try {
      return JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8"))
    } catch {
      return []
    }
  })
}

/** Runs `runScenario` over `scenarios`, `concurrency` at a time, and collects the checks. */
export const runAll = async (scenarios, runScenario) => {
  const results = []
  const queue = [...scenarios]
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) {
        results.push(...(await runScenario(scenario)))
      }
    }),
  )
  return results
}

/** The baseline file at the repository's root, with its expected failures keyed `scenario:check`. */
export const readBaseline = (file) => {
  const baseline = JSON.parse(readFileSync(join(root, file), "utf8"))
  const expected = new Map(
    baseline.expectedFailures.map((entry) => [`${entry.scenario}:${entry.check}`, entry]),
  )
  return { baseline, expected }
}

/**
 * Prints each scenario's checks and exits non-zero on an unexpected failure or a stale baseline
 * entry. `okWhenExpected` prints "ok*" for a scenario whose every failure the baseline expects;
 * `describe` names a check in the unexpected-failure line.
 */
export const compareWithBaseline = (
  scenarios,
  results,
  expected,
  { prefix, okWhenExpected, describe = (check) => check.id },
) => {
  const unexpected = []
  const seenExpected = new Set()
  for (const scenario of scenarios) {
    const checks = results.filter((check) => check.scenario === scenario)
    const counts = { SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0, INFO: 0 }
    for (const check of checks) counts[check.status] = (counts[check.status] ?? 0) + 1
    const allExpected =
      okWhenExpected &&
      checks.every((check) => check.status !== "FAILURE" || expected.has(`${scenario}:${check.id}`))
    // "ok*": every failure is one the baseline expects (a bug in the suite).
    const label = counts.FAILURE === 0 ? "ok  " : allExpected ? "ok* " : "FAIL"
    console.log(
      `${label} ${scenario}: ${counts.SUCCESS} passed, ${counts.FAILURE} failed, ${counts.WARNING} warnings, ${counts.SKIPPED} skipped`,
    )
    for (const check of checks) {
      if (check.status === "WARNING") console.log(`       warning ${check.id}: ${check.errorMessage ?? ""}`)
      if (check.status !== "FAILURE") continue
      const key = `${scenario}:${check.id}`
      if (expected.has(key)) {
        seenExpected.add(key)
        console.log(`       expected failure ${check.id}: ${expected.get(key).reason}`)
      } else {
        unexpected.push(check)
        console.log(`       UNEXPECTED failure ${describe(check)}: ${check.errorMessage ?? ""}`)
      }
    }
  }
  const stale = [...expected.keys()].filter((key) => !seenExpected.has(key))
  for (const key of stale) console.log(`stale baseline entry (now passes, remove it): ${key}`)
  if (unexpected.length > 0 || stale.length > 0) {
    console.log(
      `${prefix}: ${unexpected.length} unexpected failure(s), ${stale.length} stale baseline entr(ies)`,
    )
    process.exit(1)
  }
  console.log(`${prefix}: all checks pass (or fail as the baseline expects)`)
}

/** Runs `main`, printing a failure under `prefix` and exiting non-zero. */
export const runMain = (prefix, main) =>
  main().catch((error) => {
    console.error(`${prefix}: ${error instanceof Error ? error.stack : String(error)}`)
    process.exit(1)
  })
