/**
 * Shared helpers of the benchmarks: statistics, the fake server as a separate process over real
 * HTTP on loopback, machine facts, and the JSON report every benchmark hands to the runner.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import type * as Config from "@mcp-handles/fake-server/Config"
import type * as Ledger from "@mcp-handles/fake-server/Ledger"

/** What one benchmark reports: its headline numbers, and Markdown for its BENCHMARKS.md section. */
export interface BenchReport {
  readonly id: string
  readonly title: string
  /** One line per target: what was measured, the value, the target, and whether it was met. */
  readonly results: ReadonlyArray<TargetResult>
  /** The Markdown body of the section (tables, raw numbers), without the `## Bn` heading. */
  readonly markdown: string
  readonly smoke: boolean
}

export interface TargetResult {
  readonly what: string
  readonly value: number
  readonly unit: string
  readonly target: string
  readonly met: boolean
  /** The spread of the value over repetitions, e.g. "0.98–1.07". */
  readonly spread?: string
}

export const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

export const spread = (xs: ReadonlyArray<number>, digits = 1): string =>
  xs.length === 0 ? "n/a" : `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`

/** A Markdown table with aligned columns. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`
  return [line(header), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)].join("\n")
}

export const loadAverage = (): string =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")

export const machine = () => ({
  nproc: os.availableParallelism(),
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
  node: process.version,
  platform: `${os.type()} ${os.release()}`,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
})

/** Command-line flags shared by the benchmark scripts. */
export const cliFlags = (argv: ReadonlyArray<string> = process.argv.slice(2)) => {
  const option = (name: string) => {
    const at = argv.indexOf(name)
    return at >= 0 ? argv[at + 1] : undefined
  }
  const number = (name: string) => {
    const value = option(name)
    return value === undefined ? undefined : Number(value)
  }
  return {
    smoke: argv.includes("--smoke"),
    json: argv.includes("--json"),
    option,
    number,
  }
}

/**
 * One line of a benchmark script's output. The scripts are command-line programs, and what they
 * measured is their output: it goes to stdout, where the runner (and a person) reads it.
 */
export const printLine = (line: string): void => {
  process.stdout.write(`${line}\n`)
}

/** Prints a report: Markdown for people, or one JSON line for the runner. */
export const emit = (report: BenchReport, json: boolean): void => {
  if (json) {
    printLine(JSON.stringify(report))
    return
  }
  printLine(`## ${report.id}\n\n${report.markdown}\n`)
  for (const r of report.results) printLine(formatResult(report.id, r))
}

export const formatResult = (id: string, r: TargetResult): string =>
  `${id} ${r.what}: ${formatValue(r)}${r.spread === undefined ? "" : ` (spread ${r.spread})`}, target ${r.target} ${r.met ? "MET" : "MISSED"}`

export const formatValue = (r: Pick<TargetResult, "value" | "unit">): string =>
  r.unit === "×"
    ? `${r.value.toFixed(2)}×`
    : !Number.isFinite(r.value)
      ? `not done (${r.value})`
      : `${r.value.toFixed(Number.isInteger(r.value) || r.value >= 100 ? 0 : r.value >= 10 ? 1 : 2)} ${r.unit}`

// ---------------------------------------------------------------------------------------------
// The fake server, in its own process
// ---------------------------------------------------------------------------------------------

export interface RunningServer {
  readonly url: string
  readonly origin: string
  ledger(): Promise<Ledger.Snapshot>
  clearLedger(): Promise<void>
  stop(): Promise<void>
}

/** The built binary of the fake server (`pnpm build` makes it). */
export const fakeServerBin = (): string => {
  const require = createRequire(import.meta.url)
  // `@mcp-handles/fake-server/package.json` is not exported; resolve the entry, then its package.
  let dir = path.dirname(require.resolve("@mcp-handles/fake-server"))
  while (!fs.existsSync(path.join(dir, "package.json"))) dir = path.dirname(dir)
  const bin = path.join(dir, "dist", "bin.js")
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`)
  return bin
}

/** The processes this benchmark started and that still run, and the directories it made. */
const children = new Set<ChildProcess>()
const directories = new Set<string>()
let cleaningUp = false

/**
 * Once: when this process exits, or is stopped by SIGINT or SIGTERM (`pkill`, Ctrl-C), its
 * children are stopped and its temporary directories removed, so that nothing outlives a
 * benchmark stopped by hand. (A parent killed with SIGKILL runs nothing: the fake server watches
 * for that itself, `--exit-with-parent`.)
 */
const cleanUpAtExit = () => {
  if (cleaningUp) return
  cleaningUp = true
  process.once("exit", () => {
    // SIGTERM: a child that is a benchmark script cleans up after itself in turn.
    for (const child of children) child.kill("SIGTERM")
    for (const dir of directories) fs.rmSync(dir, { recursive: true, force: true })
  })
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => process.exit(signal === "SIGINT" ? 130 : 143))
  }
}

/** Makes `child` die with this process (see `cleanUpAtExit`). */
export const dieWithThisProcess = <C extends ChildProcess>(child: C): C => {
  cleanUpAtExit()
  children.add(child)
  child.once("exit", () => children.delete(child))
  return child
}

/**
 * Starts the fake server binary on a free loopback port with `config` (and, optionally, a
 * `--state` file of tasks it already holds). Its CPU is its own process's, not the client's.
 */
export const startFakeServer = async (
  config: Config.Config,
  options: { readonly state?: string; readonly dir: string; readonly args?: ReadonlyArray<string> },
): Promise<RunningServer> => {
  const configFile = path.join(options.dir, `fake-server-${process.pid}-${Date.now()}.json`)
  fs.writeFileSync(configFile, JSON.stringify(config))
  const args = [fakeServerBin(), "--port", "0", "--config", configFile, "--exit-with-parent"]
  if (options.state !== undefined) args.push("--state", options.state)
  if (options.args !== undefined) args.push(...options.args)
  const child: ChildProcess = dieWithThisProcess(
    spawn(process.execPath, ["--max-old-space-size=4096", ...args], { stdio: ["ignore", "pipe", "pipe"] }),
  )
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ""
    const onData = (chunk: Buffer) => {
      out += chunk.toString()
      const nl = out.indexOf("\n")
      if (nl >= 0) {
        child.stdout?.off("data", onData)
        resolve(out.slice(0, nl).trim())
      }
    }
    child.stdout?.on("data", onData)
    child.once("exit", (code) => reject(new Error(`fake server exited (${code}): ${stderr}`)))
    child.once("error", reject)
  })
  const origin = new URL(url).origin
  return {
    url,
    origin,
    ledger: async () => {
      const response = await fetch(`${origin}/_ledger`)
      if (!response.ok) throw new Error(`GET /_ledger: HTTP ${response.status}`)
      return (await response.json()) as Ledger.Snapshot
    },
    clearLedger: async () => {
      await fetch(`${origin}/_ledger`, { method: "DELETE" })
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
      }),
  }
}

/** A temporary directory removed by the returned function, or at the latest when this process exits. */
export const tempDir = (prefix: string, base = os.tmpdir()) => {
  cleanUpAtExit()
  const dir = fs.mkdtempSync(path.join(base, prefix))
  directories.add(dir)
  return {
    dir,
    remove: () => {
      fs.rmSync(dir, { recursive: true, force: true })
      directories.delete(dir)
    },
  }
}

/** Collects a child's stdout and stderr as they come (`onStderr` sees each stderr chunk too). */
export const captureOutput = (child: ChildProcess, onStderr?: (chunk: Buffer) => void) => {
  const output = { stdout: "", stderr: "" }
  child.stdout?.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString()
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString()
    onStderr?.(chunk)
  })
  return output
}

/** The last line of `stdout` that is a JSON object (a script's `--json` report). */
export const lastJsonLine = (stdout: string): string | undefined =>
  stdout
    .trim()
    .split("\n")
    .reverse()
    .find((l) => l.startsWith("{"))

/** CPU time (user + system) of this process in ms since `since`. */
export const cpuMsSince = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1000
}

/** A benchmark script that failed: the error on stderr, and a failing exit code. */
export const fail = (error: unknown): void => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exitCode = 1
}
