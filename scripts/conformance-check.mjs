// Runs the official conformance scenarios against the fake server and compares with the baseline.
// Called by scripts/conformance.sh (which builds the package first).
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import {
  compareWithBaseline,
  keep,
  readBaseline,
  readChecks,
  root,
  run,
  runAll,
  runMain,
  SPEC_VERSION,
  suite,
} from "./conformance-common.mjs"
import { killGroup, spawnGroup } from "./testing/process-groups.mjs"

const timeoutMs = 300_000

const startServer = () =>
  new Promise((resolvePromise, reject) => {
    // In a process group of its own, killed whole however this script ends.
    const child = spawnGroup(
      process.execPath,
      [join(root, "packages/fake-server/dist/bin.js"), "--profile", "conformance", "--port", "0"],
      { stdio: ["ignore", "pipe", "inherit"] },
    )
    process.once("exit", () => killGroup(child))
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`fake-mcp-server exited early (${code})`)))
    createInterface({ input: child.stdout }).once("line", (url) => resolvePromise({ child, url: url.trim() }))
  })

/** Every server scenario of the suite with the revisions it applies to (`extension` for extension ones). */
const listServerScenarios = async () => {
  const listed = await run([...suite, "list", "--server"], { timeoutMs })
  const scenarios = [...listed.stdout.matchAll(/^\s*-\s+([\w-]+)\s+\[([^\]]*)\]/gm)].map((match) => ({
    name: match[1],
    versions: match[2].split(",").map((version) => version.trim()),
  }))
  if (scenarios.length === 0) throw new Error(`could not list the suite's scenarios:\n${listed.stderr}`)
  return scenarios
}

/**
 * Every scenario runs unless the baseline says why it does not apply; a scenario of neither this
 * revision nor an extension that the baseline does not list is an error (a new suite version
 * added it: decide), as is a baseline entry naming a scenario the suite no longer has.
 */
const selectScenarios = (listed, notApplicable) => {
  const known = new Set(listed.map((scenario) => scenario.name))
  const problems = [...notApplicable.keys()]
    .filter((name) => !known.has(name))
    .map((name) => `baseline lists ${name} as not applicable, but the suite has no such scenario`)
  const selected = []
  for (const scenario of listed) {
    if (notApplicable.has(scenario.name)) continue
    const dated = scenario.versions.includes(SPEC_VERSION)
    if (!dated && !scenario.versions.includes("extension")) {
      problems.push(
        `${scenario.name} [${scenario.versions.join(",")}] is not a ${SPEC_VERSION} scenario: list it under notApplicable with its reason`,
      )
      continue
    }
    selected.push({ name: scenario.name, dated })
  }
  return { selected, problems }
}

const runScenario = async (url, { name: scenario, dated }, resultsRoot) => {
  const out = join(resultsRoot, scenario)
  const args = [...suite, "server", "--url", url, "--scenario", scenario, "-o", out]
  if (dated) args.push("--spec-version", SPEC_VERSION)
  const { code, stderr } = await run(args, { timeoutMs })
  const checks = readChecks(out)
  if (checks.length === 0) {
    return [
      {
        scenario,
        id: "(scenario did not run)",
        status: "FAILURE",
        errorMessage: `exit ${code}: ${stderr.slice(-2000)}`,
      },
    ]
  }
  return checks.map((check) => ({ scenario, ...check }))
}

const main = async () => {
  const { baseline, expected } = readBaseline("conformance-baseline.json")
  const notApplicable = new Map(baseline.notApplicable.map((entry) => [entry.scenario, entry.reason]))
  const { selected, problems } = selectScenarios(await listServerScenarios(), notApplicable)
  if (problems.length > 0) {
    for (const problem of problems) console.log(`baseline: ${problem}`)
    process.exit(1)
  }
  const scenarios = selected.map((scenario) => scenario.name)
  const resultsRoot = mkdtempSync(join(tmpdir(), "mcp-conformance-"))
  const { child, url } = await startServer()
  console.log(
    `fake-mcp-server at ${url}; ${scenarios.length} scenarios (${notApplicable.size} do not apply, see conformance-baseline.json)`,
  )
  let results
  try {
    results = await runAll(selected, (scenario) => runScenario(url, scenario, resultsRoot))
  } finally {
    killGroup(child, "SIGTERM")
    if (!keep) rmSync(resultsRoot, { recursive: true, force: true })
  }
  compareWithBaseline(scenarios, results, expected, { prefix: "conformance", okWhenExpected: true })
}

runMain("conformance", main)
