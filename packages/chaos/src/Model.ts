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
 *
 * @since 0.1.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Outcome from "@mcp-handles/core/Outcome"
import type * as Ledger from "@mcp-handles/fake-server/Ledger"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as fc from "fast-check"
import * as Property from "./Property.js"
import { allRows, canonical, simulated } from "./Simulation.js"
import * as Steps from "./Steps.js"
import type * as Stores from "./Stores.js"
import * as Tools from "./Tools.js"
import { VirtualClock } from "./VirtualClock.js"
import * as World from "./World.js"

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export type Step =
  | ({ readonly kind: Steps.KeyStepKind } & Tools.KeyRef)
  | { readonly kind: "gc"; readonly retentionMs: number }
  | { readonly kind: "arm"; readonly point: World.CrashPoint }
  | { readonly kind: "crash" }
  | {
      readonly kind: "restart"
      readonly how: "crash" | "close"
      readonly sameId: boolean
      readonly background: boolean
    }
  | World.WorldStep

/**
 * @since 0.1.0
 * @category models
 */
export interface Setup extends World.WorldSetup {
  /** The first process runs the background reconciler. */
  readonly background: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export type Sequence = Property.Sequence<Setup, Step>

const keyRef = fc.record({ tool: fc.constantFrom(...Tools.names), n: fc.integer({ min: 0, max: 2 }) })

const onKey = (kind: Steps.KeyStepKind) => keyRef.map((ref) => ({ kind, ...ref }) as Step)

const faultKinds: ReadonlyArray<World.FaultKind> = [
  "refused",
  "reset-before",
  "drop-after",
  "503",
  "429",
  "500-after",
  "malformed-after",
  "wrong-shape-after",
]

/**
 * @since 0.1.0
 */
export const stepArbitrary: fc.Arbitrary<Step> = fc.oneof<Array<fc.WeightedArbitrary<Step>>>(
  ...Steps.keySteps(onKey, 3),
  {
    weight: 1,
    arbitrary: fc.constantFrom(0, 5_000, 60_000).map((retentionMs): Step => ({ kind: "gc", retentionMs })),
  },
  ...Steps.inputSteps,
  { weight: 3, arbitrary: Steps.crashPoint.map((point): Step => ({ kind: "arm", point })) },
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
      .tuple(fc.constantFrom(...Steps.faultMethods), fc.constantFrom(...faultKinds))
      .map(([method, kind]): Step => ({ kind: "fault", fault: { method, kind } })),
  },
  ...Steps.timeSteps(8_000),
)

/**
 * @since 0.1.0
 */
export const sequenceArbitrary = (
  maxSteps: number,
  generation?: World.WorldSetup["generation"],
): fc.Arbitrary<Sequence> =>
  fc.record({
    setup: fc.record({
      inDoubtPolicy: fc.constantFrom("surface", "reissue-if-idempotent" as const),
      dedup: fc.boolean(),
      durableServer: fc.boolean(),
      background: fc.boolean(),
      seed: fc.integer({ min: 1, max: 1_000_000 }),
      ...(generation === undefined ? {} : { generation: fc.constant(generation) }),
    }),
    steps: fc.array(stepArbitrary, { minLength: 1, maxLength: maxSteps, size: "max" }),
  })

// ---------------------------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------------------------

const outcomeKey = (outcome: Outcome.Outcome): string => canonical({ ...outcome })

/**
 * 2025-11-25: a task its new session does not know ends failed with reason `session_lost` (the
 * client cannot tell a task tied to another session from one the server forgot). The server
 * decided that much when it lost the task: the fake server forgets sessions and, when volatile,
 * tasks only by restarting.
 */
const sessionLost = (
  row: HandleRecord.HandleRecord,
  task: { readonly lostAt: number | null } | undefined,
): boolean => {
  const data = row.error?.data
  const reason =
    data !== null && typeof data === "object" && !Array.isArray(data)
      ? (data as Record<string, unknown>)["mcp-handles/local"]
      : undefined
  return row.status === "failed" && reason === "session_lost" && task?.lostAt != null
}

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

/** @since 0.1.0 */
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

/**
 * Every violation of invariants 1-4 in this state of the world (empty when all hold).
 *
 * @since 0.1.0
 */
export const violations = (
  model: Model,
  ledger: Ledger.Snapshot,
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
    if (HandleRecord.isTerminal(row.status)) {
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
        if (task?.terminalStatus !== row.status && !sessionLost(row, task)) {
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
  const config = Tools.byName(tool)?.pollIntervalMs
  if (config === undefined || typeof config === "number") return config
  let current: number | undefined
  for (const change of config) if (at - createdAt >= change.afterMs) current = change.pollIntervalMs
  return current
}

/**
 * Causes of early polls found so far, each a core bug with its regression test
 * (test/regressions.test.ts). `CHAOS_TOLERATE=cause,cause` ignores them while hunting for others.
 *
 * @since 0.1.0
 */
export type EarlyCause = "retry after a lost poll answer" | "poll capped at the TTL deadline" | "unexplained"

/**
 * Known core bugs to tolerate while hunting for others, by the cause their early polls show.
 * Empty: both early-poll bugs found so far (retry after a lost poll answer, poll capped at the
 * TTL deadline) are fixed in core (6283426) and pinned by test/regressions.test.ts.
 *
 * @since 0.1.0
 */
export const knownEarlyPollBugs: ReadonlyArray<EarlyCause> = []

/**
 * The server's early-poll rule (see fake-server getTask), with a likely cause for each.
 *
 * @since 0.1.0
 */
export const earlyPolls = (
  task: Ledger.Task,
  garbledCreates: ReadonlySet<string>,
  lostPollAnswers: ReadonlySet<string>,
): Array<{ at: number; gap: number; interval: number; cause: EarlyCause }> => {
  const early: Array<{ at: number; gap: number; interval: number; cause: EarlyCause }> = []
  const ttl = Tools.byName(task.tool)?.ttlMs
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

/**
 * @since 0.1.0
 */
export const describeStep = (step: Step): string => {
  if (Steps.isKeyStep(step)) return `${step.kind} ${Tools.keyOf(step)}`
  switch (step.kind) {
    case "gc":
      return `gc retention ${step.retentionMs} ms`
    case "arm":
      return `arm ${Steps.describeCrashPoint(step.point)}`
    case "restart":
      return `restart (${step.how}${step.sameId ? ", same id" : ", new id"}, background ${step.background})`
    case "crash":
      return step.kind
    default:
      return Steps.describeWorldStep(step)
  }
}

/**
 * Runs one sequence against a fresh store and server; dies with an InvariantViolation.
 *
 * @since 0.1.0
 */
export const runSequence = (
  kind: Stores.Kind,
  sequence: Sequence,
  stats: World.Stats,
  tolerate: ReadonlyArray<EarlyCause> = [],
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const clock = new VirtualClock()
    return runOn(kind, sequence, stats, new Set(tolerate)).pipe(simulated(clock, sequence.setup.seed))
  })

const runOn = (
  kind: Stores.Kind,
  sequence: Sequence,
  stats: World.Stats,
  tolerated: ReadonlySet<EarlyCause>,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { setup } = sequence
      const world = yield* World.open(kind, setup, 10_000, stats)
      const { store } = world
      const model: Model = { keys: new Map() }
      world.trace.push(
        `setup: ${kind} store, inDoubtPolicy ${setup.inDoubtPolicy}, server ${setup.dedup ? "deduplicates" : "does not deduplicate"}, ${setup.durableServer ? "durable" : "volatile"} server${setup.generation === undefined ? "" : ` speaking ${setup.generation}`}, seed ${setup.seed}`,
      )
      const fail = World.fail(world, 60)

      let instances = 0
      const instanceId = (sameId: boolean) => (sameId ? "local" : `instance-${++instances}`)
      let lastId = "local"
      const restart = (how: "crash" | "close", sameId: boolean, background: boolean) =>
        Effect.gen(function* () {
          const old = world.proc
          if (old !== undefined && !old.dead()) {
            if (how === "crash") old.crash()
            else {
              const closed = yield* World.runFor(world, Scope.close(old.scope, Exit.void), 5_000)
              if (closed !== "done") yield* fail(`closing process ${old.id} did not finish (${closed})`)
            }
          }
          lastId = sameId ? lastId : instanceId(false)
          const proc = yield* World.startProcess(world, { instanceId: lastId, background })
          stats.restarts++
          yield* Effect.fork(proc.client.reconcile.pipe(Effect.ignore))
          yield* World.flush(world)
        })

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

      /** The operations on a key are forked: they run on while the sequence goes on. */
      const onKey = (
        step: Extract<Step, Tools.KeyRef>,
        proc: World.Proc,
      ): Effect.Effect<unknown, unknown> => {
        const key = Tools.keyOf(step)
        switch (step.kind) {
          case "call":
            stats.calls++
            return proc.client.callTool("fake", step.tool, { n: step.n }, { key })
          case "settle": {
            const generation = keyModel(model, key).generation
            return proc.client
              .settle(key)
              .pipe(
                Effect.flatMap((outcome) =>
                  keyModel(model, key).generation === generation ? recordSettle(key)(outcome) : Effect.void,
                ),
              )
          }
          case "cancel":
            return proc.client.cancel(key)
          case "reissue":
            return proc.client.reissue(key)
          case "abandon":
            return proc.client.abandon(key)
        }
      }

      const act = (step: Exclude<Step, World.WorldStep>) =>
        Effect.gen(function* () {
          if (Steps.isKeyStep(step)) {
            const proc = yield* live()
            yield* Effect.fork(Effect.ignore(onKey(step, proc)))
            return
          }
          switch (step.kind) {
            case "gc": {
              const proc = yield* live()
              yield* World.runFor(world, proc.client.gc(step.retentionMs), 0)
              return
            }
            case "arm": {
              const proc = yield* live()
              proc.arm(step.point)
              return
            }
            case "crash":
              if (world.proc !== undefined && !world.proc.dead()) world.proc.crash()
              return
            case "restart":
              return yield* restart(step.how, step.sameId, step.background)
          }
        })

      yield* World.startProcess(world, { instanceId: "local", background: setup.background })
      yield* World.runSteps(world, sequence.steps, describeStep, act, check)

      // Liveness: faults stop, input is answered, and a process with the background reconciler
      // runs while the server settles or expires everything.
      world.trace.push("quiesce: faults off, input answered, background reconciler on")
      world.autoAnswer = true
      yield* World.calm(world)
      world.proc?.arm(undefined)
      if (world.proc === undefined || world.proc.dead() || !world.proc.background) {
        yield* restart("close", true, true)
      }
      yield* World.quiet(world, quiesceSeconds, "while quiescing", check)
      const rows = yield* allRows(store).pipe(Effect.orDie)
      const stuck = rows.filter((row) => !HandleRecord.isTerminal(row.status) && row.status !== "in_doubt")
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
      yield* World.runFor(
        world,
        Effect.forEach(rows, (row) =>
          proc.client.settle(row.key).pipe(Effect.flatMap(recordSettle(row.key)), Effect.ignore),
        ),
        5_000,
      )
      yield* check("at the end")
      if (!proc.dead()) yield* World.runFor(world, Scope.close(proc.scope, Exit.void), 5_000)
    }),
  )

// ---------------------------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface RunOptions extends Property.RunOptions {
  /** Known bugs to tolerate (see knownEarlyPollBugs). */
  readonly tolerate?: ReadonlyArray<EarlyCause> | undefined
  /** The protocol generation the fake server speaks (default 2026-07-28). */
  readonly generation?: World.WorldSetup["generation"]
}

/**
 * Checks `runs` random sequences; throws with the seed and the shrunk sequence on failure.
 *
 * @since 0.1.0
 */
export const check = (options: RunOptions): Promise<Property.RunResult> =>
  Property.run<Setup, Step>(options, (stats) => ({
    title: `chaos (${options.store})`,
    command: `--store ${options.store}${options.generation === undefined ? "" : ` --generation ${options.generation}`}`,
    arbitrary: sequenceArbitrary(options.maxSteps ?? 30, options.generation),
    run: (sequence) => Effect.runPromise(runSequence(options.store, sequence, stats, options.tolerate)),
    describeStep,
  }))

/**
 * Replays one sequence exactly (for regression tests).
 *
 * @since 0.1.0
 */
export const replay = (store: Stores.Kind, sequence: Sequence): Promise<World.Stats> =>
  Property.replay((stats) => runSequence(store, sequence, stats))
