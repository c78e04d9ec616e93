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

/** Scenarios that exist only at 2026-07-28 or later run with that spec version; extension ones as they are. */
const STATELESS = ["server-stateless", "tools-list", "tools-call-simple-text", "http-header-validation"]

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

const listTaskScenarios = async () => {
  const listed = await run([...suite, "list", "--server"], { capture: true })
  const names = [...listed.stdout.matchAll(/^\s*-\s+(tasks-[\w-]+)/gm)].map((match) => match[1])
  if (names.length === 0) throw new Error(`could not list the suite's scenarios:\n${listed.stderr}`)
  return names
}

const runScenario = async (url, scenario, resultsRoot) => {
  const out = join(resultsRoot, scenario)
  const args = [...suite, "server", "--url", url, "--scenario", scenario, "-o", out]
  if (STATELESS.includes(scenario)) args.push("--spec-version", "2026-07-28")
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
  const scenarios = [...(await listTaskScenarios()), ...STATELESS]
  const resultsRoot = mkdtempSync(join(tmpdir(), "mcp-conformance-"))
  const { child, url } = await startServer()
  console.log(`fake-mcp-server at ${url}; ${scenarios.length} scenarios`)
  const results = []
  try {
    const queue = [...scenarios]
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
    console.log(
      `${counts.FAILURE === 0 ? "ok  " : "FAIL"} ${scenario}: ${counts.SUCCESS} passed, ${counts.FAILURE} failed, ${counts.WARNING} warnings, ${counts.SKIPPED} skipped`,
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
