/**
 * B3: reconcile at boot with many open rows in SQLite (synchronous=FULL). Rows are seeded
 * through the store's own `begin`/`update` as working tasks whose ids the fake server holds (it
 * starts from a `--state` file seeded to match). A new client then runs `reconcile`, which
 * returns once every row has been claimed and its first poll spread over one interval.
 * Targets: time to all scheduled ≤ 2 s for 100,000 rows; memory per open row ≤ 1 KiB (the
 * growth of the JS heap, and of RSS, during reconcile divided by the rows).
 *
 * Sizes alternate (small, large, small, large, …) so that memory that grows with the rows shows
 * up as a difference between them. Each repetition starts from a copy of the same seeded file.
 *
 * Run: `node --expose-gc dist/b3.js [--smoke] [--json] [--rows N] [--reps N]`.
 *
 * The bulk spread alone, without the server or the client (B3's time is almost all of it), for
 * counting instructions on a loaded machine: `--seed FILE --rows N` seeds a file as B3 does;
 * `--spread FILE` runs the reconciler's spread loop (5,000 rows a statement) on a copy of it, and
 * `--spread FILE --dry` only opens the store, so that under callgrind the difference of the two is
 * the spread's own cost (start-up and the copy cancel).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Polling from "@mcp-handles/core/Polling"
import * as ServerIdentity from "@mcp-handles/core/ServerIdentity"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import type * as Persistence from "@mcp-handles/fake-server/Persistence"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  type BenchReport,
  cliFlags,
  emit,
  fail,
  loadAverage,
  median,
  printLine,
  type RunningServer,
  spread,
  startFakeServer,
  table,
  tempDir,
} from "./common.js"

const SERVER_NAME = "fake"
/** The interval the seeded tasks advertise (the realistic case), and one no sweep can outlast. */
const INTERVAL_MS = 5_000
const LONG_INTERVAL_MS = 600_000
const OWNER = "bench"

const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect !== undefined) {
    collect()
    collect()
  }
}

/** The fake server's view: `rows` tasks, created long ago, each still working for an hour. */
const writeServerState = (file: string, rows: number, createdAt: number) => {
  const out = fs.openSync(file, "w")
  fs.writeSync(out, '{"tasks":[')
  let chunk: Array<string> = []
  for (let i = 0; i < rows; i++) {
    const record: Persistence.TaskRecord = {
      taskId: `b3-task-${i}`,
      tool: "job",
      arguments: { i },
      mrtrInputs: {},
      createdAt,
      plan: {
        durationMs: 3_600_000,
        steps: [],
        outcome: { kind: "result", text: "ok" },
        ttlMs: null,
        pollIntervalMs: INTERVAL_MS,
        cancellable: true,
        cancelDelayMs: 0,
        workingMessage: undefined,
      },
      launchSeq: i + 1,
      idempotencyKey: `k${i}`,
      answers: {},
      cancelRequestedAt: null,
    }
    chunk.push(JSON.stringify(record))
    if (chunk.length === 5_000) {
      fs.writeSync(out, `${i + 1 > chunk.length ? "," : ""}${chunk.join(",")}`)
      chunk = []
    }
  }
  if (chunk.length > 0) fs.writeSync(out, `${rows > chunk.length ? "," : ""}${chunk.join(",")}`)
  fs.writeSync(out, "]}")
  fs.closeSync(out)
}

/**
 * Seeds `rows` working tasks through the store itself (begin, then update with the task id and
 * a snapshot advertising a 5 s interval), as a previous process would have left them: all due.
 */
export const seed = (filename: string, rows: number, serverId: string, t0: number, intervalMs: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      // NORMAL only to seed faster; the measured store reopens the file at FULL.
      const store = yield* SqliteStore.make({ filename, synchronous: "NORMAL" })
      const one = (i: number) =>
        Effect.gen(function* () {
          const now = t0 - 60_000
          const { record } = yield* store.insertOrGet({
            scope: "default",
            key: `k${i}`,
            serverId,
            tool: "job",
            arguments: { i },
            argumentsHash: "0f".repeat(32),
            owner: OWNER,
            leaseMs: 30_000,
            now,
          })
          yield* store.update(
            new HandleRecord.HandleRecord(
              {
                ...record,
                status: "working",
                taskId: `b3-task-${i}`,
                snapshot: new HandleRecord.TaskSnapshot(
                  {
                    pollIntervalMs: intervalMs,
                    ttlMs: null,
                    createdAt: now,
                    lastUpdatedAt: now,
                    receivedAt: now,
                  },
                  true,
                ),
                // Due before the restart; the lease ran out with the previous process.
                // Spread over 5 s, as a real process leaves them (see the tie note in BENCHMARKS.md).
                nextPollAt: now + 1_000 + (i % 5_000),
                leaseOwner: "previous-process",
                leaseExpiresAt: now + 1,
                updatedAt: now,
              },
              true,
            ),
          )
        })
      const chunk = 2_000
      for (let start = 0; start < rows; start += chunk) {
        yield* Effect.forEach(
          Array.from({ length: Math.min(chunk, rows - start) }, (_, j) => start + j),
          one,
          { concurrency: "unbounded", discard: true },
        )
      }
    }),
  )

interface Measurement {
  readonly rows: number
  /** False when reconcile had not returned within the time limit (it was interrupted). */
  readonly finished: boolean
  readonly ms: number
  readonly heapPeakDelta: number
  readonly heapAfterDelta: number
  readonly rssPeakDelta: number
  readonly report: TaskClient.ReconcileReport
  readonly spreadOk: boolean
}

/** Opens a client on a copy of the seeded file at FULL and times `reconcile`, sampling memory. */
export const measure = (
  filename: string,
  url: string,
  rows: number,
  limitMs: number,
  liveHeap: boolean,
  intervalMs: number,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const context = yield* Layer.build(
        TaskClient.layer({
          servers: [{ name: SERVER_NAME, url }],
          instanceId: OWNER,
          background: false,
        }).pipe(
          Layer.provideMerge(
            Layer.mergeAll(
              SqliteStore.layer({ filename, synchronous: "FULL" }),
              HttpWire.layer(),
              Polling.layer(),
            ),
          ),
        ),
      )
      const client = yield* Effect.provide(TaskClient.TaskClient, context)
      const store = yield* Effect.provide(HandleStore.HandleStore, context)
      gc()
      const heap0 = process.memoryUsage().heapUsed
      const rss0 = process.memoryUsage().rss
      let heapPeak = heap0
      let rssPeak = rss0
      // With `liveHeap`, every sample is taken after a full GC: the heap the sweep keeps alive,
      // not the garbage it leaves for the collector (a run for memory only; not timed).
      const sampler = setInterval(() => {
        if (liveHeap) gc()
        const m = process.memoryUsage()
        heapPeak = Math.max(heapPeak, m.heapUsed)
        rssPeak = Math.max(rssPeak, m.rss)
      }, 5)
      const start = performance.now()
      const before = Date.now()
      const outcome = yield* Effect.timeoutOption(client.reconcile, `${limitMs} millis`)
      const finished = outcome._tag === "Some"
      const report = finished ? outcome.value : { resumed: Number.NaN, inDoubt: 0, reissued: 0 }
      const ms = performance.now() - start
      const after = Date.now()
      clearInterval(sampler)
      const end = process.memoryUsage()
      heapPeak = Math.max(heapPeak, end.heapUsed)
      rssPeak = Math.max(rssPeak, end.rss)
      gc()
      const heapAfter = process.memoryUsage().heapUsed
      // Every row must now be leased to us and due within one interval window that starts at the
      // sweep or one interval after the row's old due time, whichever is later (a dead process may
      // have polled at that time without recording it): at most two intervals ahead.
      let spreadOk = true
      let cursor: string | undefined
      let seen = 0
      do {
        const page: HandleStore.ListPage = yield* store.list({
          scope: "default",
          limit: 1000,
          cursor,
        })
        for (const r of page.records) {
          seen++
          if (
            r.nextPollAt === null ||
            r.nextPollAt < before ||
            r.nextPollAt > after + 2 * intervalMs ||
            r.leaseOwner !== OWNER
          )
            spreadOk = false
        }
        cursor = page.nextCursor ?? undefined
      } while (cursor !== undefined)
      if (seen !== rows) spreadOk = false
      return {
        rows,
        finished,
        ms,
        heapPeakDelta: heapPeak - heap0,
        heapAfterDelta: heapAfter - heap0,
        rssPeakDelta: rssPeak - rss0,
        report,
        spreadOk,
      } satisfies Measurement
    }),
  )

/** After the measurement: asks the fake server about a few of the rescheduled tasks. */
const verifyPolls = (filename: string, url: string, sample: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const store = yield* SqliteStore.make({ filename, synchronous: "FULL" })
      const wire = yield* HttpWire.make()
      const endpoint = { name: SERVER_NAME, url }
      let answered = 0
      for (let i = 0; i < sample; i++) {
        const record = yield* store.get("default", `k${i}`)
        if (record._tag === "None" || record.value.taskId === null) continue
        const task = yield* Effect.either(wire.getTask(endpoint, record.value.taskId))
        if (task._tag === "Right" && task.right.status === "working") answered++
      }
      return answered
    }),
  )

type Size = "small" | "large"

interface Config {
  readonly intervalMs: number
  readonly results: Record<Size, Array<Measurement>>
  readonly live: Record<Size, Array<Measurement>>
}

export const runB3 = async (options: {
  readonly smoke: boolean
  readonly rows?: number
  readonly reps?: number
}): Promise<BenchReport> => {
  const { smoke } = options
  const large = options.rows ?? (smoke ? 300 : 100_000)
  const small = Math.max(1, Math.floor(large / 10))
  const sizes: Record<Size, number> = { small, large }
  const reps = options.reps ?? (smoke ? 1 : 2)
  const limitMs = smoke ? 60_000 : 30_000
  const loadBefore = loadAverage()
  const temp = tempDir("mcp-handles-b3-")
  const t0 = Date.now()
  const stateFile = path.join(temp.dir, "server-state.json")
  writeServerState(stateFile, large, t0 - 120_000)
  let server: RunningServer | undefined
  const configs: Array<Config> = [INTERVAL_MS, LONG_INTERVAL_MS].map((intervalMs) => ({
    intervalMs,
    results: { small: [], large: [] },
    live: { small: [], large: [] },
  }))
  let seedMs = 0
  let answered = 0
  try {
    server = await startFakeServer(
      { tools: [{ name: "job", durationMs: 3_600_000, pollIntervalMs: INTERVAL_MS }], recordRequests: false },
      { dir: temp.dir, state: stateFile },
    )
    const url = server.url
    const serverId = await Effect.runPromise(ServerIdentity.of({ name: SERVER_NAME, url }))
    for (const config of configs) {
      const base = (size: Size) => path.join(temp.dir, `${size}-${config.intervalMs}.db`)
      const seedStart = performance.now()
      for (const size of ["small", "large"] as const) {
        await Effect.runPromise(seed(base(size), sizes[size], serverId, t0, config.intervalMs))
      }
      seedMs += performance.now() - seedStart
      for (let rep = 0; rep <= reps; rep++) {
        // The last round samples the live heap (GC before each sample): memory, not time.
        const liveHeap = rep === reps
        for (const size of ["small", "large"] as const) {
          const copy = path.join(temp.dir, `rep-${rep}-${size}.db`)
          fs.copyFileSync(base(size), copy)
          for (const side of ["-wal", "-shm"]) {
            if (fs.existsSync(base(size) + side)) fs.copyFileSync(base(size) + side, copy + side)
          }
          const m = await Effect.runPromise(
            measure(copy, url, sizes[size], limitMs, liveHeap, config.intervalMs),
          )
          ;(liveHeap ? config.live : config.results)[size].push(m)
          for (const f of [copy, `${copy}-wal`, `${copy}-shm`]) fs.rmSync(f, { force: true })
        }
      }
      if (config.intervalMs === INTERVAL_MS) {
        // The fake server answers for the rescheduled tasks: ask it about a few.
        const probe = path.join(temp.dir, "probe.db")
        fs.copyFileSync(base("small"), probe)
        answered = await Effect.runPromise(verifyPolls(probe, url, Math.min(small, 5)))
      }
    }
  } finally {
    await server?.stop()
    temp.remove()
  }
  const perRow = (xs: ReadonlyArray<Measurement>, f: (m: Measurement) => number) =>
    xs.map((m) => f(m) / m.rows)
  const kib = (bytes: number) => (bytes / 1024).toFixed(0)
  const row = (config: Config, size: Size) => {
    const xs = config.results[size]
    const ls = config.live[size]
    const n = sizes[size]
    const unfinished = xs.filter((m) => !m.finished).length
    const ms = median(xs.map((m) => m.ms))
    return [
      `${config.intervalMs / 1000} s`,
      n.toLocaleString("en-US"),
      `${ms.toFixed(0)}${unfinished > 0 ? ` (${unfinished} of ${xs.length} stopped at ${limitMs / 1000} s, not done)` : ""}`,
      spread(
        xs.map((m) => m.ms),
        0,
      ),
      unfinished > 0 ? "—" : ((n / ms) * 1000).toFixed(0),
      xs.map((m) => (m.finished ? `${m.report.resumed}` : "—")).join(", "),
      kib(median(xs.map((m) => m.heapPeakDelta))),
      kib(median(ls.map((m) => m.heapPeakDelta))),
      kib(median(xs.map((m) => m.heapAfterDelta))),
      kib(median(ls.map((m) => m.rssPeakDelta))),
      median(perRow(ls, (m) => m.heapPeakDelta)).toFixed(1),
      xs.every((m) => m.spreadOk) ? "yes" : "NO",
    ]
  }
  const main = configs[0] as Config
  const msLarge = main.results.large.map((m) => m.ms)
  const finished = main.results.large.every((m) => m.finished)
  const timeMs = finished ? median(msLarge) : Number.POSITIVE_INFINITY
  const heapPerRowLarge = perRow(main.live.large, (m) => m.heapPeakDelta)
  const heapPerRow = median(heapPerRowLarge)
  const longLarge = (configs[1] as Config).results.large
  const longMs = longLarge.every((m) => m.finished) ? median(longLarge.map((m) => m.ms)) : Number.NaN
  const timeText = finished
    ? `${(timeMs / 1000).toFixed(2)} s (spread ${spread(
        msLarge.map((x) => x / 1000),
        2,
      )} s)`
    : `not done after ${limitMs / 1000} s`
  const markdown = [
    `${reps} timed repetition(s) per size plus one memory run, sizes alternated (${small.toLocaleString("en-US")}, ${large.toLocaleString("en-US")}, …), each on a fresh copy of a file seeded through the store (\`begin\` + \`update\`: working tasks, all due, the lease of a dead process); the client (\`background: false\`) runs \`reconcile\` with the default batch (100 rows per claim), SQLite at synchronous=FULL, and is stopped after ${limitMs / 1000} s. Rows' next polls are spread over 5 s in the past. Two seeded intervals: ${INTERVAL_MS / 1000} s (a realistic interval for long tasks), and ${LONG_INTERVAL_MS / 60_000} min, which the client clamps to its 60 s maximum (few rows rescheduled by the sweep come due again during it, so this shows the sweep's own throughput). Seeding took ${(seedMs / 1000).toFixed(1)} s (not measured). The fake server (its own process) holds every task id; \`tasks/get\` for ${answered} of the seeded task ids answered \`working\`.${smoke ? " SMOKE SIZE: not a measurement." : ""} Load average before: ${loadBefore}.`,
    "",
    "Live heap: sampled every 5 ms after a forced full GC during the memory run (what the sweep keeps alive); heap peak with garbage: sampled without GC during the timed runs.",
    "",
    table(
      [
        "interval",
        "open rows",
        "median ms to all scheduled",
        "spread ms",
        "rows/s",
        "rows acted on (per run)",
        "heap peak Δ KiB (with garbage)",
        "live heap peak Δ KiB",
        "heap Δ after reconcile + GC KiB",
        "RSS peak Δ KiB",
        "live heap B/row",
        "every row leased and due within its window",
      ],
      configs.flatMap((c) => [row(c, "small"), row(c, "large")]),
    ),
    "",
    `B3 time to all scheduled (${large.toLocaleString("en-US")} rows, ${INTERVAL_MS / 1000} s interval): **${timeText}**, target ≤ 2 s; with a ${LONG_INTERVAL_MS / 60_000} min interval: ${Number.isNaN(longMs) ? "not done" : `${(longMs / 1000).toFixed(2)} s`}; memory per open row: **${heapPerRow.toFixed(1)} B live heap**, target ≤ 1 KiB`,
  ].join("\n")
  return {
    id: "B3",
    title: "reconcile at boot",
    smoke,
    results: [
      {
        what: `time to all scheduled, ${large.toLocaleString("en-US")} rows (${INTERVAL_MS / 1000} s interval)`,
        value: timeMs / 1000,
        unit: "s",
        target: "≤ 2 s",
        met: timeMs <= 2_000,
        spread: spread(
          msLarge.map((x) => x / 1000),
          2,
        ),
      },
      {
        what: `time to all scheduled, ${large.toLocaleString("en-US")} rows (${LONG_INTERVAL_MS / 60_000} min interval)`,
        value: longMs / 1000,
        unit: "s",
        target: "≤ 2 s",
        met: longMs <= 2_000,
        spread: spread(
          longLarge.map((m) => m.ms / 1000),
          2,
        ),
      },
      {
        what: "memory per open row (live heap peak Δ / rows)",
        value: heapPerRow,
        unit: "B",
        target: "≤ 1024 B",
        met: heapPerRow <= 1024,
        spread: spread(heapPerRowLarge, 1),
      },
    ],
    markdown,
  }
}

/** The reconciler's bulk spread loop on a copy of `seeded`, through the store at FULL. */
const spreadOnly = (seeded: string, dry: boolean) =>
  Effect.gen(function* () {
    const temp = tempDir("mcp-handles-b3-spread-")
    const copy = path.join(temp.dir, "spread.db")
    fs.copyFileSync(seeded, copy)
    const moved = yield* Effect.scoped(
      Effect.gen(function* () {
        const store = yield* SqliteStore.make({ filename: copy, synchronous: "FULL" })
        const now = Date.now()
        let total = 0
        for (let more = !dry; more; ) {
          const n = yield* store.spreadDue({
            owner: OWNER,
            takeOver: [],
            now,
            leaseMs: 30_000,
            limit: 5_000,
            minIntervalMs: 1_000,
            maxIntervalMs: 60_000,
            defaultIntervalMs: INTERVAL_MS,
          })
          total += n
          more = n === 5_000
        }
        return total
      }),
    ).pipe(Effect.ensuring(Effect.sync(() => temp.remove())))
    return `spread ${moved} rows`
  })

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const flags = cliFlags()
  const rows = flags.option("--rows")
  const reps = flags.option("--reps")
  const seedTo = flags.option("--seed")
  const spreadFrom = flags.option("--spread")
  if (seedTo !== undefined) {
    Effect.runPromise(seed(seedTo, Number(rows ?? 100_000), "fake:0123456789abcdef", Date.now(), INTERVAL_MS))
      .then(() => printLine(`seeded ${seedTo}`))
      .catch(fail)
  } else if (spreadFrom !== undefined) {
    Effect.runPromise(spreadOnly(spreadFrom, process.argv.includes("--dry")))
      .then(printLine)
      .catch(fail)
  } else
    runB3({
      smoke: flags.smoke,
      ...(rows === undefined ? {} : { rows: Number(rows) }),
      ...(reps === undefined ? {} : { reps: Number(reps) }),
    })
      .then((report) => emit(report, flags.json))
      .catch(fail)
}
