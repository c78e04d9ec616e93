/**
 * B9's harness: the processes (see `b9.ts` for the benchmark). B9 is the promise side by side. The same calls, the same SIGKILL schedule and the same server
 * faults against three applications on the same fake server (one fresh server each): ext-tasks
 * with its documented persistence (`handoff` saves the reference, `resumeTask` drives it), a
 * naive client (the SDK's plain `callTool`, nothing saved) and mcp-handles (SQLite). Counted per
 * application, from the server's ledger and the app's own journals (`b9-count.ts`): orphaned
 * server work, calls launched twice, questions answered twice, calls never finished.
 *
 * The user's calls are a queue, as in most apps (a job redelivered until it is acknowledged):
 * each round starts an app process (`b9-app.ts`) with the round's new calls and every call no
 * earlier process delivered, and kills it with SIGKILL a drawn time after it is ready; every
 * `finishEvery` kills, and at the end, a process is let run until it has delivered everything.
 */
import { spawn } from "node:child_process"
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as fc from "fast-check"
import * as B9Count from "./b9-count.js"
import { dieWithThisProcess, startFakeServer, tempDir } from "./common.js"

/** The compiled app (also when this module is loaded from src/ by the tests). */
const appScript = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "b9-app.js")

/**
 * Every tool runs as a task for a client that declares the Tasks extension (a direct answer cut
 * by a crash can be neither resumed nor deduplicated, by any client), and is held while it runs
 * for one that does not. `ask` asks one question on the way.
 */
export const tools: Config.Config["tools"] = [
  { name: "task", shape: "task", durationMs: 700, pollIntervalMs: 150 },
  { name: "quick", shape: "task", durationMs: 200, pollIntervalMs: 100 },
  {
    name: "ask",
    shape: "task",
    durationMs: 600,
    pollIntervalMs: 120,
    inputSteps: [
      {
        atMs: 200,
        requests: {
          name: {
            method: "elicitation/create",
            params: { message: "Name?", requestedSchema: { type: "object" } },
          },
        },
      },
    ],
    outcome: { kind: "result", text: "Hello {{inputs.name.content.name|nobody}}" },
  },
]

/** The server faults of the process chaos run: lost `tools/call` answers, lost and refused polls. */
export const faults: Config.Config["faults"] = [
  { when: { method: "tools/call", probability: 0.1 }, fault: { kind: "drop", phase: "after" } },
  { when: { method: "tasks/get", probability: 0.05 }, fault: { kind: "drop", phase: "after" } },
  {
    when: { method: "tasks/get", probability: 0.05 },
    fault: { kind: "status", status: 503, retryAfter: "0.2", phase: "before" },
  },
]

export interface Options {
  readonly kills: number
  readonly seed: number
  readonly finishEvery?: number
  /** A schedule of one's own instead of the one the seed draws (tests). */
  readonly rounds?: ReadonlyArray<Round>
  readonly kinds?: ReadonlyArray<B9Count.Kind>
  /** Server faults (default on); off: SIGKILLs only. */
  readonly faults?: boolean
  /**
   * The server deduplicates `tools/call` on mcp-handles' key (default on): what makes a reissue
   * of an in-doubt call exactly-once. Off shows what the key alone cannot do.
   */
  readonly dedup?: boolean
  readonly log?: (line: string) => void
  /** Aborted: the running app is killed and the run stops (its server with it). */
  readonly signal?: AbortSignal
}

export interface Round {
  readonly calls: ReadonlyArray<B9Count.Call>
  /** After the app said it is ready; null: let it deliver everything and exit. */
  readonly killAfterMs: number | null
}

/** The rounds the seed draws (fast-check's sampling, as the process chaos run's): the same for every application. */
export const schedule = (options: Options): ReadonlyArray<Round> => {
  const finishEvery = options.finishEvery ?? 8
  const call = fc.record({
    tool: fc.constantFrom(...tools.map((tool) => tool.name)),
    n: fc.integer({ min: 0, max: 999 }),
  })
  const round = fc.record({
    calls: fc.array(call, { minLength: 1, maxLength: 4 }),
    killAfterMs: fc.integer({ min: 0, max: 1_199 }),
  })
  const [drawn = []] = fc.sample(fc.array(round, { minLength: options.kills, maxLength: options.kills }), {
    seed: options.seed,
    numRuns: 1,
  })
  const rounds: Array<Round> = []
  drawn.forEach((r, index) => {
    rounds.push({
      calls: r.calls.map((c, i) => ({ key: `r${index}-${i}-${c.tool}`, tool: c.tool, n: c.n })),
      killAfterMs: r.killAfterMs,
    })
    if ((index + 1) % finishEvery === 0) rounds.push({ calls: [], killAfterMs: null })
  })
  rounds.push({ calls: [], killAfterMs: null })
  return rounds
}

const readLines = <A>(file: string): Array<A> =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as A)
    : []

const reissuedIn = (appDir: string) => {
  const lines = readLines<{ readonly key: string }>(path.join(appDir, "reissued.jsonl"))
  return { calls: new Set(lines.map((line) => line.key)).size, times: lines.length }
}

export interface KindResult {
  readonly kind: B9Count.Kind
  readonly count: B9Count.Count
  /** mcp-handles: calls found in doubt and reissued, and how many reissues that took. */
  readonly reissued: { readonly calls: number; readonly times: number }
  readonly kills: number
  readonly rounds: number
  readonly seconds: number
  /** Processes that did not do what a round asked (did not start, did not finish in time). */
  readonly problems: ReadonlyArray<string>
}

/** A process of the app must be ready within this long, and finish a run-to-the-end round within this. */
const READY_MS = 30_000
const FINISH_MS = 90_000

const runKind = async (kind: B9Count.Kind, rounds: ReadonlyArray<Round>, options: Options, dir: string) => {
  const started = performance.now()
  const appDir = path.join(dir, kind)
  mkdirSync(appDir)
  const server = await startFakeServer(
    {
      tools,
      seed: options.seed,
      deduplicateByKey: options.dedup !== false,
      ...(options.faults === false ? {} : { faults }),
    },
    { dir },
  )
  const queue = new Map<string, B9Count.Call>()
  const all: Array<B9Count.Call> = []
  const problems: Array<string> = []
  let kills = 0
  try {
    for (const [index, round] of rounds.entries()) {
      options.signal?.throwIfAborted()
      for (const call of round.calls) {
        queue.set(call.key, call)
        all.push(call)
      }
      const mode = round.killAfterMs === null ? "finish" : "stay"
      const child = dieWithThisProcess(
        spawn(
          process.execPath,
          [appScript, kind, server.url, appDir, JSON.stringify([...queue.values()]), mode],
          {
            stdio: ["pipe", "pipe", "pipe"],
          },
        ),
      )
      // A test that ends (its timeout included) aborts: the running app dies with it.
      const stop = () => child.kill("SIGKILL")
      options.signal?.addEventListener("abort", stop, { once: true })
      child.once("exit", () => options.signal?.removeEventListener("abort", stop))
      let stderr = ""
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-4_000)
        appendFileSync(path.join(appDir, "app.log"), chunk)
      })
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
      const ready = await Promise.race([
        new Promise<boolean>((resolve) => lines.on("line", (line) => line === "ready" && resolve(true))),
        exited.then(() => false),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), READY_MS)),
      ])
      if (!ready) problems.push(`round ${index}: the app was not ready: ${stderr.trim().split("\n").at(-1)}`)
      if (round.killAfterMs !== null && ready) {
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, round.killAfterMs ?? 0))])
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGKILL")
          kills++
        } else problems.push(`round ${index}: the app exited (${child.exitCode}) before its kill`)
      } else if (ready) {
        const timer = setTimeout(() => child.kill("SIGKILL"), FINISH_MS)
        const code = await exited
        clearTimeout(timer)
        if (code !== 0)
          problems.push(
            `round ${index}: the app did not finish (exit ${code}): ${stderr.trim().split("\n").at(-1)}`,
          )
      } else {
        child.kill("SIGKILL")
      }
      await exited
      for (const delivered of readLines<B9Count.Delivered>(path.join(appDir, "delivered.jsonl")))
        queue.delete(delivered.key)
      options.log?.(
        `${kind} round ${index}: ${round.killAfterMs === null ? "ran to the end" : "killed"}, ${queue.size} waiting`,
      )
    }
    const ledger = await server.ledger()
    const count = B9Count.count(
      all,
      ledger,
      readLines(path.join(appDir, "delivered.jsonl")),
      readLines(path.join(appDir, "asked.jsonl")),
    )
    return {
      kind,
      count,
      reissued: reissuedIn(appDir),
      kills,
      rounds: rounds.length,
      seconds: (performance.now() - started) / 1000,
      problems,
    }
  } finally {
    await server.stop()
  }
}

/**
 * Runs the schedule against the three applications at once, each on a fresh server: the same
 * machine load for all three, and a third of the wall time.
 */
export const run = async (options: Options): Promise<ReadonlyArray<KindResult>> => {
  const rounds = options.rounds ?? schedule(options)
  // B9_KEEP=1 keeps the apps' journals, logs and stores for a look (the path is printed).
  const keep = process.env.B9_KEEP === "1"
  const temp = keep
    ? { dir: mkdtempSync(path.join(os.tmpdir(), "mcp-handles-b9-")), remove: () => {} }
    : tempDir("mcp-handles-b9-")
  if (keep) process.stderr.write(`B9 keeps ${temp.dir}\n`)
  try {
    return await Promise.all(
      (options.kinds ?? B9Count.kinds).map((kind) => runKind(kind, rounds, options, temp.dir)),
    )
  } finally {
    temp.remove()
  }
}
