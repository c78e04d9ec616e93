/**
 * The fleet, with real processes: one PostgreSQL schema, one fake-server process, a seeder that
 * launches 1,000 calls and hands them off, and four worker processes (each a TaskClient with its
 * own instance id, short leases and the background reconciler) that drive them to the end. One
 * worker is SIGKILLed mid-run. Checked from outside, afterwards:
 *
 * - every task settles: every row is terminal in the store, every task in the server's ledger
 *   has a terminal status, and the two agree;
 * - no call is launched twice: one launch per key in the ledger;
 * - no row is lost: one row per key;
 * - no task is polled by two workers within one lease: no poll earlier than the interval the
 *   server asked for (ledger `earlyPolls`), and from the workers' own logs no poll outside the
 *   poller's lease, none under another worker's live lease, no two polls of a task in flight at
 *   once from different workers.
 *
 * Randomness (durations, outcomes, the victim, the moment it dies) comes from one seed, printed
 * with every run; set FLEET_SEED to replay one.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Effect from "effect/Effect"
import { runGroup } from "../../../scripts/testing/process-groups.mjs"
import * as Fleet from "./fixtures/fleet-harness.mjs"

const TASKS = 1_000
const POLL_INTERVAL_MS = 500
/** A fleet in which no row settles for STALL_MS is stuck (a lease runs 3 s, a task at most 3 s). */
const { workers: WORKERS, leaseMs: LEASE_MS, stallMs: STALL_MS } = Fleet.settings

const seed = Fleet.seedFromEnv()

const serverConfig = (seed: number) => ({
  seed,
  tools: [{ name: "job", ...Fleet.job(POLL_INTERVAL_MS) }],
})

const { terminal } = Fleet

const runFleet = (url: string, schema: string) =>
  Fleet.withFleet(
    { url, schema, config: serverConfig(seed), prefix: "mcp-handles-fleet-" },
    async ({ dir, db, server, spawn }) => {
      const rand = Fleet.random(seed)
      const durations = Array.from({ length: TASKS }, () => 300 + Math.floor(rand() * 2_700))

      const ids = Array.from({ length: WORKERS }, (_, i) => `w${i + 1}`)
      const logs = ids.map((instanceId) => ({ instanceId, file: path.join(dir, `${instanceId}.jsonl`) }))
      const workers = await spawn(Fleet.spawnWorker, ids, () => ({ leaseMs: LEASE_MS }))
      const t0 = Date.now()
      await Promise.all(workers.map((w) => w.go()))
      // Calls arrive while the fleet runs: the seeder launches them and hands each row off at once.
      // Two seeder processes, half the keys each (launching is CPU work, and there are two cores).
      const seeding = Promise.all(
        [0, 1].map((s) =>
          Fleet.runSeeder({
            url,
            schema,
            server: server.url,
            durations: durations.slice((s * TASKS) / 2, ((s + 1) * TASKS) / 2),
            keyPrefix: `k${s}`,
            concurrency: 16,
          }),
        ),
      ).then((reports) => ({
        seeded: reports.reduce((n, r) => n + r.seeded, 0),
        ms: Math.max(...reports.map((r) => r.ms)),
      }))
      seeding.catch(() => {}) // awaited below; a failure must not go unhandled meanwhile

      // Kill one worker once some of the work is done and plenty is still open, at a moment its
      // log shows it driving a task (polled, not ended): that task is the others' to take over.
      const victim = workers[Math.floor(rand() * WORKERS)] as Fleet.Worker
      const victimLog = logs.find((l) => l.instanceId === victim.instanceId)?.file ?? ""
      const killAt = Math.floor(TASKS * (0.2 + rand() * 0.3))
      const settledCount = async () => {
        const counts = await db.statusCounts(schema)
        const settled = Object.entries(counts)
          .filter(([status]) => terminal.has(status))
          .reduce((n, [, c]) => n + c, 0)
        return { settled, counts }
      }
      // Progress, not a fixed time, bounds these waits: under load the fleet is slower, not stuck.
      await Fleet.waitForProgress(
        "the kill point",
        async () => {
          const now = await settledCount()
          if (now.settled >= TASKS) throw new Error(`every row settled before the kill point (${killAt})`)
          const done = now.settled >= killAt && Fleet.drivenTasks(victimLog).length > 0
          return { ...now, progress: now.settled, done }
        },
        { stallMs: STALL_MS, everyMs: 50 },
      )
      const killed = await victim.kill()
      const killedAt = Date.now()
      const atKill = await settledCount()

      await Fleet.waitForProgress(
        "every row to settle",
        async () => {
          const now = await settledCount()
          // The last few open rows, with who holds them and when they are due: what a stall
          // message needs to say where the fleet is stuck.
          const open = TASKS - now.settled <= 20 ? { open: await db.openRows(schema, 20) } : {}
          return { ...now, ...open, progress: now.settled, done: now.settled >= TASKS }
        },
        { stallMs: STALL_MS },
      )
      const settledAt = Date.now()
      const seeded = await seeding
      const survivors = workers.filter((w) => w !== victim)
      await Promise.all(survivors.map((w) => w.stop()))

      const rows = await db.rows(schema)
      const ledger = await server.ledger()
      const { byTask, lines } = Fleet.readLogs(
        logs.map((l) => (l.instanceId === victim.instanceId ? { ...l, diedAt: killedAt } : l)),
      )
      return {
        seeded,
        victim: victim.instanceId,
        killed,
        killedAt,
        killAt,
        atKill,
        t0,
        runMs: settledAt - t0,
        rows,
        ledger,
        byTask,
        lines,
        violations: Fleet.leaseViolations(byTask),
        stderr: Object.fromEntries(workers.map((w) => [w.instanceId, w.stderr()])),
      }
    },
  )

describe("fleet of worker processes on one PostgreSQL store", () => {
  it.layer(TestDatabase.layerClient({ maxConnections: 2 }), { timeout: 60_000 })((it) => {
    it.effect(
      `${TASKS} tasks, ${WORKERS} workers, one SIGKILLed mid-run (seed ${seed})`,
      () =>
        Effect.gen(function* () {
          const { url, schema } = yield* TestDatabase.TestSchema
          const started = Date.now()
          const run = yield* Effect.promise(() => runFleet(url, schema))
          const context = `seed ${seed} (replay with FLEET_SEED=${seed})`
          const byKey = new Map(run.rows.map((r) => [r.key, r]))

          // Seeded: every call launched once, before the fleet started.
          expect(run.seeded.seeded, context).toBe(TASKS)
          expect(run.killed.signal, context).toBe("SIGKILL")

          // No row lost, every row settled.
          expect(run.rows.length, context).toBe(TASKS)
          expect(byKey.size, context).toBe(TASKS)
          const unsettled = run.rows.filter((r) => !terminal.has(r.status))
          expect(unsettled, context).toEqual([])

          // No double launch: one launch per key, and nothing launched without a key.
          const launchesPerKey = new Map<string | null, number>()
          for (const l of run.ledger.launches) {
            launchesPerKey.set(l.idempotencyKey, (launchesPerKey.get(l.idempotencyKey) ?? 0) + 1)
          }
          expect(run.ledger.launches.length, context).toBe(TASKS)
          expect(
            [...launchesPerKey].filter(([key, n]) => n !== 1 || key === null || !byKey.has(key)),
            context,
          ).toEqual([])

          // The server saw every task end, and the store recorded the same ending.
          expect(run.ledger.tasks.length, context).toBe(TASKS)
          const disagreements = run.ledger.tasks.filter((task) => {
            const row = byKey.get(task.idempotencyKey ?? "")
            return (
              task.terminalStatus === null ||
              row === undefined ||
              row.status !== task.terminalStatus ||
              row.task_id !== task.taskId
            )
          })
          expect(disagreements.slice(0, 5), context).toEqual([])

          // Poll discipline and one driver at a time.
          const early = run.ledger.tasks.filter((t) => t.earlyPolls > 0)
          expect(early.slice(0, 5), context).toEqual([])
          expect(run.violations.overlapping.slice(0, 5), context).toEqual([])
          expect(run.violations.underForeignLease.slice(0, 5), context).toEqual([])
          expect(run.violations.outsideOwnLease.slice(0, 5), context).toEqual([])

          // The workers' logs account for every poll the server saw: nothing polled behind their back.
          const loggedPolls = [...run.byTask.values()].reduce((n, t) => n + t.polls.length, 0)
          const serverPolls = run.ledger.tasks.reduce((n, t) => n + t.polls.length, 0)
          expect(loggedPolls, context).toBeGreaterThanOrEqual(serverPolls)

          // The kill mattered: the victim was driving tasks that others finished after it died.
          const takenOver = [...run.byTask.values()].filter(
            (t) =>
              t.polls.some((p) => p.w === run.victim) &&
              t.polls.some((p) => p.w !== run.victim && p.s > run.killedAt),
          )
          expect(takenOver.length, context).toBeGreaterThan(0)
          const pollers = new Set([...run.byTask.values()].flatMap((t) => t.polls.map((p) => p.w)))
          expect(pollers.size, context).toBe(WORKERS)

          console.log(
            `fleet: ${context}; seeded ${TASKS} in ${run.seeded.ms} ms; ${run.victim} killed at ${run.atKill.settled} settled; ` +
              `${takenOver.length} of its tasks taken over; all settled ${run.runMs} ms after start; ` +
              `${serverPolls} polls; test ${Date.now() - started} ms`,
          )
        }),
      // Bounded, and generous: five real processes, 1,000 tasks, two cores that may be loaded.
      300_000,
    )

    // Benchmark B6 at smoke size, so the script keeps working; no timing is asserted. It exits
    // non-zero on a duplicate concurrent poll, a double launch or an unsettled task.
    it.effect(
      "benchmark B6 runs at smoke size (1 and 4 instances, no duplicate polls)",
      () =>
        Effect.gen(function* () {
          const { url } = yield* TestDatabase.TestSchema
          const bench = fileURLToPath(new URL("../bench/fleet-bench.mjs", import.meta.url))
          const ran = yield* Effect.promise(() =>
            runGroup(process.execPath, [bench, "--smoke", "--seed", String(seed)], {
              env: { ...process.env, DATABASE_URL: url },
              timeoutMs: 240_000,
            }),
          )
          const result = { code: ran.code, out: `${ran.stdout}${ran.stderr}` }
          expect(result.out).toContain("duplicate concurrent polls 0")
          expect(result.code, result.out).toBe(0)
        }),
      300_000,
    )
  })
})
