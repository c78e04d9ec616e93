/**
 * B7: push (`subscriptions/listen`) vs polling, both sides in one run against the same fake
 * server (a separate process on loopback). Each side is mcp-handles on SQLite (synchronous=FULL)
 * running the same concurrent tasks; one with `push: true`, one without.
 *
 * Measured per side:
 * - `tasks/get` per task, from the server's ledger, and per task per minute of its life. Goal
 *   with push: at most one safety-net poll per task per minute.
 * - From the server finishing a task (its creation time plus the tool's duration, on the server's
 *   clock) to its outcome being durable in the store (the store write of the terminal row having
 *   returned, on the client's clock; both processes read one machine's clock). Goal with push:
 *   p99 ≤ 50 ms. The fake server looks for changes to push every `--notify-every-ms` (5 ms here),
 *   which is part of the push figure.
 *
 * Run: `node dist/b7.js [--smoke] [--json] [--tasks N] [--duration-ms D] [--interval-ms I]`.
 */
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Polling from "@mcp-handles/core/Polling"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import type * as Config from "@mcp-handles/fake-server/Config"
import type * as Ledger from "@mcp-handles/fake-server/Ledger"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import {
  type BenchReport,
  cliFlags,
  emit,
  fail,
  loadAverage,
  type RunningServer,
  startFakeServer,
  table,
  tempDir,
} from "./common.js"

/** Tasks finish spread over this many distinct durations (`stepMs` apart), not all at once. */
const shapes = 10
const stepMs = 37
const notifyEveryMs = 5
const warmUpTool = "b7_warm"
const warmUpCalls = 3

interface Workload {
  readonly tasks: number
  readonly durationMs: number
  readonly intervalMs: number
}

const toolName = (i: number) => `b7_${i}`
const durationOf = (workload: Workload, i: number) => workload.durationMs + i * stepMs

interface SideResult {
  readonly name: string
  readonly polls: number
  readonly tasks: number
  /** Sum of the tasks' lives, in minutes. */
  readonly taskMinutes: number
  /** Server finished → outcome durable, ms, one per task. */
  readonly latencies: ReadonlyArray<number>
  readonly listens: number
  readonly seconds: number
}

export const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  if (xs.length === 0) return Number.NaN
  const sorted = [...xs].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] as number
}

/** A store that notes, per task id, when the write that made its row terminal returned. */
const timingStore = <E>(layer: Layer.Layer<HandleStore.HandleStore, E>, settledAt: Map<string, number>) =>
  Layer.effect(
    HandleStore.HandleStore,
    Effect.map(HandleStore.HandleStore, (store) =>
      HandleStore.HandleStore.of({
        ...store,
        update: (record, options) =>
          Effect.tap(store.update(record, options), (written) =>
            Effect.sync(() => {
              if (
                written.taskId !== null &&
                HandleRecord.isTerminal(written.status) &&
                !settledAt.has(written.taskId)
              )
                settledAt.set(written.taskId, Date.now())
            }),
          ),
      }),
    ),
  ).pipe(Layer.provide(layer))

const runSide = async (
  name: string,
  push: boolean,
  server: RunningServer,
  dir: string,
  workload: Workload,
): Promise<SideResult> => {
  await server.clearLedger()
  const settledAt = new Map<string, number>()
  const layer = TaskClient.layer({
    servers: [{ name: "fake", url: server.url }],
    instanceId: `b7-${push ? "push" : "poll"}`,
    push,
  }).pipe(
    Layer.provide(
      Layer.mergeAll(
        timingStore(
          SqliteStore.layer({
            filename: path.join(dir, `b7-${push ? "push" : "poll"}.db`),
            synchronous: "FULL",
          }),
          settledAt,
        ),
        HttpWire.layer(),
        Polling.layer(),
      ),
    ),
  )
  const runtime = ManagedRuntime.make(layer)
  let started = performance.now()
  try {
    const client = await runtime.runPromise(TaskClient.TaskClient)
    const callAll = async (calls: ReadonlyArray<{ readonly tool: string; readonly key: string }>) => {
      const exit = await runtime.runPromiseExit(
        Effect.forEach(
          calls,
          (call) =>
            Effect.gen(function* () {
              const handle = yield* client.callTool("fake", call.tool, {}, { key: call.key })
              const outcome = yield* handle.outcome
              if (outcome._tag !== "Completed")
                return yield* Effect.die(new Error(`call ended ${outcome._tag}`))
            }),
          { concurrency: "unbounded", discard: true },
        ),
      )
      if (Exit.isFailure(exit)) throw new Error(`${name} side failed: ${String(exit.cause)}`)
    }
    // A few short calls first, not counted: the first of everything (code, connections, the
    // store) is not what either side is measured on.
    await callAll(
      Array.from({ length: warmUpCalls }, (_, i) => ({ tool: warmUpTool, key: `b7-${name}-warm-${i}` })),
    )
    await server.clearLedger()
    settledAt.clear()
    started = performance.now()
    await callAll(
      Array.from({ length: workload.tasks }, (_, i) => ({
        tool: toolName(i % shapes),
        key: `b7-${name}-${i}`,
      })),
    )
  } finally {
    await runtime.dispose()
  }
  const seconds = (performance.now() - started) / 1000
  const ledger: Ledger.Snapshot = await server.ledger()
  const durations = new Map(Array.from({ length: shapes }, (_, i) => [toolName(i), durationOf(workload, i)]))
  const latencies: Array<number> = []
  let polls = 0
  let taskMinutes = 0
  for (const task of ledger.tasks) {
    const duration = durations.get(task.tool)
    if (duration === undefined) continue
    polls += task.polls.length
    taskMinutes += duration / 60_000
    const durable = settledAt.get(task.taskId)
    if (durable !== undefined) latencies.push(durable - (task.createdAt + duration))
  }
  const listens = ledger.requests.filter((request) => request.method === "subscriptions/listen").length
  return { name, polls, tasks: ledger.tasks.length, taskMinutes, latencies, listens, seconds }
}

export const runB7 = async (options: {
  readonly smoke: boolean
  readonly tasks?: number
  readonly durationMs?: number
  readonly intervalMs?: number
}): Promise<BenchReport> => {
  const { smoke } = options
  const workload: Workload = {
    tasks: options.tasks ?? (smoke ? 10 : 200),
    durationMs: options.durationMs ?? (smoke ? 3_000 : 75_000),
    intervalMs: options.intervalMs ?? 1_000,
  }
  const loadBefore = loadAverage()
  const temp = tempDir("mcp-handles-b7-")
  const config: Config.Config = {
    tools: [
      ...Array.from({ length: shapes }, (_, i) => ({
        name: toolName(i),
        durationMs: durationOf(workload, i),
        pollIntervalMs: workload.intervalMs,
      })),
      { name: warmUpTool, durationMs: 300, pollIntervalMs: 250 },
    ],
  }
  const server = await startFakeServer(config, {
    dir: temp.dir,
    args: ["--notify-every-ms", String(notifyEveryMs)],
  })
  let pushed: SideResult
  let polled: SideResult
  try {
    pushed = await runSide("push", true, server, temp.dir, workload)
    polled = await runSide("polling", false, server, temp.dir, workload)
  } finally {
    await server.stop()
    temp.remove()
  }
  const perTaskMinute = (side: SideResult) =>
    side.taskMinutes === 0 ? Number.NaN : side.polls / side.taskMinutes
  const row = (side: SideResult) => [
    side.name,
    String(side.tasks),
    (side.polls / Math.max(1, side.tasks)).toFixed(2),
    perTaskMinute(side).toFixed(2),
    percentile(side.latencies, 50).toFixed(1),
    percentile(side.latencies, 99).toFixed(1),
    Math.max(...side.latencies).toFixed(1),
    String(side.listens),
    side.seconds.toFixed(1),
  ]
  const pushRate = perTaskMinute(pushed)
  const pushP99 = percentile(pushed.latencies, 99)
  const pollP99 = percentile(polled.latencies, 99)
  const markdown = [
    `Workload: ${workload.tasks} concurrent tasks per side, durations ${(workload.durationMs / 1000).toFixed(1)}–${(durationOf(workload, shapes - 1) / 1000).toFixed(1)} s, advertised \`pollIntervalMs\` ${workload.intervalMs} ms; mcp-handles on SQLite (synchronous=FULL), default polling; the fake server is a separate process on loopback and checks for changes to push every ${notifyEveryMs} ms. Push side first, then polling, on one server; each side makes 3 short calls first that are not counted. \`tasks/get\` counted by the server's ledger; latency = the client's store write of the terminal row returned − (task created + its duration), both on this machine's clock.${smoke ? " SMOKE SIZE: not a measurement." : ""} Load average before: ${loadBefore}.`,
    "",
    table(
      [
        "side",
        "tasks",
        "tasks/get per task",
        "per task per minute",
        "finished → durable p50 (ms)",
        "p99 (ms)",
        "max (ms)",
        "subscriptions/listen",
        "wall (s)",
      ],
      [row(pushed), row(polled)],
    ),
    "",
    `B7 tasks/get per task per minute with push: **${pushRate.toFixed(2)}**, target ≤ 1 (polling: ${perTaskMinute(polled).toFixed(2)}); finished → durable p99 with push: **${pushP99.toFixed(1)} ms**, target ≤ 50 ms (polling: ${pollP99.toFixed(1)} ms)`,
  ].join("\n")
  return {
    id: "B7",
    title: "push (subscriptions/listen) vs polling",
    smoke,
    results: [
      {
        what: "tasks/get per task per minute, push",
        value: pushRate,
        unit: "polls",
        target: "≤ 1",
        met: pushRate <= 1,
      },
      {
        what: "server finished → outcome durable, p99, push",
        value: pushP99,
        unit: "ms",
        target: "≤ 50 ms",
        met: pushP99 <= 50,
        spread: `polling p99 ${pollP99.toFixed(1)} ms`,
      },
    ],
    markdown,
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const flags = cliFlags()
  const number = flags.number
  const tasks = number("--tasks")
  const durationMs = number("--duration-ms")
  const intervalMs = number("--interval-ms")
  runB7({
    smoke: flags.smoke,
    ...(tasks === undefined ? {} : { tasks }),
    ...(durationMs === undefined ? {} : { durationMs }),
    ...(intervalMs === undefined ? {} : { intervalMs }),
  })
    .then((report) => emit(report, flags.json))
    .catch(fail)
}
