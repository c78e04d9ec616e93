/**
 * B5: end-to-end durable calls through mcp-handles (SQLite store, synchronous=FULL) against the
 * same calls through the official, non-durable requester `@modelcontextprotocol/ext-tasks`, on
 * the same fake-server workload over real HTTP on loopback. Wall time for N concurrent task calls
 * to settle; both sides honour `pollIntervalMs` (short intervals, so the client's own cost shows).
 * Target: ≤ 1.3×.
 *
 * Run: `node dist/b5.js [--smoke] [--json] [--reps N] [--calls N]`.
 */
import { pathToFileURL } from "node:url"
import type * as Config from "@mcp-handles/fake-server/Config"
import {
  type BenchReport,
  cliFlags,
  cpuMsSince,
  emit,
  fail,
  loadAverage,
  median,
  spread,
  startFakeServer,
  table,
  tempDir,
} from "./common.js"
import { type Call, extTasksSide, mcpHandlesSide, type Side, storeCounts } from "./sides.js"

const tools = [
  { name: "quick", durationMs: 0, pollIntervalMs: 50 },
  { name: "short", durationMs: 200, pollIntervalMs: 50 },
  { name: "medium", durationMs: 500, pollIntervalMs: 100 },
] as const

export const runB5 = async (options: {
  readonly smoke: boolean
  readonly reps?: number
  readonly calls?: number
}): Promise<BenchReport> => {
  const { smoke } = options
  const n = options.calls ?? (smoke ? 6 : 200)
  const reps = options.reps ?? (smoke ? 1 : 8)
  const loadBefore = loadAverage()
  const temp = tempDir("mcp-handles-b5-")
  const config: Config.Config = { tools: tools.map((t) => ({ ...t })), recordRequests: false }
  const server = await startFakeServer(config, { dir: temp.dir })
  const sides: Record<"mh" | "ext", Side> = {
    mh: await mcpHandlesSide({ url: server.url, dir: temp.dir, synchronous: "FULL", minIntervalMs: 10 }),
    ext: await extTasksSide({ url: server.url }),
  }
  const calls: Array<Call> = Array.from({ length: n }, (_, i) => ({
    tool: (tools[i % tools.length] as (typeof tools)[number]).name,
    arguments: { i, label: "benchmark call" },
  }))
  const wall: Record<"mh" | "ext", Array<number>> = { mh: [], ext: [] }
  const cpu: Record<"mh" | "ext", Array<number>> = { mh: [], ext: [] }
  const gets: Record<"mh" | "ext", Array<number>> = { mh: [], ext: [] }
  const ratios: Array<number> = []
  try {
    // Warm-up at full size, not counted: JIT (the first runs of either side are up to 2× slower),
    // connection pools, the SQLite file.
    for (let i = 0; i < (smoke ? 1 : 2); i++) {
      await sides.mh.run(calls)
      await sides.ext.run(calls)
    }
    for (let rep = 0; rep < reps; rep++) {
      const order: Array<"mh" | "ext"> = rep % 2 === 0 ? ["mh", "ext"] : ["ext", "mh"]
      for (const which of order) {
        await server.clearLedger()
        const cpuBefore = process.cpuUsage()
        const start = performance.now()
        await sides[which].run(calls)
        wall[which].push(performance.now() - start)
        cpu[which].push((cpuMsSince(cpuBefore) * 1000) / n)
        const ledger = await server.ledger()
        gets[which].push(
          ledger.tasks.reduce((k, t) => k + t.polls.length, 0) / Math.max(1, ledger.tasks.length),
        )
      }
      ratios.push((wall.mh[rep] as number) / (wall.ext[rep] as number))
    }
  } finally {
    await sides.mh.close()
    await sides.ext.close()
    await server.stop()
    temp.remove()
  }
  const ratio = median(ratios)
  const row = (label: string, which: "mh" | "ext") => [
    label,
    median(wall[which]).toFixed(0),
    spread(wall[which], 0),
    median(cpu[which]).toFixed(0),
    median(gets[which]).toFixed(2),
  ]
  const markdown = [
    `Workload: ${n} concurrent tool calls per run (tools: ${tools.map((t) => `${t.name} ${t.durationMs} ms / poll ${t.pollIntervalMs} ms`).join(", ")}; one third each), ${reps} runs per side, alternated (A B, B A, …), after two full-size warm-up runs each. Both sides in this process, the fake server in its own process, HTTP on loopback.${smoke ? " SMOKE SIZE: not a measurement." : ""} Load average before: ${loadBefore}.`,
    "",
    table(
      [
        "side",
        "median wall ms",
        "spread (min–max)",
        "median CPU µs/call (client process)",
        "tasks/get per task",
      ],
      [
        row("mcp-handles (SQLite, synchronous=FULL, durable)", "mh"),
        row("@modelcontextprotocol/ext-tasks 0.2.2 (in memory)", "ext"),
      ],
    ),
    "",
    `Store operations of the mcp-handles side over all its runs (warm-up included): ${storeCounts.begin} begin, ${storeCounts.update} update (${storeCounts.conflicts} lost compare-and-set), ${storeCounts.get} get, ${storeCounts.claimDue} claimDue by the background reconciler claiming ${storeCounts.claimed} rows.`,
    "",
    `B5 ratio mcp-handles/ext-tasks wall time: **${ratio.toFixed(2)}× (per-run ${spread(ratios, 2)})**, target ≤ 1.3×; CPU per call ratio: ${(median(cpu.mh) / median(cpu.ext)).toFixed(2)}×`,
  ].join("\n")
  return {
    id: "B5",
    title: "end-to-end durable calls vs ext-tasks",
    smoke,
    results: [
      {
        what: "end-to-end wall time vs ext-tasks",
        value: ratio,
        unit: "×",
        target: "≤ 1.3×",
        met: ratio <= 1.3,
        spread: spread(ratios, 2),
      },
    ],
    markdown,
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const flags = cliFlags()
  const reps = flags.option("--reps")
  const calls = flags.option("--calls")
  runB5({
    smoke: flags.smoke,
    ...(reps === undefined ? {} : { reps: Number(reps) }),
    ...(calls === undefined ? {} : { calls: Number(calls) }),
  })
    .then((report) => emit(report, flags.json))
    .catch(fail)
}
