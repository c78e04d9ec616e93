/**
 * Real-process chaos: the `fake-mcp-server` binary (durable across its own restarts, with
 * seeded faults) and client child processes (built JS: child.js on the Promise facade and
 * SQLite) that are killed with SIGKILL at random moments and restarted. After every kill the
 * invariants are checked from outside, through the server's `GET /_ledger` and the SQLite file:
 * no orphan, no double launch, terminal is final, no early poll. Every few kills a client is
 * let run to the end: then every row must rest (terminal or in doubt): liveness.
 *
 * @since 0.1.0
 */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type * as Config from "@mcp-handles/fake-server/Config"
import type * as Ledger from "@mcp-handles/fake-server/Ledger"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import { type Model, violations } from "./Model.js"
import { allRows } from "./Simulation.js"
import { asking } from "./Tools.js"

const here = dirname(fileURLToPath(import.meta.url))
const fakeServerBin = join(here, "..", "..", "fake-server", "dist", "bin.js")
// Built JS in both cases: from src/ (vitest) and from dist/ (pnpm chaos).
const clientChild = join(here, "..", "dist", "child.js")

/**
 * The tools of the real-process run: the models' shapes, with shorter times (real time passes).
 *
 * @since 0.1.0
 * @category constants
 */
export const tools: Config.Config["tools"] = [
  { name: "direct", shape: "direct", outcome: { kind: "result", text: "direct {{args.n}}" } },
  { name: "task", shape: "task", durationMs: 700, pollIntervalMs: 150 },
  asking({ durationMs: 600, pollIntervalMs: 120, atMs: 200 }),
  { name: "expiring", shape: "task", durationMs: 60_000, ttlMs: 1_200, pollIntervalMs: 250 },
  { name: "stubborn", shape: "task", durationMs: 500, cancellable: false, pollIntervalMs: 100 },
  { name: "coin", shape: { taskProbability: 0.5 }, durationMs: 300, pollIntervalMs: 100 },
]

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly kills: number
  readonly seed: number
  /** Let a client run to the end after this many kills (liveness check). */
  readonly finishEvery?: number | undefined
  readonly log?: ((line: string) => void) | undefined
  /** The client processes listen (`subscriptions/listen`): a kill also kills the listener. */
  readonly push?: boolean | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly kills: number
  readonly runs: number
  readonly checks: number
  readonly calls: number
  readonly millis: number
}

interface Round {
  readonly calls: ReadonlyArray<{ key: string; tool: string; n: number; cancel: boolean }>
  /** Real milliseconds after the child's start at which it is killed; null: let it finish. */
  readonly killAfterMs: number | null
}

const firstLine = (child: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", resolve)
    child.once("exit", (code) => reject(new Error(`exited with ${code} before printing`)))
  })

/**
 * Children lead process groups of their own, killed as groups: whatever a child started dies
 * with it, and nothing outlives this process (a test that times out, a run that throws).
 */
const live = new Set<number>()
process.once("exit", () => {
  for (const pid of live) killGroup(pid)
})

const spawnGroup = (command: string, args: ReadonlyArray<string>, options: SpawnOptions): ChildProcess => {
  const child = spawn(command, args, { ...options, detached: true })
  const pid = child.pid
  if (pid !== undefined) {
    live.add(pid)
    child.once("exit", () => live.delete(pid))
  }
  return child
}

const killGroup = (child: ChildProcess | number, signal: NodeJS.Signals = "SIGKILL") => {
  const pid = typeof child === "number" ? child : child.pid
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ESRCH") throw error
  }
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode)
    else child.once("exit", (code) => resolve(code))
  })

/** The schedule of one run, drawn from the seed (printed on failure, so it reproduces). */
const schedule = (options: Options): ReadonlyArray<Round> => {
  const finishEvery = options.finishEvery ?? 10
  const call = fc.record({
    tool: fc.constantFrom(...tools.map((tool) => tool.name)),
    n: fc.integer({ min: 0, max: 1_000 }),
    cancel: fc.boolean(),
  })
  const round = fc.record({
    calls: fc.array(call, { minLength: 1, maxLength: 6 }),
    killAfterMs: fc.integer({ min: 0, max: 900 }),
  })
  // Twice as many as asked: a client that finished before its kill time is not a kill.
  const [drawn] = fc.sample(fc.array(round, { minLength: options.kills * 2, maxLength: options.kills * 2 }), {
    seed: options.seed,
    numRuns: 1,
  })
  const rounds: Array<Round> = []
  ;(drawn ?? []).forEach((r, index) => {
    rounds.push({
      calls: r.calls.map((c, i) => ({
        ...c,
        key: `r${index}-${i}-${c.tool}`,
        cancel: c.cancel && c.tool !== "direct",
      })),
      killAfterMs: r.killAfterMs,
    })
    if ((index + 1) % finishEvery === 0) rounds.push({ calls: [], killAfterMs: null })
  })
  return rounds
}

/**
 * Runs the schedule the seed draws: `kills` SIGKILLs of client processes, checked after each.
 *
 * @since 0.1.0
 */
export const run = async (options: Options): Promise<Result> => {
  const log = options.log ?? (() => {})
  const started = Date.now()
  const dir = mkdtempSync(join(tmpdir(), "mcp-handles-chaos-proc-"))
  const db = join(dir, "handles.db")
  const config: Config.Config = {
    tools,
    seed: options.seed,
    faults: [
      // The answer that carries a new task is lost: the call is in doubt, never an orphan.
      { when: { method: "tools/call", probability: 0.1 }, fault: { kind: "drop", phase: "after" } },
      { when: { method: "tasks/get", probability: 0.05 }, fault: { kind: "drop", phase: "after" } },
      {
        when: { method: "tasks/get", probability: 0.05 },
        fault: { kind: "status", status: 503, retryAfter: "0.2", phase: "before" },
      },
    ],
  }
  writeFileSync(join(dir, "server.json"), JSON.stringify(config))
  const server = spawnGroup(
    process.execPath,
    [
      fakeServerBin,
      "--port",
      "0",
      "--config",
      join(dir, "server.json"),
      "--state",
      join(dir, "server-state.json"),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  )
  const rounds = schedule(options)
  const model: Model = { keys: new Map() }
  let kills = 0
  let runs = 0
  let checks = 0
  let calls = 0
  const history: Array<string> = []
  const fail = (message: string): never => {
    throw new Error(
      `process chaos failed (seed ${options.seed}, kills ${options.kills}): ${message}\n--- rounds so far ---\n${history.join("\n")}\nReproduce: pnpm chaos --process-only --kills ${options.kills} --seed ${options.seed}${options.push === true ? " --push on" : ""}`,
    )
  }
  try {
    const url = await firstLine(server)
    const ledgerUrl = new URL("/_ledger", url)
    const check = async (when: string, mustRest: boolean) => {
      checks++
      const ledger = (await (await fetch(ledgerUrl)).json()) as Ledger.Snapshot
      const rows = await Effect.runPromise(
        Effect.scoped(Effect.flatMap(SqliteStore.make({ filename: db }), (store) => allRows(store))).pipe(
          Effect.orDie,
        ),
      )
      const found = violations(model, ledger, rows)
      if (mustRest) {
        for (const row of rows) {
          if (row.status === "pending" || row.status === "working" || row.status === "input_required")
            found.push(`liveness: ${row.key} is still ${row.status} after a client ran to the end`)
        }
      }
      if (found.length > 0) fail(`${when}:\n  ${found.join("\n  ")}`)
    }
    const finalRound: Round = { calls: [], killAfterMs: null }
    for (const [index, round] of [...rounds, finalRound].entries()) {
      if (round !== finalRound && kills >= options.kills) continue
      history.push(
        `#${index} ${round.killAfterMs === null ? "run to the end" : `kill after ${round.killAfterMs} ms`}: ${round.calls
          .map((c) => `${c.key}${c.cancel ? " (cancel)" : ""}`)
          .join(", ")}`,
      )
      calls += round.calls.length
      runs++
      const childArgs = [
        clientChild,
        url,
        db,
        JSON.stringify(round.calls),
        ...(options.push === true ? ["push"] : []),
      ]
      const child = spawnGroup(process.execPath, childArgs, {
        stdio: ["ignore", "pipe", "pipe"],
      })
      let stderr = ""
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      child.stdout?.resume()
      if (round.killAfterMs === null) {
        // A bound for a real process on a loaded machine, not a measure of its speed.
        const timer = setTimeout(() => killGroup(child), 120_000)
        const code = await exited(child)
        clearTimeout(timer)
        if (code !== 0)
          fail(`round #${index}: the client did not finish (exit ${code}): ${stderr.slice(-2000)}`)
        await check(`after round #${index} ran to the end`, true)
      } else {
        await new Promise((resolve) => setTimeout(resolve, round.killAfterMs ?? 0))
        if (child.exitCode === null && child.signalCode === null) {
          killGroup(child)
          kills++
        }
        await exited(child)
        await check(`after the kill in round #${index}`, false)
      }
      log(`round ${index}: ${round.killAfterMs === null ? "finished" : "killed"}`)
    }
    return { kills, runs, checks, calls, millis: Date.now() - started }
  } finally {
    // Its state file is written on SIGTERM; a server that does not stop in time is killed.
    killGroup(server, "SIGTERM")
    const stopped = setTimeout(() => killGroup(server), 5_000)
    await exited(server)
    clearTimeout(stopped)
    rmSync(dir, { recursive: true, force: true })
  }
}
