/**
 * B4: `tasks/get` per task against the minimum a client that honours `pollIntervalMs` needs,
 * counted by the fake server's ledger, over tasks of several durations and intervals (constant,
 * rising and falling during the task's life). Target: ≤ 1.1×.
 *
 * The minimum for a task of duration D: polling exactly when each advertised interval has run
 * out, from the creation on (the interval in force at time t is the one the server advertised at
 * t), the number of polls until one lands at or after D; plus one. For a constant interval I that
 * is `ceil(D / I) + 1`, DESIGN.md's formula. The official requester runs the same workload as a
 * reference (it has no target here).
 *
 * Run: `node dist/b4.js [--smoke] [--json] [--reps N]`.
 */
import { pathToFileURL } from "node:url"
import type * as Config from "@mcp-handles/fake-server/Config"
import type * as Ledger from "@mcp-handles/fake-server/Ledger"
import {
  type BenchReport,
  cliFlags,
  emit,
  fail,
  loadAverage,
  median,
  type RunningServer,
  spread,
  startFakeServer,
  table,
  tempDir,
} from "./common.js"
import { type Call, extTasksSide, mcpHandlesSide, type Side } from "./sides.js"

interface ToolShape {
  readonly name: string
  readonly durationMs: number
  readonly pollIntervalMs: Config.PollInterval
  readonly label: string
}

const fullTools: ReadonlyArray<ToolShape> = [
  { name: "d2000_i250", durationMs: 2_000, pollIntervalMs: 250, label: "2 s, 250 ms" },
  { name: "d3000_i500", durationMs: 3_000, pollIntervalMs: 500, label: "3 s, 500 ms" },
  { name: "d4500_i1000", durationMs: 4_500, pollIntervalMs: 1_000, label: "4.5 s, 1 s" },
  { name: "d2600_i300", durationMs: 2_600, pollIntervalMs: 300, label: "2.6 s, 300 ms" },
  {
    name: "d4000_rising",
    durationMs: 4_000,
    pollIntervalMs: [
      { afterMs: 0, pollIntervalMs: 250 },
      { afterMs: 1_000, pollIntervalMs: 500 },
      { afterMs: 2_000, pollIntervalMs: 1_000 },
    ],
    label: "4 s, 250 → 500 → 1000 ms",
  },
  {
    name: "d4000_falling",
    durationMs: 4_000,
    pollIntervalMs: [
      { afterMs: 0, pollIntervalMs: 1_000 },
      { afterMs: 2_000, pollIntervalMs: 250 },
    ],
    label: "4 s, 1000 → 250 ms",
  },
]

const smokeTools: ReadonlyArray<ToolShape> = [
  { name: "d600_i250", durationMs: 600, pollIntervalMs: 250, label: "0.6 s, 250 ms" },
  {
    name: "d800_change",
    durationMs: 800,
    pollIntervalMs: [
      { afterMs: 0, pollIntervalMs: 250 },
      { afterMs: 400, pollIntervalMs: 300 },
    ],
    label: "0.8 s, 250 → 300 ms",
  },
]

const intervalAt = (config: Config.PollInterval, elapsed: number): number => {
  if (typeof config === "number") return config
  let current = config[0]?.pollIntervalMs ?? 1_000
  for (const change of config) if (elapsed >= change.afterMs) current = change.pollIntervalMs
  return current
}

/** The fewest polls of a client that never polls early: DESIGN.md's `ceil(D / I) + 1`, generalised. */
export const minimumPolls = (durationMs: number, config: Config.PollInterval): number => {
  let t = 0
  let polls = 0
  while (t < durationMs) {
    t += intervalAt(config, t)
    polls++
  }
  return polls + 1
}

interface SideCount {
  readonly polls: number
  readonly minimum: number
  readonly early: number
  readonly tasks: number
  readonly perTool: Map<string, { polls: number; tasks: number; max: number }>
}

const count = (ledger: Ledger.Snapshot, tools: ReadonlyArray<ToolShape>): SideCount => {
  const byName = new Map(tools.map((t) => [t.name, t]))
  let polls = 0
  let minimum = 0
  let early = 0
  const perTool = new Map<string, { polls: number; tasks: number; max: number }>()
  for (const task of ledger.tasks) {
    const tool = byName.get(task.tool)
    if (tool === undefined) continue
    polls += task.polls.length
    minimum += minimumPolls(tool.durationMs, tool.pollIntervalMs)
    early += task.earlyPolls
    const entry = perTool.get(tool.name) ?? { polls: 0, tasks: 0, max: 0 }
    entry.polls += task.polls.length
    entry.tasks += 1
    entry.max = Math.max(entry.max, task.polls.length)
    perTool.set(tool.name, entry)
  }
  return { polls, minimum, early, tasks: ledger.tasks.length, perTool }
}

const runSide = async (
  side: Side,
  server: RunningServer,
  calls: ReadonlyArray<Call>,
  tools: ReadonlyArray<ToolShape>,
) => {
  await server.clearLedger()
  await side.run(calls)
  return count(await server.ledger(), tools)
}

export const runB4 = async (options: {
  readonly smoke: boolean
  readonly reps?: number
}): Promise<BenchReport> => {
  const { smoke } = options
  const tools = smoke ? smokeTools : fullTools
  const perTool = smoke ? 1 : 10
  const reps = options.reps ?? (smoke ? 1 : 3)
  const loadBefore = loadAverage()
  const temp = tempDir("mcp-handles-b4-")
  const config: Config.Config = {
    tools: tools.map((t) => ({ name: t.name, durationMs: t.durationMs, pollIntervalMs: t.pollIntervalMs })),
    recordRequests: false,
  }
  const server = await startFakeServer(config, { dir: temp.dir })
  // mcp-handles with its default polling floor (250 ms): every interval of the workload is at or
  // above it, so the client may honour each one exactly.
  const mh = await mcpHandlesSide({ url: server.url, dir: temp.dir, minIntervalMs: 250 })
  const ext = await extTasksSide({ url: server.url })
  const calls: Array<Call> = tools.flatMap((t) =>
    Array.from({ length: perTool }, (_, i) => ({ tool: t.name, arguments: { i } })),
  )
  const results: Record<"mh" | "ext", Array<SideCount>> = { mh: [], ext: [] }
  try {
    for (let rep = 0; rep < reps; rep++) {
      const order: Array<"mh" | "ext"> = rep % 2 === 0 ? ["mh", "ext"] : ["ext", "mh"]
      for (const which of order) {
        results[which].push(await runSide(which === "mh" ? mh : ext, server, calls, tools))
      }
    }
  } finally {
    await mh.close()
    await ext.close()
    await server.stop()
    temp.remove()
  }
  const ratios = (xs: ReadonlyArray<SideCount>) => xs.map((c) => c.polls / c.minimum)
  const mhRatios = ratios(results.mh)
  const extRatios = ratios(results.ext)
  const mhEarly = results.mh.reduce((n, c) => n + c.early, 0)
  const extEarly = results.ext.reduce((n, c) => n + c.early, 0)
  const ratio = median(mhRatios)

  const toolRows = tools.map((t) => {
    const min = minimumPolls(t.durationMs, t.pollIntervalMs)
    const avg = (xs: ReadonlyArray<SideCount>) => {
      const entries = xs.map((c) => c.perTool.get(t.name)).filter((e) => e !== undefined)
      const polls = entries.reduce((n, e) => n + e.polls, 0)
      const tasks = entries.reduce((n, e) => n + e.tasks, 0)
      return {
        mean: tasks === 0 ? Number.NaN : polls / tasks,
        max: Math.max(0, ...entries.map((e) => e.max)),
      }
    }
    const m = avg(results.mh)
    const e = avg(results.ext)
    return [
      t.label,
      String(min),
      `${m.mean.toFixed(2)} (max ${m.max})`,
      (m.mean / min).toFixed(3),
      `${e.mean.toFixed(2)} (max ${e.max})`,
      (e.mean / min).toFixed(3),
    ]
  })
  const markdown = [
    `Workload: ${tools.length} task shapes × ${perTool} concurrent tasks = ${calls.length} tasks per run, ${reps} run(s) per side, sides alternated; the fake server is a separate process on loopback; \`tasks/get\` counted by its ledger.${smoke ? " SMOKE SIZE: not a measurement." : ""} Load average before: ${loadBefore}.`,
    "",
    table(
      [
        "task (duration, advertised interval)",
        "minimum polls",
        "mcp-handles polls/task",
        "× minimum",
        "ext-tasks polls/task (reference)",
        "× minimum",
      ],
      toolRows,
    ),
    "",
    table(
      ["side", "polls / minimum (median of runs)", "spread", "early polls (ledger)"],
      [
        [
          "mcp-handles (SQLite FULL, default polling)",
          ratio.toFixed(3),
          spread(mhRatios, 3),
          String(mhEarly),
        ],
        ["ext-tasks 0.2.2 (reference)", median(extRatios).toFixed(3), spread(extRatios, 3), String(extEarly)],
      ],
    ),
    "",
    `B4 ratio polls/minimum: **${ratio.toFixed(2)}×**, target ≤ 1.1×; early polls: ${mhEarly} (must be 0)`,
  ].join("\n")
  return {
    id: "B4",
    title: "tasks/get per task vs the minimum",
    smoke,
    results: [
      {
        what: "tasks/get per task vs minimum",
        value: ratio,
        unit: "×",
        target: "≤ 1.1×",
        met: ratio <= 1.1,
        spread: spread(mhRatios, 3),
      },
      { what: "early polls", value: mhEarly, unit: "polls", target: "0", met: mhEarly === 0 },
    ],
    markdown,
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const flags = cliFlags()
  const reps = flags.option("--reps")
  runB4({ smoke: flags.smoke, ...(reps === undefined ? {} : { reps: Number(reps) }) })
    .then((report) => emit(report, flags.json))
    .catch(fail)
}
