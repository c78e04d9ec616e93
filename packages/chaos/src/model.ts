/**
 * Model-based chaos: fast-check generates sequences of steps (calls of every result shape,
 * crashes at every boundary, restarts with reconcile, cancel, reissue, abandon, gc, input
 * answers, server faults, server restarts, time), runs each against the fake server and one
 * store in TestClock time, and checks the invariants of DESIGN.md after every step:
 *
 * 1. no orphan: every task the server created is recorded with its id, or covered by a pending
 *    (in flight, or in doubt once recovered) or in_doubt row of the call that created it;
 * 2. no double launch: launches per key never exceed the row's `launches`, which only an explicit
 *    reissue increments;
 * 3. terminal is final, agrees with the server, and every `settle` of a key saw the same outcome;
 * 4. poll discipline: no `tasks/get` sooner than the last `pollIntervalMs` (ledger `earlyPolls`),
 *    and none after the row became terminal;
 * 5. liveness: once the server has settled or expired everything, every row is terminal or
 *    in_doubt.
 */
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Outcome from "@mcp-handles/core/Outcome"
import type { FakeServerConfig, LedgerSnapshot, ToolConfig } from "@mcp-handles/fake-server"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Random from "effect/Random"
import * as Scheduler from "effect/Scheduler"
import * as Scope from "effect/Scope"
import * as fc from "fast-check"
import { seedMathRandom } from "./determinism.js"
import { openStore, type StoreKind } from "./stores.js"
import { VirtualClock } from "./VirtualClock.js"
import {
  type CrashPoint,
  elapse,
  emptyStats,
  type FaultKind,
  type FaultMethod,
  flush,
  inputAnswer,
  makeWorld,
  runFor,
  runWorldStep,
  type ServerFault,
  type Stats,
  startProcess,
} from "./world.js"

// ---------------------------------------------------------------------------------------------
// The server's tools: every result shape
// ---------------------------------------------------------------------------------------------

export const tools: ReadonlyArray<ToolConfig> = [
  { name: "direct", shape: "direct", outcome: { kind: "result", text: "direct {{args.n}}" } },
  { name: "rejected", shape: "direct", outcome: { kind: "error", code: -32042, message: "no" } },
  { name: "task", shape: "task", durationMs: 3_000, pollIntervalMs: 1_000 },
  {
    name: "varying",
    shape: "task",
    durationMs: 9_000,
    pollIntervalMs: [
      { afterMs: 0, pollIntervalMs: 700 },
      { afterMs: 3_000, pollIntervalMs: 2_300 },
    ],
  },
  // No interval from the server: the client's default schedule.
  { name: "silent", shape: "task", durationMs: 4_000 },
  {
    name: "ask",
    shape: "task",
    durationMs: 4_000,
    pollIntervalMs: 500,
    inputSteps: [
      {
        atMs: 1_000,
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
  {
    name: "confirm",
    shape: "direct",
    mrtrRounds: [
      {
        ok: {
          method: "elicitation/create",
          params: { message: "Sure?", requestedSchema: { type: "object" } },
        },
      },
    ],
    outcome: { kind: "result", text: "confirmed" },
  },
  { name: "expiring", shape: "task", durationMs: 60_000, ttlMs: 5_000, pollIntervalMs: 1_000 },
  { name: "stubborn", shape: "task", durationMs: 6_000, cancellable: false, pollIntervalMs: 1_500 },
  {
    name: "idem",
    shape: "task",
    durationMs: 2_000,
    pollIntervalMs: 800,
    annotations: { idempotentHint: true },
  },
  {
    name: "coin",
    shape: { taskProbability: 0.5 },
    durationMs: 1_500,
    pollIntervalMs: 600,
    outcome: {
      weighted: [
        { weight: 3, outcome: { kind: "result", text: "ok" } },
        { weight: 1, outcome: { kind: "error", code: -32050, message: "task failed" } },
      ],
    },
  },
]

export const toolNames = tools.map((tool) => tool.name)

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

export interface KeyRef {
  readonly tool: string
  readonly n: number
}

export type Step =
  | ({ readonly kind: "call" } & KeyRef)
  | ({ readonly kind: "settle" } & KeyRef)
  | ({ readonly kind: "cancel" } & KeyRef)
  | ({ readonly kind: "reissue" } & KeyRef)
  | ({ readonly kind: "abandon" } & KeyRef)
  | { readonly kind: "gc"; readonly retentionMs: number }
  | { readonly kind: "answer" }
  | { readonly kind: "refuse" }
  | { readonly kind: "arm"; readonly point: CrashPoint }
  | { readonly kind: "crash" }
  | {
      readonly kind: "restart"
      readonly how: "crash" | "close"
      readonly sameId: boolean
      readonly background: boolean
    }
  | { readonly kind: "fault"; readonly fault: ServerFault }
  | { readonly kind: "serverRestart" }
  | { readonly kind: "advance"; readonly ms: number }

export interface Setup {
  readonly inDoubtPolicy: "surface" | "reissue-if-idempotent"
  /** The server deduplicates `tools/call` on the idempotency key. */
  readonly dedup: boolean
  /** The server keeps its tasks across its restarts. */
  readonly durableServer: boolean
  /** The first process runs the background reconciler. */
  readonly background: boolean
  /** Seed of the server's and the client's random choices. */
  readonly seed: number
}

export interface Sequence {
  readonly setup: Setup
  readonly steps: ReadonlyArray<Step>
}

const keyRef = fc.record({ tool: fc.constantFrom(...toolNames), n: fc.integer({ min: 0, max: 2 }) })

const onKey = <K extends "call" | "settle" | "cancel" | "reissue" | "abandon">(kind: K) =>
  keyRef.map((ref) => ({ kind, ...ref }) as Step)

/** Where a process dies: at a request of each method, or around a store operation. */
export const crashPoint: fc.Arbitrary<CrashPoint> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom("tools/call", "tasks/get", "tasks/update", "tasks/cancel" as const),
      fc.integer({ min: 1, max: 2 }),
      fc.constantFrom("before-send", "after-answer" as const),
    )
    .map(([method, nth, phase]): CrashPoint => ({ at: "fetch", method, nth, phase })),
  fc
    .tuple(
      fc.constantFrom("insertOrGet", "update", "claimDue" as const),
      fc.integer({ min: 1, max: 3 }),
      fc.constantFrom("before-write", "after-write" as const),
    )
    .map(([op, nth, phase]): CrashPoint => ({ at: "store", op, nth, phase })),
)

const faultKinds: ReadonlyArray<FaultKind> = [
  "refused",
  "reset-before",
  "drop-after",
  "503",
  "429",
  "500-after",
  "malformed-after",
  "wrong-shape-after",
]
const faultMethods: ReadonlyArray<FaultMethod> = ["tools/call", "tasks/get", "tasks/update", "tasks/cancel"]

export const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: onKey("call") },
  { weight: 3, arbitrary: onKey("settle") },
  { weight: 2, arbitrary: onKey("cancel") },
  { weight: 2, arbitrary: onKey("reissue") },
  { weight: 1, arbitrary: onKey("abandon") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(0, 5_000, 60_000).map((retentionMs): Step => ({ kind: "gc", retentionMs })),
  },
  { weight: 2, arbitrary: fc.constant<Step>({ kind: "answer" }) },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: "refuse" }) },
  { weight: 3, arbitrary: crashPoint.map((point): Step => ({ kind: "arm", point })) },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: "crash" }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom("crash", "close" as const), fc.boolean(), fc.boolean())
      .map(([how, sameId, background]): Step => ({ kind: "restart", how, sameId, background })),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom(...faultMethods), fc.constantFrom(...faultKinds))
      .map(([method, kind]): Step => ({ kind: "fault", fault: { method, kind } })),
  },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: "serverRestart" }) },
  {
    weight: 6,
    arbitrary: fc.integer({ min: 100, max: 8_000 }).map((ms): Step => ({ kind: "advance", ms })),
  },
)

export const sequenceArbitrary = (maxSteps: number): fc.Arbitrary<Sequence> =>
  fc.record({
    setup: fc.record({
      inDoubtPolicy: fc.constantFrom("surface", "reissue-if-idempotent" as const),
      dedup: fc.boolean(),
      durableServer: fc.boolean(),
      background: fc.boolean(),
      seed: fc.integer({ min: 1, max: 1_000_000 }),
    }),
    steps: fc.array(stepArbitrary, { minLength: 1, maxLength: maxSteps, size: "max" }),
  })

// ---------------------------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------------------------

export class InvariantViolation extends Error {
  override readonly name = "InvariantViolation"
}

/** JSON with sorted keys, so stores that reorder keys (jsonb) compare equal. */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  )

const outcomeKey = (outcome: Outcome.Outcome): string => canonical({ ...outcome })

interface KeyModel {
  /** Bumped when gc deletes the key's row: a later call of the key starts a new history. */
  generation: number
  /** Ledger launch sequence numbers up to this one belong to earlier generations. */
  launchBase: number
  /** The first terminal state seen in this generation. */
  terminal: string | undefined
  /** Terminal outcomes `settle` returned in this generation. */
  settles: Array<string>
}

export interface Model {
  readonly keys: Map<string, KeyModel>
}

const keyModel = (model: Model, key: string): KeyModel => {
  let found = model.keys.get(key)
  if (found === undefined) {
    found = { generation: 0, launchBase: 0, terminal: undefined, settles: [] }
    model.keys.set(key, found)
  }
  return found
}

const isTerminal = (status: HandleRecord.Status) =>
  status === "completed" || status === "failed" || status === "cancelled" || status === "expired"

export const allRows = (store: HandleStore.HandleStore, scope = "default") =>
  Effect.gen(function* () {
    const rows: Array<HandleRecord.HandleRecord> = []
    let cursor: string | undefined
    for (;;) {
      const page = yield* store.list({ scope, limit: 1000, ...(cursor === undefined ? {} : { cursor }) })
      rows.push(...page.records)
      if (page.nextCursor === null) return rows
      cursor = page.nextCursor
    }
  })

/** Every violation of invariants 1-4 in this state of the world (empty when all hold). */
export const violations = (
  model: Model,
  ledger: LedgerSnapshot,
  rows: ReadonlyArray<HandleRecord.HandleRecord>,
  garbledCreates: ReadonlySet<string> = new Set(),
  lostPollAnswers: ReadonlySet<string> = new Set(),
  tolerated: ReadonlySet<EarlyCause> = new Set(),
): Array<string> => {
  const found: Array<string> = []
  const byKey = new Map(rows.map((row) => [row.key, row]))
  const keys = new Set<string>([...byKey.keys()])
  for (const launch of ledger.launches) if (launch.idempotencyKey !== null) keys.add(launch.idempotencyKey)
  for (const launch of ledger.launches) {
    if (launch.idempotencyKey === null) found.push(`launch ${launch.seq} of ${launch.tool} carried no key`)
  }
  for (const key of keys) {
    const km = keyModel(model, key)
    const launches = ledger.launches.filter((l) => l.idempotencyKey === key && l.seq > km.launchBase)
    const tasks = ledger.tasks.filter((t) => t.idempotencyKey === key && t.launchSeq > km.launchBase)
    const row = byKey.get(key)
    if (row === undefined) {
      if (launches.length > 0)
        found.push(`no double launch / no orphan: ${key} launched ${launches.length}× but has no row`)
      continue
    }
    // 2. No double launch.
    if (launches.length > row.launches) {
      found.push(
        `no double launch: ${key} launched ${launches.length}× on the server, row allows ${row.launches} (status ${row.status})`,
      )
    }
    // 1. No orphan.
    if (row.status === "pending" || row.status === "in_doubt") {
      // Covered: in flight, or in doubt (a pending row of a dead process is recovered as in doubt).
    } else if (row.taskId !== null) {
      // Any generation: a deduplicating server hands a re-used key its earlier task.
      if (!ledger.tasks.some((task) => task.taskId === row.taskId && task.idempotencyKey === key))
        found.push(`no orphan: ${key} records a task id the server never created for it`)
      if (tasks.length > row.launches)
        found.push(`no orphan: ${key} has ${tasks.length} server tasks but ${row.launches} launch(es)`)
    } else {
      const abandoned = row.status === "cancelled" && (row.lastProblem ?? "").includes("abandoned")
      if (!abandoned && tasks.length > row.launches - 1) {
        found.push(
          `no orphan: ${key} is ${row.status} without a task id, but the server created ${tasks.length} task(s) for it (launches ${row.launches})`,
        )
      }
    }
    // 3. Terminal is final, agrees with the server, and with every settle.
    if (isTerminal(row.status)) {
      const rested = Outcome.fromRecord(row)
      const state = canonical({
        status: row.status,
        taskId: row.taskId,
        result: row.result,
        error: row.error,
      })
      if (km.terminal === undefined) km.terminal = state
      else if (km.terminal !== state)
        found.push(`terminal is final: ${key} changed from ${km.terminal} to ${state}`)
      const restedKey = rested === undefined ? "" : outcomeKey(rested)
      for (const settled of km.settles) {
        if (settled !== restedKey)
          found.push(`settle agrees: ${key} settled as ${settled}, row says ${restedKey}`)
      }
      if (row.taskId !== null && row.status !== "expired") {
        const task = ledger.tasks.find((t) => t.taskId === row.taskId)
        if (task?.terminalStatus !== row.status) {
          found.push(
            `only the server decides: ${key} is ${row.status} but the server reported ${task?.terminalStatus ?? "no terminal status"}`,
          )
        }
        const late = (task?.polls ?? []).filter((at) => at > (row.settledAt ?? Number.POSITIVE_INFINITY))
        if (late.length > 0)
          found.push(`polling stops at terminal: ${key} polled ${late.length}× after it settled`)
      }
    } else {
      if (km.terminal !== undefined)
        found.push(`terminal is final: ${key} left ${km.terminal} for ${row.status}`)
      if (km.settles.length > 0)
        found.push(`settle agrees: ${key} settled as ${km.settles[0]} but the row is ${row.status}`)
    }
  }
  // 4. Poll discipline, with each early poll's likely cause.
  for (const task of ledger.tasks) {
    if (task.earlyPolls === 0 && !garbledCreates.has(task.taskId)) continue
    const early = earlyPolls(task, garbledCreates, lostPollAnswers).filter(
      (poll) => !tolerated.has(poll.cause),
    )
    if (early.length > 0) {
      found.push(
        `poll discipline: task of ${task.idempotencyKey} (${task.tool}) polled early: ${early
          .map(
            (poll) =>
              `at ${poll.at} only ${poll.gap} ms after the previous (interval ${poll.interval}; ${poll.cause})`,
          )
          .join(", ")} (polls at ${task.polls.join(", ")}, created ${task.createdAt})`,
      )
    }
  }
  return found
}

const intervalAt = (tool: string, createdAt: number, at: number): number | undefined => {
  const config = tools.find((t) => t.name === tool)?.pollIntervalMs
  if (config === undefined || typeof config === "number") return config
  let current: number | undefined
  for (const change of config) if (at - createdAt >= change.afterMs) current = change.pollIntervalMs
  return current
}

/**
 * Causes of early polls found so far, each a core bug with its regression test
 * (test/regressions.test.ts). `CHAOS_TOLERATE=cause,cause` ignores them while hunting for others.
 */
export type EarlyCause = "retry after a lost poll answer" | "poll capped at the TTL deadline" | "unexplained"

/**
 * Known core bugs to tolerate while hunting for others, by the cause their early polls show.
 * Empty: both early-poll bugs found so far (retry after a lost poll answer, poll capped at the
 * TTL deadline) are fixed in core (6283426) and pinned by test/regressions.test.ts.
 */
export const knownEarlyPollBugs: ReadonlyArray<EarlyCause> = []

/** The server's early-poll rule (see fake-server getTask), with a likely cause for each. */
export const earlyPolls = (
  task: LedgerSnapshot["tasks"][number],
  garbledCreates: ReadonlySet<string>,
  lostPollAnswers: ReadonlySet<string>,
): Array<{ at: number; gap: number; interval: number; cause: EarlyCause }> => {
  const early: Array<{ at: number; gap: number; interval: number; cause: EarlyCause }> = []
  const ttl = tools.find((t) => t.name === task.tool)?.ttlMs
  for (let i = 0; i < task.polls.length; i++) {
    // The client never saw the interval of a task whose creating answer was garbled: its first
    // poll follows the default schedule.
    if (i === 0 && garbledCreates.has(task.taskId)) continue
    const previous = i === 0 ? task.createdAt : (task.polls[i - 1] as number)
    const at = task.polls[i] as number
    const interval = intervalAt(task.tool, task.createdAt, previous)
    if (interval === undefined || at - previous >= interval) continue
    // When the previous poll's answer was lost, the client never saw the interval it carried:
    // the last one it was told came with the answer before (a changed interval in a lost answer
    // cannot be honoured by anyone).
    if (lostPollAnswers.has(`${task.taskId}@${previous}`)) {
      const told = i >= 2 ? (task.polls[i - 2] as number) : task.createdAt
      const known = intervalAt(task.tool, task.createdAt, told)
      if (known !== undefined && at - previous >= known) continue
    }
    const cause: EarlyCause = lostPollAnswers.has(`${task.taskId}@${previous}`)
      ? "retry after a lost poll answer"
      : typeof ttl === "number" && at >= task.createdAt + ttl && previous < task.createdAt + ttl
        ? "poll capped at the TTL deadline"
        : "unexplained"
    early.push({ at, gap: at - previous, interval, cause })
  }
  return early
}

// ---------------------------------------------------------------------------------------------
// Running a sequence
// ---------------------------------------------------------------------------------------------

/** Longest task (9 s), TTL backstop (5 s), dispatch backoff and leases (10 s) fit well within. */
const quiesceSeconds = 60

const keyOf = (ref: KeyRef) => `${ref.tool}-${ref.n}`

const describeStep = (step: Step): string => {
  switch (step.kind) {
    case "call":
    case "settle":
    case "cancel":
    case "reissue":
    case "abandon":
      return `${step.kind} ${keyOf(step)}`
    case "gc":
      return `gc retention ${step.retentionMs} ms`
    case "arm":
      return step.point.at === "fetch"
        ? `arm crash at fetch ${step.point.method} #${step.point.nth} ${step.point.phase}`
        : `arm crash at store.${step.point.op} #${step.point.nth} ${step.point.phase}`
    case "restart":
      return `restart (${step.how}${step.sameId ? ", same id" : ", new id"}, background ${step.background})`
    case "fault":
      return `fault ${step.fault.kind} on next ${step.fault.method}`
    case "advance":
      return `advance ${step.ms} ms`
    default:
      return step.kind
  }
}

export interface SequenceReport {
  readonly steps: number
}

/** Runs one sequence against a fresh store and server; fails with an InvariantViolation. */
export const runSequence = (
  kind: StoreKind,
  sequence: Sequence,
  stats: Stats,
  tolerate: ReadonlyArray<EarlyCause> = [],
): Effect.Effect<void> =>
  Effect.suspend(() => runSequenceOn(new VirtualClock(), kind, sequence, stats, new Set(tolerate)))

const runSequenceOn = (
  clock: VirtualClock,
  kind: StoreKind,
  sequence: Sequence,
  stats: Stats,
  tolerated: ReadonlySet<EarlyCause>,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { store, inFlight } = yield* openStore(kind)
      const { setup } = sequence
      const config: FakeServerConfig = { tools, seed: setup.seed, deduplicateByKey: setup.dedup }
      const world = yield* makeWorld(
        config,
        {
          durableServer: setup.durableServer,
          setup: { inDoubtPolicy: setup.inDoubtPolicy, leaseMs: 10_000 },
          stats,
          inFlight,
        },
        store,
      )
      const model: Model = { keys: new Map() }
      // However the sequence ends, its processes stop before the store closes.
      const started: Array<{ readonly stop: () => void }> = []
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const proc of started) proc.stop()
        }),
      )
      stats.sequences++
      world.trace.push(
        `setup: ${kind} store, inDoubtPolicy ${setup.inDoubtPolicy}, server ${setup.dedup ? "deduplicates" : "does not deduplicate"}, ${setup.durableServer ? "durable" : "volatile"} server, seed ${setup.seed}`,
      )

      let instances = 0
      const instanceId = (sameId: boolean) => (sameId ? "local" : `instance-${++instances}`)
      let lastId = "local"
      const restart = (how: "crash" | "close", sameId: boolean, background: boolean) =>
        Effect.gen(function* () {
          const old = world.proc
          if (old !== undefined && !old.dead()) {
            if (how === "crash") old.crash()
            else {
              const closed = yield* runFor(world, Scope.close(old.scope, Exit.void), 5_000)
              if (closed !== "done") yield* fail(`closing process ${old.id} did not finish (${closed})`)
            }
          }
          lastId = sameId ? lastId : instanceId(false)
          const proc = yield* startProcess(world, { instanceId: lastId, background })
          started.push(proc)
          stats.restarts++
          yield* Effect.fork(proc.client.reconcile.pipe(Effect.ignore))
          yield* flush(world)
        })

      const fail = (message: string) =>
        Effect.die(
          new InvariantViolation(
            `${message}\n--- trace (last 60 lines) ---\n${world.trace.slice(-60).join("\n")}`,
          ),
        )

      const check = (when: string) =>
        Effect.gen(function* () {
          stats.checks++
          const rows = yield* allRows(store).pipe(Effect.orDie)
          const found = violations(
            model,
            world.server.ledger.snapshot(),
            rows,
            world.garbledCreates,
            world.lostPollAnswers,
            tolerated,
          )
          if (found.length > 0) yield* fail(`${when}:\n  ${found.join("\n  ")}`)
        })

      const live = () =>
        Effect.gen(function* () {
          const proc = world.proc
          if (proc !== undefined && !proc.dead()) return proc
          // A dead process is replaced at once (its restart reconciles), as a supervisor would.
          yield* restart("crash", true, setup.background)
          return world.proc as NonNullable<typeof world.proc>
        })

      const recordSettle = (key: string) => (outcome: Outcome.Outcome) =>
        Effect.sync(() => {
          stats.settles++
          const km = keyModel(model, key)
          if (outcome._tag !== "InDoubt") km.settles.push(outcomeKey(outcome))
        })

      world.onGc = (deleted, count) =>
        Effect.gen(function* () {
          if (count !== deleted.length)
            yield* fail(`gc deleted ${count} rows, but only ${deleted.length} were terminal and old enough`)
          const ledger = world.server.ledger.snapshot()
          const lastSeq = ledger.launches.reduce((max, l) => Math.max(max, l.seq), 0)
          for (const row of deleted) {
            world.trace.push(`  gc deleted ${row.key} (${row.status})`)
            const km = keyModel(model, row.key)
            km.generation++
            km.launchBase = lastSeq
            km.terminal = undefined
            km.settles = []
          }
        })

      started.push(yield* startProcess(world, { instanceId: "local", background: setup.background }))

      for (const [index, step] of sequence.steps.entries()) {
        world.trace.push(`#${index} ${describeStep(step)}`)
        switch (step.kind) {
          case "call": {
            const proc = yield* live()
            stats.calls++
            yield* Effect.fork(
              proc.client
                .callTool("fake", step.tool, { n: step.n }, { key: keyOf(step) })
                .pipe(Effect.ignore),
            )
            break
          }
          case "settle": {
            const proc = yield* live()
            const key = keyOf(step)
            const generation = keyModel(model, key).generation
            yield* Effect.fork(
              proc.client.settle(key).pipe(
                Effect.flatMap((outcome) =>
                  keyModel(model, key).generation === generation ? recordSettle(key)(outcome) : Effect.void,
                ),
                Effect.ignore,
              ),
            )
            break
          }
          case "cancel": {
            const proc = yield* live()
            yield* Effect.fork(proc.client.cancel(keyOf(step)).pipe(Effect.ignore))
            break
          }
          case "reissue": {
            const proc = yield* live()
            yield* Effect.fork(proc.client.reissue(keyOf(step)).pipe(Effect.ignore))
            break
          }
          case "abandon": {
            const proc = yield* live()
            yield* Effect.fork(proc.client.abandon(keyOf(step)).pipe(Effect.ignore))
            break
          }
          case "gc": {
            const proc = yield* live()
            yield* runFor(world, proc.client.gc(step.retentionMs), 0)
            break
          }
          case "answer":
          case "refuse":
          case "fault":
          case "serverRestart":
          case "advance":
            yield* runWorldStep(world, step)
            break
          case "arm": {
            const proc = yield* live()
            proc.arm(step.point)
            break
          }
          case "crash":
            if (world.proc !== undefined && !world.proc.dead()) world.proc.crash()
            break
          case "restart":
            yield* restart(step.how, step.sameId, step.background)
            break
        }
        yield* flush(world)
        stats.steps++
        yield* check(`after step #${index} (${describeStep(step)})`)
      }

      // Liveness: faults stop, input is answered, and a process with the background reconciler
      // runs while the server settles or expires everything.
      world.trace.push("quiesce: faults off, input answered, background reconciler on")
      world.faults = []
      world.autoAnswer = true
      for (const waiter of world.inputWaiters) yield* Deferred.succeed(waiter, inputAnswer)
      world.inputWaiters = []
      world.proc?.arm(undefined)
      if (world.proc === undefined || world.proc.dead() || !world.proc.background) {
        yield* restart("close", true, true)
      }
      for (let second = 0; second < quiesceSeconds; second += 20) {
        yield* elapse(world, 20_000)
        yield* check(`while quiescing at +${second + 20} s`)
      }
      const rows = yield* allRows(store).pipe(Effect.orDie)
      const stuck = rows.filter((row) => !isTerminal(row.status) && row.status !== "in_doubt")
      if (stuck.length > 0) {
        yield* fail(
          `liveness: after ${quiesceSeconds} s with a settled server, ${stuck
            .map(
              (row) =>
                `${row.key} is ${row.status} (nextPollAt ${row.nextPollAt}, lease ${row.leaseOwner} until ${row.leaseExpiresAt}, attempts ${row.attempts}, version ${row.version}, last problem ${row.lastProblem}, polls at ${world.server.ledger
                  .snapshot()
                  .tasks.filter((t) => t.taskId === row.taskId)
                  .flatMap((t) => t.polls)
                  .join(" ")})`,
            )
            .join(
              "; ",
            )}; now ${world.clock.unsafeCurrentTimeMillis()}, process ${world.proc?.id} ${world.proc?.dead() ? "dead" : "alive"}, ${world.clock.pending} sleepers`,
        )
      }
      // Every settle of every key agrees with its row.
      const proc = world.proc as NonNullable<typeof world.proc>
      yield* runFor(
        world,
        Effect.forEach(rows, (row) =>
          proc.client.settle(row.key).pipe(Effect.flatMap(recordSettle(row.key)), Effect.ignore),
        ),
        5_000,
      )
      yield* check("at the end")
      if (!proc.dead()) yield* runFor(world, Scope.close(proc.scope, Exit.void), 5_000)
    }),
  ).pipe(simulated(clock, sequence.setup.seed))

/** Runs a sequence in its simulation: virtual time, seeded randomness, a replayable schedule. */
export const simulated =
  (clock: VirtualClock, seed: number) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      seedMathRandom(seed)
      // Effect's default scheduler yields to a real setTimeout every 2048 ticks, which makes the
      // interleaving with the in-process server depend on real time. Microtasks only, and a
      // scheduler of its own: one shared across sequences carried queued work (and its place
      // in the event loop) from one sequence into the next, so a shrunk case did not replay alone.
      return Effect.withScheduler(effect, new Scheduler.MixedScheduler(Number.MAX_SAFE_INTEGER))
    }).pipe(
      Effect.withClock(clock),
      Effect.withRandom(Random.make(seed)),
      // The engine logs what it copes with (failed polls, stopped processes); CHAOS_LOG=1 shows it.
      Logger.withMinimumLogLevel(process.env.CHAOS_LOG === "1" ? LogLevel.Debug : LogLevel.None),
    )

// ---------------------------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------------------------

export interface ModelRunOptions {
  readonly store: StoreKind
  readonly runs: number
  readonly seed: number
  readonly maxSteps?: number
  /** A counterexample path printed by a failed run: replays exactly that (shrunk) case. */
  readonly path?: string
  /** Known bugs to tolerate (see knownEarlyPollBugs). */
  readonly tolerate?: ReadonlyArray<EarlyCause>
  /** Where to count (so that a caller still has the totals when the run throws). */
  readonly stats?: Stats
}

export interface ModelRunResult {
  readonly stats: Stats
  readonly seed: number
  readonly millis: number
}

/** Checks `runs` random sequences; throws with the seed and the shrunk sequence on failure. */
export const checkModel = async (options: ModelRunOptions): Promise<ModelRunResult> => {
  const stats = options.stats ?? emptyStats()
  const started = Date.now()
  const property = fc.asyncProperty(sequenceArbitrary(options.maxSteps ?? 30), (sequence) =>
    Effect.runPromise(runSequence(options.store, sequence, stats, options.tolerate)),
  )
  const details = await fc.check(property, {
    numRuns: options.runs,
    seed: options.seed,
    ...(options.path === undefined ? {} : { path: options.path }),
  })
  if (details.failed) {
    const shrunk = details.counterexample?.[0]
    const error = details.errorInstance
    throw new InvariantViolation(
      [
        `chaos (${options.store}) failed after ${details.numRuns} run(s), shrunk ${details.numShrinks}×.`,
        `Reproduce: CHAOS_SEED=${details.seed} CHAOS_PATH=${details.counterexamplePath ?? ""} (pnpm chaos --store ${options.store} --seed ${details.seed} --path ${details.counterexamplePath ?? ""})`,
        `Shrunk sequence:`,
        shrunk === undefined
          ? "  (none)"
          : [
              `  setup ${JSON.stringify(shrunk.setup)}`,
              ...shrunk.steps.map((step, i) => `  #${i} ${describeStep(step)}`),
            ].join("\n"),
        `Error: ${error instanceof Error ? error.message : String(error)}`,
      ].join("\n"),
    )
  }
  return { stats, seed: options.seed, millis: Date.now() - started }
}

/** Replays one sequence exactly (for regression tests). */
export const replay = (store: StoreKind, sequence: Sequence): Promise<Stats> => {
  const stats = emptyStats()
  return Effect.runPromise(runSequence(store, sequence, stats)).then(() => stats)
}
