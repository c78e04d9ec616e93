#!/usr/bin/env node
/**
 * Benchmark B6: a fleet of 4 instances (separate processes) sharing one PostgreSQL store, against
 * 1 instance, on the same workload. Target: 4 instances settle ≥ 3× the tasks per second of 1,
 * with 0 duplicate concurrent polls.
 *
 * The workload is bound by server latency, not by CPU, as with remote servers that take their
 * time to answer: every `tasks/get` takes `--latency` ms, and each instance's background
 * reconciler keeps at most 16 polls in flight (its fixed concurrency), so one instance settles
 * at most ~16 / latency tasks per second, whatever its CPU. Tasks run `--task-ms` and advertise
 * that as their `pollIntervalMs`; each is done by its first poll.
 *
 * Each run: a fresh schema and a fresh fake-server process; the instances (separate processes)
 * start; a seeder process launches the calls through a TaskClient (write-ahead row, tools/call,
 * task id recorded), holds the rows until the last launch, then hands them all off at once.
 * Throughput = tasks / (last settle recorded in the store − start of the hand-off). Runs
 * alternate 1 and 4 instances (ABBA). Duplicate concurrent polls are counted from the server's
 * ledger (polls earlier than the advertised interval) and from the instances' logs (a poll
 * outside the poller's lease, under another instance's live lease, or overlapping another
 * instance's poll of the same task).
 *
 *   DATABASE_URL=postgres://… node packages/store-postgres/bench/fleet-bench.mjs [--pairs 3] [--tasks 600]
 *     [--latency 1000] [--task-ms 1000] [--smoke] [--json FILE]
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import * as Fleet from "../test/fixtures/fleet-harness.mjs"

const { values } = parseArgs({
  options: {
    pairs: { type: "string", default: "3" },
    tasks: { type: "string", default: "600" },
    latency: { type: "string", default: "1000" },
    "task-ms": { type: "string", default: "1000" },
    seed: { type: "string" },
    smoke: { type: "boolean", default: false },
    json: { type: "string" },
  },
})

const url = process.env.DATABASE_URL
if (url === undefined || url === "") {
  console.error(
    "B6 needs a PostgreSQL server: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)",
  )
  process.exit(2)
}

const smoke = values.smoke
const settings = {
  pairs: smoke ? 1 : Number(values.pairs),
  tasks: smoke ? 40 : Number(values.tasks),
  latencyMs: smoke ? 100 : Number(values.latency),
  taskMs: smoke ? 500 : Number(values["task-ms"]),
  leaseMs: 10_000,
  tickMs: 100,
  batchSize: 16,
  seed: Number(values.seed ?? Math.floor(Math.random() * 2 ** 31)),
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
const procCpu = (pid) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return Number.NaN
  }
}

const run = async (instances, rep) => {
  const dir = Fleet.tempDir("mcp-handles-b6-")
  const schema = `b6_${process.pid}_${Date.now().toString(36)}`
  const db = Fleet.database(url)
  await db.createSchema(schema)
  const server = await Fleet.startFakeServer(
    {
      seed: settings.seed + rep,
      recordRequests: false,
      tools: [{ name: "job", durationMs: settings.taskMs, pollIntervalMs: settings.taskMs }],
      faults: [{ when: { method: "tasks/get" }, fault: { kind: "latency", ms: settings.latencyMs } }],
    },
    dir,
  )
  const workers = []
  try {
    const logs = Array.from({ length: instances }, (_, i) => ({
      instanceId: `i${i + 1}`,
      file: path.join(dir, `i${i + 1}.jsonl`),
    }))
    // The first seeder migrates the schema; the instances start on the migrated schema.
    await Fleet.runSeeder({ url, schema, server: server.url, durations: [], keyPrefix: "warm" })
    workers.push(
      ...(await Promise.all(
        logs.map(({ instanceId, file }) =>
          Fleet.spawnWorker({
            url,
            schema,
            server: server.url,
            instanceId,
            leaseMs: settings.leaseMs,
            tickMs: settings.tickMs,
            batchSize: settings.batchSize,
            pool: 8,
            log: file,
          }),
        ),
      )),
    )
    await Promise.all(workers.map((w) => w.go()))
    const serverCpu0 = procCpu(server.pid)
    // One seeder launches every call and holds the rows until the last launch, then hands them
    // all to the running fleet at once: one backlog, due by then (tasks take task-ms).
    const seeded = await Fleet.runSeeder({
      url,
      schema,
      server: server.url,
      durations: Array.from({ length: settings.tasks }, () => 0),
      concurrency: 32,
      holdUntilEnd: true,
    })
    await Fleet.waitFor(
      "every row to settle",
      async () => {
        const counts = await db.statusCounts(schema)
        return { counts, done: (counts.completed ?? 0) >= settings.tasks }
      },
      10 * 60_000,
      200,
    )
    const serverCpu = procCpu(server.pid) - serverCpu0
    const cpu = await Promise.all(workers.map((w) => w.stop()))
    workers.length = 0
    const rows = (await db.rows(schema)).filter((r) => !r.key.startsWith("warm"))
    const ledger = await server.ledger()
    const { byTask } = Fleet.readLogs(logs)
    const violations = Fleet.leaseViolations(byTask)
    // The fleet may take rows from the moment the seeder starts handing them off.
    const firstDue = seeded.releasedFrom
    const lastSettled = Math.max(...rows.map((r) => r.settled_at ?? Number.NaN))
    const launchesPerKey = new Map()
    for (const l of ledger.launches)
      launchesPerKey.set(l.idempotencyKey, (launchesPerKey.get(l.idempotencyKey) ?? 0) + 1)
    const polls = ledger.tasks.reduce((n, t) => n + t.polls.length, 0)
    return {
      instances,
      rep,
      tasks: rows.length,
      settled: rows.filter((r) => r.status === "completed").length,
      seconds: (lastSettled - firstDue) / 1000,
      perSecond: rows.length / ((lastSettled - firstDue) / 1000),
      seedSeconds: seeded.ms / 1000,
      handOffSeconds: (seeded.releasedTo - seeded.releasedFrom) / 1000,
      seeded: seeded.seeded,
      polls,
      earlyPolls: ledger.tasks.reduce((n, t) => n + t.earlyPolls, 0),
      doubleLaunches: [...launchesPerKey.values()].filter((n) => n > 1).length,
      duplicatePolls:
        violations.overlapping.length +
        violations.underForeignLease.length +
        violations.outsideOwnLease.length,
      violations: {
        overlapping: violations.overlapping.length,
        underForeignLease: violations.underForeignLease.length,
        outsideOwnLease: violations.outsideOwnLease.length,
      },
      pollsBy: Object.fromEntries(
        logs.map(({ instanceId }) => [
          instanceId,
          [...byTask.values()].reduce((n, t) => n + t.polls.filter((p) => p.w === instanceId).length, 0),
        ]),
      ),
      workerCpuSeconds: cpu.map((c) => (c.user + c.system) / 1e6),
      serverCpuSeconds: serverCpu,
    }
  } finally {
    for (const w of workers) await w.kill()
    await server.stop()
    await db.dropSchema(schema)
    await db.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}
const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : String(x))

const main = async () => {
  const load = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")
  console.log(
    `B6: nproc ${os.availableParallelism?.() ?? os.cpus().length}, node ${process.version}, load ${load}; ` +
      `${settings.tasks} tasks of ${settings.taskMs} ms (pollIntervalMs ${settings.taskMs}), tasks/get latency ${settings.latencyMs} ms, ` +
      `lease ${settings.leaseMs} ms, batch ${settings.batchSize}, ${settings.pairs} pair(s) ABBA, seed ${settings.seed}`,
  )
  const results = []
  for (let pair = 0; pair < settings.pairs; pair++) {
    const order = pair % 2 === 0 ? [1, 4] : [4, 1]
    for (const instances of order) {
      const r = await run(instances, results.length)
      results.push(r)
      console.log(
        `  ${instances} instance(s): ${fmt(r.perSecond)} tasks/s (${r.tasks} in ${fmt(r.seconds, 2)} s; seeding ${fmt(r.seedSeconds, 1)} s, hand-off ${fmt(r.handOffSeconds, 2)} s); ` +
          `polls ${r.polls}, early ${r.earlyPolls}, duplicate ${r.duplicatePolls}, double launches ${r.doubleLaunches}; ` +
          `polls by instance ${JSON.stringify(r.pollsBy)}; CPU s: instances ${r.workerCpuSeconds.map((c) => fmt(c, 2)).join("/")}, server ${fmt(r.serverCpuSeconds, 2)}`,
      )
    }
  }
  const one = results.filter((r) => r.instances === 1)
  const four = results.filter((r) => r.instances === 4)
  const ratios = one.map((r, i) => (four[i]?.perSecond ?? Number.NaN) / r.perSecond)
  const summary = {
    settings,
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    node: process.version,
    load,
    one: {
      median: median(one.map((r) => r.perSecond)),
      min: Math.min(...one.map((r) => r.perSecond)),
      max: Math.max(...one.map((r) => r.perSecond)),
    },
    four: {
      median: median(four.map((r) => r.perSecond)),
      min: Math.min(...four.map((r) => r.perSecond)),
      max: Math.max(...four.map((r) => r.perSecond)),
    },
    ratio: median(four.map((r) => r.perSecond)) / median(one.map((r) => r.perSecond)),
    pairRatios: ratios,
    duplicatePolls: results.reduce((n, r) => n + r.duplicatePolls + r.earlyPolls, 0),
    doubleLaunches: results.reduce((n, r) => n + r.doubleLaunches, 0),
    unsettled: results.reduce((n, r) => n + (r.tasks - r.settled), 0),
    results,
  }
  console.log("")
  console.log("| instances | median tasks/s | spread (min–max) |")
  console.log("| --- | --- | --- |")
  console.log(`| 1 | ${fmt(summary.one.median)} | ${fmt(summary.one.min)}–${fmt(summary.one.max)} |`)
  console.log(`| 4 | ${fmt(summary.four.median)} | ${fmt(summary.four.min)}–${fmt(summary.four.max)} |`)
  console.log("")
  console.log(
    `B6 ratio 4/1: ${fmt(summary.ratio, 2)}× (per pair ${ratios.map((x) => fmt(x, 2)).join(", ")}), target ≥ 3×; ` +
      `duplicate concurrent polls ${summary.duplicatePolls} (target 0); double launches ${summary.doubleLaunches}; unsettled ${summary.unsettled}`,
  )
  if (values.json !== undefined) fs.writeFileSync(values.json, JSON.stringify(summary, null, 2))
  if (summary.duplicatePolls > 0 || summary.doubleLaunches > 0 || summary.unsettled > 0) process.exitCode = 1
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
