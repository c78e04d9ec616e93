// Runs the official conformance scenarios against the fake server and compares with the baseline.
// Called by scripts/conformance.sh (which builds the package first).
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"

const root = resolve(import.meta.dirname, "..")
const version = process.env.CONFORMANCE_VERSION ?? "0.2.0-alpha.12"
const concurrency = Number(process.env.CONFORMANCE_CONCURRENCY ?? 4)
const keep = process.env.CONFORMANCE_KEEP_RESULTS === "1"
const nodeMajor = Number(process.versions.node.split(".")[0])
// The suite needs Node >= 22: borrow one through npx when this Node is older.
const suite = [
  "-y",
  ...(nodeMajor < 22 ? ["-p", "node@22"] : []),
  "-p",
  `@modelcontextprotocol/conformance@${version}`,
  "conformance",
]

/** The revision this server speaks: dated scenarios run at it, extension ones as they are. */
const SPEC_VERSION = "2026-07-28"

const run = (args, { capture = false, timeoutMs = 300_000 } = {}) =>
  new Promise((resolvePromise) => {
    const child = spawn("npx", args, {
      cwd: tmpdir(),
      stdio: ["ignore", capture ? "pipe" : "ignore", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolvePromise({ code, stdout, stderr })
    })
  })

const startServer = () =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [join(root, "packages/fake-server/dist/bin.js"), "--profile", "conformance", "--port", "0"],
      { stdio: ["ignore", "pipe", "inherit"] },
    )
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`fake-mcp-server exited early (${code})`)))
    createInterface({ input: child.stdout }).once("line", (url) => resolvePromise({ child, url: url.trim() }))
  })

/** Every server scenario of the suite with the revisions it applies to (`extension` for extension ones). */
const listServerScenarios = async () => {
  const listed = await run([...suite, "list", "--server"], { capture: true })
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
  const { code, stderr } = await run(args)
  const dirs = (() => {
    try {
      return readdirSync(out)
    } catch {
      return []
    }
  })()
  const checks = dirs.flatMap((dir) => {
    try {
      return JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8"))
    } catch {
      return []
    }
  })
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
  const baseline = JSON.parse(readFileSync(join(root, "conformance-baseline.json"), "utf8"))
  const expected = new Map(
    baseline.expectedFailures.map((entry) => [`${entry.scenario}:${entry.check}`, entry]),
  )
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
  const results = []
  try {
    const queue = [...selected]
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) {
          results.push(...(await runScenario(url, scenario, resultsRoot)))
        }
      }),
    )
  } finally {
    child.kill("SIGTERM")
    if (!keep) rmSync(resultsRoot, { recursive: true, force: true })
  }

  const unexpected = []
  const seenExpected = new Set()
  for (const scenario of scenarios) {
    const checks = results.filter((check) => check.scenario === scenario)
    const counts = { SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0, INFO: 0 }
    for (const check of checks) counts[check.status] = (counts[check.status] ?? 0) + 1
    const allExpected = checks.every(
      (check) => check.status !== "FAILURE" || expected.has(`${scenario}:${check.id}`),
    )
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
        console.log(`       UNEXPECTED failure ${check.id}: ${check.errorMessage ?? ""}`)
      }
    }
  }
  const stale = [...expected.keys()].filter((key) => !seenExpected.has(key))
  for (const key of stale) console.log(`stale baseline entry (now passes, remove it): ${key}`)
  if (unexpected.length > 0 || stale.length > 0) {
    console.log(
      `conformance: ${unexpected.length} unexpected failure(s), ${stale.length} stale baseline entr(ies)`,
    )
    process.exit(1)
  }
  console.log("conformance: all checks pass (or fail as the baseline expects)")
}

main().catch((error) => {
  console.error(`conformance: ${error instanceof Error ? error.stack : String(error)}`)
  process.exit(1)
})
