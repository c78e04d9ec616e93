/**
 * Fleet chaos: sequences run one to four live `TaskClient` instances at once on one store, each
 * with its own instance id and a lease short enough to run out in the middle of a step, with
 * steps interleaved across them, and check the ledger against the store after every step
 * (FleetCheck). A `settle`, and every other operation, is an obligation: once faults stop
 * and time passes, it must have returned on every instance still alive. The property runs
 * fast-check over such sequences and shrinks a failure to a short one.
 *
 * @since 0.1.0
 */
import type * as Json from "@mcp-handles/core/Json"
import type * as TaskClient from "@mcp-handles/core/TaskClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as FleetCheck from "./FleetCheck.js"
import {
  describeFleetStep,
  type FleetSequence,
  type FleetSetup,
  type FleetStep,
  fleetSequenceArbitrary,
  type InputMode,
  requestTimeoutMs,
} from "./FleetStep.js"
import * as Property from "./Property.js"
import { ignoredViolations } from "./Settings.js"
import { allRows, simulated } from "./Simulation.js"
import * as Steps from "./Steps.js"
import type * as Stores from "./Stores.js"
import * as Tools from "./Tools.js"
import { VirtualClock } from "./VirtualClock.js"
import * as World from "./World.js"

/** Quiet time at the end: leases (4 s), the longest task (9 s), TTLs and backoff fit well within. */
const quietSeconds = 60

/** How long a `settle` of a resting row may take at the end. */
const finalSettleMs = 10_000

interface Slot {
  proc: World.Proc | undefined
  instanceId: string
  generation: number
}

interface Obligation {
  readonly what: string
  readonly proc: World.Proc
  readonly at: number
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
}

interface AskEntry {
  readonly proc: World.Proc
  ask: Omit<FleetCheck.Ask, "diedAt">
}

const clientName = (proc: World.Proc) => `${proc.instanceId}#${proc.id}`

/**
 * Runs one fleet sequence against a fresh store and server; dies with an InvariantViolation.
 *
 * @since 0.1.0
 */
export const runSequence = (
  kind: Stores.Kind,
  sequence: FleetSequence,
  stats: World.Stats,
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const clock = new VirtualClock()
    return runOn(clock, kind, sequence, stats).pipe(simulated(clock, sequence.setup.seed))
  })

const runOn = (clock: VirtualClock, kind: Stores.Kind, sequence: FleetSequence, stats: World.Stats) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { setup } = sequence
      const world = yield* World.open(kind, setup, setup.leaseMs, stats)
      const { store } = world
      const now = () => clock.unsafeCurrentTimeMillis()
      const ignored = ignoredViolations()
      const memory = FleetCheck.emptyTerminalMemory()
      const asks: Array<AskEntry> = []
      const cancels: Array<FleetCheck.CancelRequest> = []
      const obligations: Array<Obligation> = []
      const closedAt = new Map<World.Proc, number>()
      let inputMode: InputMode = "human"
      let quiet = false
      world.trace.push(
        `setup: ${kind} store, ${setup.instances} instance(s), lease ${setup.leaseMs} ms, callTimeout ${setup.callTimeoutMs ?? "none"}, ${setup.inDoubtPolicy}, server ${setup.dedup ? "deduplicates" : "does not deduplicate"}, ${setup.durableServer ? "durable" : "volatile"}${setup.generation === undefined ? "" : `, speaking ${setup.generation}`}${setup.push === true ? ", push on" : ""}, seed ${setup.seed}`,
      )

      /** A liveness violation, unless the hunt ignores its kind. */
      const stall = (message: string) =>
        ignored.some((pattern) => pattern.test(message)) ? Effect.void : fail(message)

      const fail = World.fail(world, 80)

      // Input handlers record every question, then behave as the current mode says.
      const inputHandler =
        (proc: () => World.Proc): TaskClient.InputHandler =>
        (request) =>
          Effect.suspend(() => {
            const entry: AskEntry = {
              proc: proc(),
              ask: {
                key: request.key,
                inputKey: request.inputKey,
                client: clientName(proc()),
                at: now(),
                endedAt: undefined,
                alreadyAnswered: false,
              },
            }
            asks.push(entry)
            const mode = quiet ? "answer" : inputMode
            world.trace.push(`  ${entry.ask.client} asks ${request.key}/${request.inputKey} (${mode})`)
            return Effect.gen(function* () {
              const row = yield* Effect.option(store.get(request.scope, request.key))
              const stored = Option.flatten(row)
              if (Option.isSome(stored) && stored.value.answers[request.inputKey] !== undefined)
                entry.ask = { ...entry.ask, alreadyAnswered: true }
              switch (mode) {
                case "answer":
                  return World.inputAnswer
                case "human": {
                  const waiter = yield* Deferred.make<Json.JsonValue, string>()
                  world.inputWaiters.push(waiter)
                  return yield* Deferred.await(waiter)
                }
                case "slow":
                  yield* Effect.sleep(setup.leaseMs * 2)
                  return World.inputAnswer
                case "fail":
                  return yield* Effect.fail("the input handler failed")
                case "defect":
                  return yield* Effect.die(new Error("the input handler died"))
              }
            }).pipe(
              Effect.ensuring(
                Effect.sync(() => {
                  entry.ask = { ...entry.ask, endedAt: now() }
                }),
              ),
            )
          })

      const slots: Array<Slot> = Array.from({ length: setup.instances }, (_, i) => ({
        proc: undefined,
        instanceId: `node-${i}`,
        generation: 0,
      }))
      const slotOf = (n: number) => slots[n % slots.length] as Slot
      const alive = (slot: Slot) => (slot.proc !== undefined && !slot.proc.dead() ? slot.proc : undefined)

      const start = (slot: Slot, sameId: boolean, reconcile: boolean) =>
        Effect.gen(function* () {
          if (!sameId) slot.instanceId = `${slot.instanceId.split("~")[0]}~${++slot.generation}`
          const proc = yield* World.startProcess(world, {
            instanceId: slot.instanceId,
            background: true,
            requestTimeoutMs,
            ...(setup.callTimeoutMs === null ? {} : { callTimeoutMs: setup.callTimeoutMs }),
            onInputRequired: inputHandler,
            ...(setup.push === true ? { push: World.pushOptions } : {}),
          })
          slot.proc = proc
          stats.restarts++
          if (reconcile) yield* Effect.fork(proc.client.reconcile.pipe(Effect.ignore))
          yield* World.flush(world)
        })

      /** A process's operations die with it. */
      const dropObligations = (proc: World.Proc) =>
        Effect.forEach(
          obligations.filter((o) => o.proc === proc),
          (o) => Fiber.interruptFork(o.fiber),
          { discard: true },
        )

      const oblige = <A, E>(proc: World.Proc, what: string, effect: Effect.Effect<A, E>, patience?: number) =>
        Effect.gen(function* () {
          // A caller that gives up interrupts the operation: that, too, must leave no trace.
          const bounded: Effect.Effect<unknown> =
            patience === undefined
              ? Effect.either(effect)
              : Effect.timeoutOption(Effect.either(effect), patience)
          const fiber = yield* Effect.fork(bounded)
          obligations.push({ what: `${what} on ${clientName(proc)}`, proc, at: now(), fiber })
        })

      const observations = (final: boolean) => ({
        now: now(),
        gone: new Map(
          world.procs.flatMap((proc) => {
            const at = proc.diedAt() ?? closedAt.get(proc)
            return at === undefined ? [] : [[clientName(proc), at] as const]
          }),
        ),
        final,
        delivered: new Map(
          [...world.delivered].map(([taskId, d]) => [
            taskId,
            { at: d.at, client: clientName(d.proc), alive: !d.proc.dead() },
          ]),
        ),
        asks: asks.map((entry) => ({ ...entry.ask, diedAt: entry.proc.diedAt() })),
        cancels,
        garbledCreates: world.garbledCreates,
        lostPollAnswers: world.lostPollAnswers,
      })

      const check = (when: string, final = false) =>
        Effect.gen(function* () {
          stats.checks++
          const rows = yield* allRows(store).pipe(Effect.orDie)
          const found = FleetCheck.violations(
            memory,
            world.server.ledger.snapshot(),
            rows,
            observations(final),
          ).filter((message) => !ignored.some((pattern) => pattern.test(message)))
          if (found.length > 0) yield* fail(`${when}:\n  ${found.join("\n  ")}`)
        })

      const recordSettle = (key: string) => (outcome: { readonly _tag: string }) =>
        Effect.sync(() => {
          stats.settles++
          if (outcome._tag === "InDoubt") return
          memory.settles.set(key, [
            ...(memory.settles.get(key) ?? []),
            FleetCheck.outcomeText(outcome as never),
          ])
        })

      const onKey = (step: Extract<FleetStep, { readonly kind: Steps.KeyStepKind }>) =>
        Effect.gen(function* () {
          const proc = alive(slotOf(step.slot))
          if (proc === undefined) return
          const key = Tools.keyOf(step)
          const client = proc.client
          switch (step.kind) {
            case "call":
              stats.calls++
              return yield* oblige(
                proc,
                `callTool ${key}`,
                client.callTool("fake", step.tool, { n: step.n }, { key }),
              )
            case "settle":
              return yield* oblige(
                proc,
                `settle ${key}`,
                client.settle(key).pipe(Effect.tap(recordSettle(key))),
              )
            case "cancel":
            case "abandon": {
              const how = step.kind
              return yield* oblige(
                proc,
                `${step.kind} ${key}`,
                (step.kind === "cancel" ? client.cancel(key) : client.abandon(key)).pipe(
                  Effect.tap(() => Effect.sync(() => cancels.push({ key, at: now(), how }))),
                ),
                step.patience,
              )
            }
            case "reissue":
              return yield* oblige(proc, `reissue ${key}`, client.reissue(key))
          }
        })

      const act = (step: Exclude<FleetStep, World.WorldStep>) =>
        Effect.gen(function* () {
          if (Steps.isKeyStep(step)) return yield* onKey(step)
          switch (step.kind) {
            case "input":
              inputMode = step.mode
              return
            case "crash": {
              const proc = alive(slotOf(step.slot))
              if (proc === undefined) return
              proc.crash()
              return yield* dropObligations(proc)
            }
            case "close": {
              const proc = alive(slotOf(step.slot))
              if (proc === undefined) return
              const closed = yield* World.runFor(world, Scope.close(proc.scope, Exit.void), 5_000)
              if (closed !== "done") yield* fail(`closing ${clientName(proc)} did not finish (${closed})`)
              closedAt.set(proc, now())
              proc.stop()
              return yield* dropObligations(proc)
            }
            case "start": {
              const slot = slotOf(step.slot)
              if (alive(slot) === undefined) yield* start(slot, step.sameId, true)
              return
            }
            case "arm":
              alive(slotOf(step.slot))?.arm(step.point)
              return
          }
        })

      for (const slot of slots) yield* start(slot, true, false)
      yield* World.runSteps(world, sequence.steps, describeFleetStep, act, check)

      // Liveness: faults stop, every question is answered, every slot runs again, time passes.
      world.trace.push("quiet: faults off, input answered, every slot up")
      quiet = true
      yield* World.calm(world)
      for (const slot of slots) {
        const proc = alive(slot)
        if (proc === undefined) yield* start(slot, true, true)
        else proc.arm(undefined)
      }
      // A crash armed before the quiet period can still fire in it (its request had left):
      // a supervisor starts the process again, as it would in production.
      const restartDead = Effect.suspend(() =>
        Effect.forEach(
          slots.filter((slot) => alive(slot) === undefined),
          (slot) => start(slot, true, true),
          { discard: true },
        ),
      )
      yield* World.quiet(world, quietSeconds, "while quiet", check, restartDead)
      const rows = yield* allRows(store).pipe(Effect.orDie)
      const stuck = rows.filter(
        (row) => row.status === "pending" || row.status === "working" || row.status === "input_required",
      )
      if (stuck.length > 0)
        yield* stall(
          `liveness: after ${quietSeconds} quiet seconds, ${stuck
            .map(
              (row) =>
                `${row.key} is ${row.status} (next poll ${row.nextPollAt}, lease ${row.leaseOwner} until ${row.leaseExpiresAt}, last problem ${row.lastProblem})`,
            )
            .join("; ")}; now ${now()}`,
        )
      for (const obligation of obligations) {
        if (obligation.proc.dead()) continue
        const done = yield* Fiber.poll(obligation.fiber)
        if (Option.isNone(done))
          yield* stall(
            `liveness: ${obligation.what}, started at ${obligation.at}, never returned (now ${now()})`,
          )
      }
      // Every instance settles every key, promptly, to the same outcome.
      const live = slots.flatMap((slot) => {
        const proc = alive(slot)
        return proc === undefined ? [] : [proc]
      })
      const pending = new Set<string>()
      const settles = live.flatMap((proc) =>
        rows.map((row) => {
          const what = `${row.key} on ${clientName(proc)}`
          pending.add(what)
          return proc.client
            .settle(row.key)
            .pipe(
              Effect.tap(recordSettle(row.key)),
              Effect.ensuring(Effect.sync(() => pending.delete(what))),
              Effect.ignore,
            )
        }),
      )
      yield* World.runFor(
        world,
        Effect.all(settles, { concurrency: "unbounded", discard: true }),
        finalSettleMs,
      )
      if (pending.size > 0)
        yield* stall(
          `liveness: settle of ${[...pending].join(", ")} did not return within ${finalSettleMs} ms of rest`,
        )
      yield* check("at the end", true)
      for (const proc of live) {
        const closed = yield* World.runFor(world, Scope.close(proc.scope, Exit.void), 5_000)
        if (closed !== "done")
          yield* fail(`closing ${clientName(proc)} at the end did not finish (${closed})`)
      }
    }),
  )

/**
 * @since 0.1.0
 * @category models
 */
export interface RunOptions extends Property.RunOptions {
  /** Live instances at most (1 to 4). */
  readonly instances: number
  /** The protocol generation the fake server speaks (default 2026-07-28). */
  readonly generation?: FleetSetup["generation"]
  /** The instances run with push, and the steps include stream drops and half-open streams. */
  readonly push?: boolean | undefined
}

/**
 * Checks `runs` random fleet sequences; throws with the seed and the shrunk sequence on failure.
 *
 * @since 0.1.0
 */
export const check = (options: RunOptions): Promise<Property.RunResult> =>
  Property.run<FleetSetup, FleetStep>(options, (stats) => ({
    title: `chaos fleet (${options.store}, up to ${options.instances} instances${options.push === true ? ", push" : ""})`,
    command: `--store ${options.store} --instances ${options.instances}${options.generation === undefined ? "" : ` --generation ${options.generation}`}${options.push === true ? " --push on" : ""}`,
    arbitrary: fleetSequenceArbitrary(
      options.instances,
      options.maxSteps ?? 25,
      options.generation,
      options.push,
    ),
    run: (sequence) => Effect.runPromise(runSequence(options.store, sequence, stats)),
    describeStep: describeFleetStep,
  }))

/**
 * Replays one fleet sequence exactly (regression tests).
 *
 * @since 0.1.0
 */
export const replay = (store: Stores.Kind, sequence: FleetSequence): Promise<World.Stats> =>
  Property.replay((stats) => runSequence(store, sequence, stats))
