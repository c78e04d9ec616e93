// Runs the official conformance suite's client scenarios against client.mjs and compares the
// failed checks with conformance-client-baseline.json. Called by scripts/conformance-client.sh
// (which builds the packages first).
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "../..")
const version = process.env.CONFORMANCE_VERSION ?? "0.2.0-alpha.12"
const concurrency = Number(process.env.CONFORMANCE_CONCURRENCY ?? 4)
const keep = process.env.CONFORMANCE_KEEP_RESULTS === "1"
const specVersion = "2026-07-28"
const nodeMajor = Number(process.versions.node.split(".")[0])
// The suite needs Node >= 22: borrow one through npx when this Node is older. The client itself
// runs on this Node (the suite starts it through a shell, so `node` is the first one on PATH).
const suite = [
  "-y",
  ...(nodeMajor < 22 ? ["-p", "node@22"] : []),
  "-p",
  `@modelcontextprotocol/conformance@${version}`,
  "conformance",
]
// The suite splits the command on spaces (and runs it through a shell): a path with one would
// break it, so it is refused up front rather than failing every scenario.
const clientCommand = `${process.execPath} ${join(import.meta.dirname, "client.mjs")}`
if (/\s/.test(process.execPath) || /\s/.test(import.meta.dirname)) {
  console.error(`client conformance: the suite cannot run a command whose path has spaces: ${clientCommand}`)
  process.exit(1)
}

/** The scenarios issue 14 names; every json-schema-* one the suite lists is added. */
const NAMED = [
  "tools_call",
  "request-metadata",
  "http-standard-headers",
  "http-custom-headers",
  "http-invalid-tool-headers",
  "sep-2322-client-request-state",
]

/** Runs `npx` with `args` in its own process group (killed whole on timeout). */
const run = (args, { timeoutMs = 120_000 } = {}) =>
  new Promise((resolvePromise) => {
    const child = spawn("npx", args, { cwd: tmpdir(), stdio: ["ignore", "pipe", "pipe"], detached: true })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk) => {
      stderr += chunk
    })
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL")
      } catch {}
    }, timeoutMs)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolvePromise({ code, stdout, stderr })
    })
  })

const listScenarios = async () => {
  const listed = await run([...suite, "list", "--client"])
  const all = [...listed.stdout.matchAll(/^\s*-\s+([\w/-]+)/gm)].map((match) => match[1])
  const schema = all.filter((name) => name.startsWith("json-schema-"))
  const missing = NAMED.filter((name) => !all.includes(name))
  if (schema.length === 0 || missing.length > 0) {
    throw new Error(`the suite does not list ${missing.join(", ") || "json-schema-*"}:\n${listed.stderr}`)
  }
  return [...NAMED, ...schema]
}

const runScenario = async (scenario, resultsRoot) => {
  const out = join(resultsRoot, scenario)
  const args = [
    ...suite,
    "client",
    "--command",
    clientCommand,
    "--scenario",
    scenario,
    "--spec-version",
    specVersion,
    "-o",
    out,
  ]
  const { code, stdout, stderr } = await run(args)
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
  const tail = `${stdout}\n${stderr}`.slice(-3000)
  if (checks.length === 0) {
    return [
      { scenario, id: "(scenario did not run)", status: "FAILURE", errorMessage: `exit ${code}: ${tail}` },
    ]
  }
  const results = checks.map((check) => ({ scenario, ...check }))
  // The suite fails a run whose client exited non-zero even when every check passed.
  if (code !== 0 && !results.some((check) => check.status === "FAILURE")) {
    results.push({ scenario, id: "(client exit)", status: "FAILURE", errorMessage: `exit ${code}: ${tail}` })
  }
  return results
}

const main = async () => {
  const baseline = JSON.parse(readFileSync(join(root, "conformance-client-baseline.json"), "utf8"))
  const expected = new Map(
    baseline.expectedFailures.map((entry) => [`${entry.scenario}:${entry.check}`, entry]),
  )
  const scenarios = await listScenarios()
  const resultsRoot = mkdtempSync(join(tmpdir(), "mcp-conformance-client-"))
  console.log(`client: ${clientCommand}; ${scenarios.length} scenarios at ${specVersion}`)
  const results = []
  try {
    const queue = [...scenarios]
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) {
          results.push(...(await runScenario(scenario, resultsRoot)))
        }
      }),
    )
  } finally {
    if (keep) console.log(`results kept in ${resultsRoot}`)
    else rmSync(resultsRoot, { recursive: true, force: true })
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
        console.log(
          `       UNEXPECTED failure ${check.id} (${check.name ?? ""}): ${check.errorMessage ?? ""}`,
        )
      }
    }
  }
  const stale = [...expected.keys()].filter((key) => !seenExpected.has(key))
  for (const key of stale) console.log(`stale baseline entry (now passes, remove it): ${key}`)
  if (unexpected.length > 0 || stale.length > 0) {
    console.log(
      `client conformance: ${unexpected.length} unexpected failure(s), ${stale.length} stale baseline entr(ies)`,
    )
    process.exit(1)
  }
  console.log("client conformance: all checks pass (or fail as the baseline expects)")
}

main().catch((error) => {
  console.error(`client conformance: ${error instanceof Error ? error.stack : String(error)}`)
  process.exit(1)
})
