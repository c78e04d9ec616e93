// Runs the official conformance suite's client scenarios against client.mjs and compares the
// failed checks with conformance-client-baseline.json. Called by scripts/conformance-client.sh
// (which builds the packages first).
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  compareWithBaseline,
  keep,
  readBaseline,
  readChecks,
  run,
  runAll,
  runMain,
  SPEC_VERSION,
  suite,
} from "../conformance-common.mjs"

const timeoutMs = 120_000
// The client runs on this Node, even when the suite borrows Node 22 (the suite starts it through
// a shell, so `node` is the first one on PATH). The suite splits the command on spaces (and runs it through a shell): a path with one would
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

const listScenarios = async () => {
  const listed = await run([...suite, "list", "--client"], { timeoutMs })
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
    SPEC_VERSION,
    "-o",
    out,
  ]
  const { code, stdout, stderr } = await run(args, { timeoutMs })
  const checks = readChecks(out)
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
  const { expected } = readBaseline("conformance-client-baseline.json")
  const scenarios = await listScenarios()
  const resultsRoot = mkdtempSync(join(tmpdir(), "mcp-conformance-client-"))
  console.log(`client: ${clientCommand}; ${scenarios.length} scenarios at ${SPEC_VERSION}`)
  let results
  try {
    results = await runAll(scenarios, (scenario) => runScenario(scenario, resultsRoot))
  } finally {
    if (keep) console.log(`results kept in ${resultsRoot}`)
    else rmSync(resultsRoot, { recursive: true, force: true })
  }
  compareWithBaseline(scenarios, results, expected, {
    prefix: "client conformance",
    okWhenExpected: false,
    describe: (check) => `${check.id} (${check.name ?? ""})`,
  })
}

runMain("client conformance", main)
