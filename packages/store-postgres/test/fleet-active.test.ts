/**
 * Poll discipline across the fleet (DESIGN invariant 4) is part of it: it found that a driver
 * polled a task under another instance's live lease (a caller's settle right after its callTool,
 * while another instance's sweep held the row), early; a driver now checks its lease first. The
 * failure message shows each task's story: server requests by client, the workers' leases and
 * polls from their own logs.
 *
 * The active fleet, with real processes: one PostgreSQL schema, one fake-server process, and four
 * worker processes (each a TaskClient with its own instance id, 3 s leases, the background
 * reconciler on, `inDoubtPolicy: "surface"`, an input handler that answers by itself). Each
 * worker launches calls under keys it owns, settles them, cancels some of them and some keys
 * other workers launched, and answers the input its tasks ask for, while all of them reconcile.
 * Some `tools/call` answers come back late (the server creates the task at once and holds the
 * answer 3.5 s, longer than a lease). One worker is SIGKILLed while one of its `tools/call` is in
 * flight: the server has launched the task (the ledger shows the launch) and not yet answered.
 * Then a survivor cancels that key, and the survivors finish.
 *
 * Checked from outside, per task and per key (the server's ledger against the store and the
 * workers' logs), never by counts:
 * - one row per key, and a row for every key the server launched and every key a survivor owns;
 * - at most one launch per key, and every launch carries its key;
 * - every task the server created is recorded by its task id on its key's row (or among the row's
 *   stray tasks), or was cancelled by a client (`tasks/cancel` in the ledger), or its key's row is
 *   in doubt (or abandoned while in doubt) without a task id and covers exactly that one launch;
 *   no task id is held by two rows;
 * - every cancel a worker asked for reached the server as `tasks/cancel` (for every task id the
 *   key's row learned) unless the task ended first: once the intent was durable, the task was
 *   not polled again after an answer that said it was still running, without a cancel sent;
 * - no poll sooner than the task's interval, no two workers polling one task at once;
 * - each input key of a task accepted at most once by the server; asked at most once across the
 *   survivors;
 * - every row ends terminal or in doubt; every survivor's settles and cancels returned;
 * - the in-flight call of the killed worker rests in doubt (or abandoned) covering its one launch.
 *
 * Randomness (durations, tools, what each call does, the victim) comes from one seed, printed with
 * every run; set FLEET_SEED to replay one.
 */
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Effect from "effect/Effect"
import * as Fleet from "./fixtures/fleet-harness.mjs"

const CALLS_PER_WORKER = 16
const POLL_INTERVAL_MS = 300
/** Late `tools/call` answers: longer than a lease, so the dispatcher must keep renewing it. */
const LATE_ANSWER_MS = 3_500
/** A fleet that has not moved for STALL_MS is stuck (a lease runs 3 s, a task at most 8 s). */
const { workers: WORKERS, leaseMs: LEASE_MS, stallMs: STALL_MS } = Fleet.settings

const seed = Fleet.seedFromEnv()

const elicit = (message: string) => ({
  method: "elicitation/create",
  params: {
    message,
    // The workers answer {ok, by}: both are fields of the form (an answer is checked against it).
    requestedSchema: { type: "object", properties: { ok: { type: "boolean" }, by: { type: "string" } } },
  },
})
const job = Fleet.job(POLL_INTERVAL_MS)
const serverConfig = (seed: number) => ({
  seed,
  tools: [
    { name: "job", ...job },
    // Asks twice while it works; blocked time does not count as working time.
    {
      name: "ask",
      ...job,
      inputSteps: [
        { atMs: 200, requests: { confirm: elicit("go on?") } },
        { atMs: 600, requests: { again: elicit("really?") } },
      ],
    },
    // Its tools/call answer leaves late; the task runs from the moment the call arrived.
    { name: "late", ...job },
  ],
  faults: [
    {
      when: { method: "tools/call", tool: "late" },
      fault: { kind: "latency", ms: LATE_ANSWER_MS, phase: "after" },
    },
  ],
})

const rests = (status: string) => Fleet.terminal.has(status) || status === "in_doubt"

interface Planned extends Fleet.ActCall {
  readonly owner: string
}

interface Body {
  readonly taskId: string | null
  readonly lastProblem: string | null
  readonly strayTasks?: ReadonlyArray<{ readonly taskId: string; readonly cancelSent: boolean }>
}

interface RequestEntry {
  readonly method: string | null
  readonly taskId: string | null
  readonly idempotencyKey: string | null
  readonly client: string | null
  readonly startedAt: number
  readonly endedAt: number
}
interface TaskEntry {
  readonly taskId: string
  readonly idempotencyKey: string | null
  readonly createdAt: number
  readonly cancels: ReadonlyArray<number>
  readonly updates: ReadonlyArray<{
    readonly at: number
    readonly keys: ReadonlyArray<string>
    readonly accepted: ReadonlyArray<string>
  }>
  readonly terminalStatus: string | null
  readonly earlyPolls: number
  readonly polls: ReadonlyArray<number>
}
interface FullLedger {
  readonly launches: ReadonlyArray<{ readonly idempotencyKey: string | null; readonly taskId: string | null }>
  readonly tasks: ReadonlyArray<TaskEntry>
  readonly requests: ReadonlyArray<RequestEntry>
}

const plan = (rand: () => number, ids: ReadonlyArray<string>) => {
  const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(rand() * xs.length)] as A
  const calls: Array<Planned> = []
  for (const owner of ids) {
    for (let i = 0; i < CALLS_PER_WORKER; i++) {
      const tool = pick(["job", "ask", "late"])
      const cancel = rand() < 0.3
      calls.push({
        owner,
        key: `${owner}-${String(i).padStart(3, "0")}`,
        tool,
        // A call to be cancelled runs long enough that the cancel usually finds it running.
        ms: cancel ? 4_000 + Math.floor(rand() * 4_000) : 800 + Math.floor(rand() * 2_200),
        after: cancel ? "cancel" : rand() < 0.5 ? "settle" : "leave",
        cancelAfterMs: Math.floor(rand() * 1_000),
      })
    }
  }
  return calls
}

const runFleet = (url: string, schema: string) =>
  Fleet.withFleet(
    { url, schema, config: serverConfig(seed), prefix: "mcp-handles-fleet-active-" },
    async ({ dir, db, server, spawn }) => {
      const rand = Fleet.random(seed)
      const ledger = () => server.ledger() as unknown as Promise<FullLedger>
      const ids = Array.from({ length: WORKERS }, (_, i) => `a${i + 1}`)
      const victimId = ids[Math.floor(rand() * WORKERS)] as string
      const calls = plan(rand, ids)
      const byKey = new Map(calls.map((c) => [c.key, c]))
      const logs = new Map(ids.map((id) => [id, path.join(dir, `${id}.jsonl`)]))
      // Each worker also cancels two keys that survivors launch (a victim's key may never be
      // launched, and a cancel waits for its row): plain settle calls, chosen by the seed.
      const foreignFor = (id: string) => {
        const candidates = calls.filter((c) => c.owner !== id && c.owner !== victimId && c.after !== "cancel")
        return Array.from({ length: 2 }, () => {
          const c = candidates[Math.floor(rand() * candidates.length)] as Planned
          return { key: c.key, afterMs: Math.floor(rand() * 500) }
        })
      }
      const actors = await spawn(Fleet.spawnActor, ids, (instanceId) => ({
        leaseMs: LEASE_MS,
        concurrency: 4,
        calls: calls.filter((c) => c.owner === instanceId),
        foreignCancels: foreignFor(instanceId),
      }))
      const victim = actors.find((a) => a.instanceId === victimId) as Fleet.Actor
      const survivors = actors.filter((a) => a !== victim)
      const t0 = Date.now()
      await Promise.all(actors.map((a) => a.go()))

      // The kill point: the server launched one of the victim's calls and has not answered it
      // yet (a late answer), after the victim has several calls going.
      const inFlight = (l: FullLedger) => {
        const answered = new Set(
          l.requests.filter((r) => r.method === "tools/call").map((r) => r.idempotencyKey),
        )
        return l.launches
          .map((x) => x.idempotencyKey)
          .filter((k): k is string => k !== null && byKey.get(k)?.owner === victimId && !answered.has(k))
      }
      const atKill = await Fleet.waitForProgress(
        "the kill point (a launched, unanswered tools/call of the victim)",
        async () => {
          const l = await ledger()
          const dispatched = Fleet.readEvents(logs.get(victimId) as string).filter(
            (e) => e.t === "dispatched",
          ).length
          const flying = inFlight(l)
          if (victim.isDone()) throw new Error(`${victimId} finished before the kill point`)
          return {
            progress: l.requests.length,
            dispatched,
            flying,
            done: dispatched >= 4 && flying.length > 0,
          }
        },
        { stallMs: STALL_MS, everyMs: 50 },
      )
      const killStart = Date.now()
      const killed = await victim.kill()
      const killedAt = Date.now()

      // A survivor cancels the killed call's key: its row is pending under a dead lease, or in doubt.
      const told = atKill.flying[0]
      const canceller = survivors[0] as Fleet.Actor
      const toldCancel = told === undefined ? Promise.resolve("") : canceller.cancel(told)

      await Fleet.waitForProgress(
        "the survivors to finish and every row to rest",
        async () => {
          const rows = await db.rows(schema)
          const open = rows.filter((r) => !rests(r.status))
          const events = survivors.reduce(
            (n, a) => n + Fleet.readEvents(logs.get(a.instanceId) as string).length,
            0,
          )
          const finished = survivors.filter((a) => a.isDone()).length
          return {
            progress: events + rows.length - open.length,
            open: open.map((r) => `${r.key}:${r.status}`).slice(0, 10),
            finished,
            done: open.length === 0 && finished === survivors.length,
          }
        },
        { stallMs: STALL_MS },
      )
      await toldCancel
      const settledAt = Date.now()
      await Promise.all(survivors.map((a) => a.stop()))

      const bodies = await db.bodies(schema)
      const events = ids.flatMap((id) => Fleet.readEvents(logs.get(id) as string))
      const final = await ledger()
      // Which calls were in flight when it died: launched before the kill, and their answer (the
      // ledger logs a request when its answer leaves) left the server after the SIGKILL was sent,
      // or never: the victim cannot have read it.
      const answers = final.requests.filter((r) => r.method === "tools/call")
      const flyingAtKill = atKill.flying.filter(
        (k) => !answers.some((r) => r.idempotencyKey === k && r.endedAt <= killStart),
      )
      return {
        atKill: {
          ...atKill,
          killStart,
          answers: answers.filter((r) => atKill.flying.includes(r.idempotencyKey ?? "")),
        },
        calls,
        byKey,
        victimId,
        killed,
        killedAt,
        flyingAtKill,
        told,
        t0,
        runMs: settledAt - t0,
        bodies,
        ledger: final,
        logged: Fleet.readLogs(
          ids.map((id) => ({
            instanceId: id,
            file: logs.get(id) as string,
            ...(id === victimId ? { diedAt: killedAt } : {}),
          })),
        ).byTask,
        events,
        stderr: Object.fromEntries(actors.map((a) => [a.instanceId, a.stderr().slice(-2000)])),
      }
    },
  )

describe("active fleet of worker processes on one PostgreSQL store", () => {
  it.layer(TestDatabase.layerClient({ maxConnections: 2 }), { timeout: 60_000 })((it) => {
    it.effect(
      `${WORKERS} workers launch, settle, cancel and answer input; one SIGKILLed mid-dispatch; poll discipline (seed ${seed})`,
      () =>
        Effect.gen(function* () {
          const { url, schema } = yield* TestDatabase.TestSchema
          const started = Date.now()
          const run = yield* Effect.promise(() => runFleet(url, schema))
          const context = `seed ${seed} (replay with FLEET_SEED=${seed}); victim ${run.victimId}`
          const { ledger, byKey } = run
          const rows = new Map(run.bodies.map((r) => [r.key, { status: r.status, body: r.body as Body }]))
          const isVictims = (key: string | null) => key !== null && byKey.get(key)?.owner === run.victimId

          expect(run.killed.signal, context).toBe("SIGKILL")
          expect(
            run.flyingAtKill.length,
            `${context}: a tools/call in flight at the kill ${JSON.stringify(run.atKill)}`,
          ).toBeGreaterThan(0)

          // Every worker wrote nothing it could not do: no call failed inside a survivor.
          const errors = run.events.filter((e) => e.t === "error" && e.w !== run.victimId)
          expect(errors, context).toEqual([])

          // One row per key; a row for every launched key and every key a survivor owns.
          expect(rows.size, context).toBe(run.bodies.length)
          expect(
            run.bodies.filter((r) => !byKey.has(r.key)).map((r) => r.key),
            context,
          ).toEqual([])
          const launchedKeys = new Set(ledger.launches.map((l) => l.idempotencyKey))
          const missing = run.calls
            .filter((c) => (c.owner !== run.victimId || launchedKeys.has(c.key)) && !rows.has(c.key))
            .map((c) => c.key)
          expect(missing, context).toEqual([])

          // At most one launch per key; none without a key.
          const launchesOf = new Map<string | null, number>()
          for (const l of ledger.launches)
            launchesOf.set(l.idempotencyKey, (launchesOf.get(l.idempotencyKey) ?? 0) + 1)
          expect(
            [...launchesOf].filter(([key, n]) => key === null || n > 1),
            context,
          ).toEqual([])

          // No orphan, per task.
          const cancelRequested = new Set(
            run.events.filter((e) => e.t === "cancel").map((e) => e.k as string),
          )
          const holders = new Map<string, Array<string>>()
          for (const [key, row] of rows) {
            for (const id of [row.body.taskId, ...(row.body.strayTasks ?? []).map((s) => s.taskId)]) {
              if (id !== null) holders.set(id, [...(holders.get(id) ?? []), key])
            }
          }
          const orphans = ledger.tasks.flatMap((task): Array<Record<string, unknown>> => {
            const row = rows.get(task.idempotencyKey ?? "")
            if (row === undefined) return [{ task: task.taskId, key: task.idempotencyKey, why: "no row" }]
            const recorded =
              row.body.taskId === task.taskId ||
              (row.body.strayTasks ?? []).some((s) => s.taskId === task.taskId)
            const cancelledByClient = task.cancels.length > 0
            const oneLaunch = launchesOf.get(task.idempotencyKey) === 1 && row.body.taskId === null
            const coveredInDoubt = oneLaunch && row.status === "in_doubt"
            const abandoned =
              oneLaunch &&
              row.status === "cancelled" &&
              cancelRequested.has(task.idempotencyKey ?? "") &&
              (row.body.lastProblem ?? "").includes("abandoned")
            return recorded || cancelledByClient || coveredInDoubt || abandoned
              ? []
              : [
                  {
                    task: task.taskId,
                    key: task.idempotencyKey,
                    status: row.status,
                    rowTask: row.body.taskId,
                  },
                ]
          })
          expect(orphans, context).toEqual([])
          expect(
            [...holders].filter(([, keys]) => keys.length > 1),
            context,
          ).toEqual([])

          // A requested cancel reaches the server unless the task ended first. The intent is
          // durable once cancel(key) returned; whoever drives the row acts on it at its next
          // write, at the latest after its next poll. So for every task id the key's row learned:
          // if a tasks/get (by anyone) was answered after the intent was durable and the task was
          // polled again after that answer (it was still running: polling stops at terminal),
          // tasks/cancel must be in the ledger. The victim's cancels count once they returned.
          const tasksById = new Map(ledger.tasks.map((t) => [t.taskId, t]))
          const polls = new Map<string, Array<RequestEntry>>()
          for (const r of ledger.requests) {
            if (r.method !== "tasks/get" || r.taskId === null) continue
            polls.set(r.taskId, [...(polls.get(r.taskId) ?? []), r])
          }
          let known = 0
          let sent = 0
          const unsent = run.events
            .filter((e) => e.t === "cancelled")
            .flatMap((e): Array<Record<string, unknown>> => {
              const key = e.k as string
              const row = rows.get(key)
              if (row === undefined) return [{ key, why: "no row" }]
              const ids = [row.body.taskId, ...(row.body.strayTasks ?? []).map((s) => s.taskId)]
              return ids.flatMap((id) => {
                const task = id === null ? undefined : tasksById.get(id)
                if (task === undefined) return []
                known++
                if (task.cancels.length > 0) sent++
                const after = (polls.get(task.taskId) ?? []).filter((p) => p.startedAt >= (e.at as number))
                const first = after.reduce((m, p) => Math.min(m, p.endedAt), Number.POSITIVE_INFINITY)
                const again = after.filter((p) => p.startedAt > first)
                if (again.length === 0) return []
                return task.cancels.length === 0
                  ? [{ key, by: e.w, durableAt: e.at, pollsAfter: after.length, status: row.status }]
                  : []
              })
            })
          expect(unsent, context).toEqual([])

          // Poll discipline across the fleet: no poll sooner than the interval the task asked
          // for; no two workers with a tasks/get of one task in flight at once (a poll the victim
          // had in flight when it died does not count against the survivor that took over).
          // A task's story as the server saw it, times from its creation: for failure messages.
          const story = (t: TaskEntry) => ({
            key: t.idempotencyKey,
            tool: byKey.get(t.idempotencyKey ?? "")?.tool,
            early: t.earlyPolls,
            polls: t.polls.map((at) => at - t.createdAt),
            requests: ledger.requests
              .filter(
                (r) =>
                  r.taskId === t.taskId ||
                  (r.method === "tools/call" && r.idempotencyKey === t.idempotencyKey),
              )
              .map((r) => `${r.method} ${r.client} ${r.startedAt - t.createdAt}..${r.endedAt - t.createdAt}`),
            updates: t.updates.map((u) => `${u.at - t.createdAt} ${u.accepted.join("+")}`),
            cancels: t.cancels.map((at) => at - t.createdAt),
            // What the workers' own logs say: leases granted, polls sent and answered.
            leases: (run.logged.get(t.taskId)?.leases ?? []).map(
              (l) => `${l.w} ${l.a - t.createdAt}..${l.u - t.createdAt}`,
            ),
            logged: (run.logged.get(t.taskId)?.polls ?? []).map(
              (p) => `${p.w} ${p.s - t.createdAt}..${p.e - t.createdAt} ${p.st}`,
            ),
            killedAt: run.atKill.killStart - t.createdAt,
          })
          expect(ledger.tasks.filter((t) => t.earlyPolls > 0).map(story), context).toEqual([])
          const overlapping = [...polls].flatMap(([taskId, ps]) =>
            ps.flatMap((p, i) =>
              ps
                .slice(i + 1)
                .filter(
                  (q) =>
                    q.client !== p.client &&
                    q.startedAt < p.endedAt &&
                    p.startedAt < q.endedAt &&
                    !(p.client === run.victimId && p.endedAt > run.atKill.killStart) &&
                    !(q.client === run.victimId && q.endedAt > run.atKill.killStart),
                )
                .map((q) => ({ key: tasksById.get(taskId)?.idempotencyKey, a: p, b: q })),
            ),
          )
          expect(overlapping.slice(0, 5), context).toEqual([])

          // Input once: accepted at most once per input key by the server; asked at most once
          // across the survivors (the victim may have been asked and died before storing it).
          const answeredTwice = ledger.tasks.flatMap((task) => {
            const count = new Map<string, number>()
            for (const u of task.updates) for (const k of u.accepted) count.set(k, (count.get(k) ?? 0) + 1)
            return [...count].filter(([, n]) => n > 1).map(([k, n]) => ({ key: task.idempotencyKey, k, n }))
          })
          expect(answeredTwice, context).toEqual([])
          const asks = new Map<string, Array<string>>()
          for (const e of run.events) {
            if (e.t !== "ask" || e.w === run.victimId) continue
            const id = `${e.k}/${e.ik}`
            asks.set(id, [...(asks.get(id) ?? []), e.w as string])
          }
          expect(
            [...asks].filter(([, by]) => by.length > 1),
            context,
          ).toEqual([])
          const inputTasks = ledger.tasks.filter((t) => t.updates.some((u) => u.accepted.length > 0))

          // Every row rests.
          const open = [...rows].filter(([, r]) => !rests(r.status)).map(([k, r]) => `${k}:${r.status}`)
          expect(open, context).toEqual([])

          // The killed call: launched once, never answered to anyone; its row rests in doubt or was
          // abandoned (a survivor cancelled it), without a task id.
          for (const key of run.flyingAtKill) {
            const row = rows.get(key)
            expect(launchesOf.get(key), `${context}: ${key}`).toBe(1)
            expect(row?.body.taskId ?? null, `${context}: ${key}`).toBeNull()
            expect(["in_doubt", "cancelled"], `${context}: ${key} ${row?.status}`).toContain(row?.status)
          }

          // The kill mattered: a task the victim launched was polled by a survivor after it died.
          const victimTasks = new Set(
            ledger.tasks.filter((t) => isVictims(t.idempotencyKey)).map((t) => t.taskId),
          )
          const takenOver = new Set(
            ledger.requests
              .filter(
                (r) =>
                  r.method === "tasks/get" &&
                  r.taskId !== null &&
                  victimTasks.has(r.taskId) &&
                  r.client !== run.victimId &&
                  r.startedAt > run.killedAt,
              )
              .map((r) => r.taskId),
          )
          const statuses: Record<string, number> = {}
          for (const r of rows.values()) statuses[r.status] = (statuses[r.status] ?? 0) + 1
          const cancelsSent = ledger.tasks.filter((t) => t.cancels.length > 0).length
          console.log(
            `fleet-active: ${context}; ${run.calls.length} calls planned, ${ledger.launches.length} launched; ` +
              `killed with ${run.flyingAtKill.map((k) => `${k}:${rows.get(k)?.status}`).join(",")} in flight ` +
              `(cancelled by a survivor: ${run.told}); ` +
              `${takenOver.size} of its tasks taken over; rows ${JSON.stringify(statuses)}; ` +
              `${cancelRequested.size} keys cancelled (tasks/cancel sent for ${sent} of the ${known} tasks they knew), ` +
              `${cancelsSent} tasks got tasks/cancel; ${asks.size} input keys asked; ` +
              `${inputTasks.length} tasks answered input; all rested ${run.runMs} ms after start; ` +
              `test ${Date.now() - started} ms`,
          )
          expect(takenOver.size, context).toBeGreaterThan(0)
        }),
      // Bounded, and generous: five real processes on two cores that may be loaded; the waits
      // inside fail on a stall long before this.
      300_000,
    )
  })
})
