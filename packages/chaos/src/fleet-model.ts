/**
 * Fleet chaos: sequences run one to four live `TaskClient` instances at once on one store, each
 * with its own instance id and a lease short enough to run out in the middle of a step, with
 * steps interleaved across them, and check the ledger against the store after every step
 * (fleet-check.ts). A `settle`, and every other operation, is an obligation: once faults stop
 * and time passes, it must have returned on every instance still alive.
 */
import type * as Json from "@mcp-handles/core/Json"
import type * as TaskClient from "@mcp-handles/core/TaskClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import {
  type Ask,
  type CancelRequest,
  emptyTerminalMemory,
  fleetViolations,
  outcomeText,
} from "./fleet-check.js"
import {
  describeFleetStep,
  type FleetSequence,
  type FleetStep,
  type InputMode,
  requestTimeoutMs,
} from "./fleet-step.js"
import { allRows, InvariantViolation, simulated, tools } from "./model.js"
import { ignoredViolations } from "./settings.js"
import { openStore, type StoreKind } from "./stores.js"
import { VirtualClock } from "./VirtualClock.js"
import {
  elapse,
  flush,
  inputAnswer,
  makeWorld,
  type Proc,
  runFor,
  runWorldStep,
  type Stats,
  startProcess,
} from "./world.js"

/** Quiet time at the end: leases (4 s), the longest task (9 s), TTLs and backoff fit well within. */
const quietSeconds = 60

/** How long a `settle` of a resting row may take at the end. */
const finalSettleMs = 10_000

interface Slot {
  proc: Proc | undefined
  instanceId: string
  generation: number
}

interface Obligation {
  readonly what: string
  readonly proc: Proc
  readonly at: number
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
}

interface AskEntry {
  readonly proc: Proc
  ask: Omit<Ask, "diedAt">
}

const keyOf = (step: { readonly tool: string; readonly n: number }) => `${step.tool}-${step.n}`

const clientName = (proc: Proc) => `${proc.instanceId}#${proc.id}`

/** Runs one fleet sequence against a fresh store and server; dies with an InvariantViolation. */
export const runFleetSequence = (
  kind: StoreKind,
  sequence: FleetSequence,
  stats: Stats,
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const clock = new VirtualClock()
    return runOn(clock, kind, sequence, stats).pipe(simulated(clock, sequence.setup.seed))
  })

const runOn = (clock: VirtualClock, kind: StoreKind, sequence: FleetSequence, stats: Stats) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { setup } = sequence
      const { store, inFlight } = yield* openStore(kind)
      const world = yield* makeWorld(
        { tools, seed: setup.seed, deduplicateByKey: setup.dedup },
        {
          durableServer: setup.durableServer,
          setup: { inDoubtPolicy: setup.inDoubtPolicy, leaseMs: setup.leaseMs },
          stats,
          inFlight,
        },
        store,
      )
      const now = () => clock.unsafeCurrentTimeMillis()
      const ignored = ignoredViolations()
      const memory = emptyTerminalMemory()
      const asks: Array<AskEntry> = []
      const cancels: Array<CancelRequest> = []
      const obligations: Array<Obligation> = []
      const started: Array<Proc> = []
      const closedAt = new Map<Proc, number>()
      let inputMode: InputMode = "human"
      let quiet = false
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const proc of started) proc.stop()
          // CHAOS_TRACE=1 prints every sequence's trace, passing or not (to compare two runs).
          if (process.env.CHAOS_TRACE === "1") process.stderr.write(`${world.trace.join("\n")}\n`)
        }),
      )
      stats.sequences++
      world.trace.push(
        `setup: ${kind} store, ${setup.instances} instance(s), lease ${setup.leaseMs} ms, callTimeout ${setup.callTimeoutMs ?? "none"}, ${setup.inDoubtPolicy}, server ${setup.dedup ? "deduplicates" : "does not deduplicate"}, ${setup.durableServer ? "durable" : "volatile"}, seed ${setup.seed}`,
      )

      /** A liveness violation, unless the hunt ignores its kind. */
      const stall = (message: string) =>
        ignored.some((pattern) => pattern.test(message)) ? Effect.void : fail(message)

      const fail = (message: string) =>
        Effect.die(
          new InvariantViolation(
            `${message}\n--- trace (last 80 lines) ---\n${world.trace.slice(-80).join("\n")}`,
          ),
        )

      // Input handlers record every question, then behave as the current mode says.
      const inputHandler =
        (proc: () => Proc): TaskClient.InputHandler =>
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
                  return inputAnswer
                case "human": {
                  const waiter = yield* Deferred.make<Json.JsonValue, string>()
                  world.inputWaiters.push(waiter)
                  return yield* Deferred.await(waiter)
                }
                case "slow":
                  yield* Effect.sleep(setup.leaseMs * 2)
                  return inputAnswer
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
          const proc = yield* startProcess(world, {
            instanceId: slot.instanceId,
            background: true,
            requestTimeoutMs,
            ...(setup.callTimeoutMs === null ? {} : { callTimeoutMs: setup.callTimeoutMs }),
            onInputRequired: inputHandler,
          })
          slot.proc = proc
          started.push(proc)
          stats.restarts++
          if (reconcile) yield* Effect.fork(proc.client.reconcile.pipe(Effect.ignore))
          yield* flush(world)
        })

      /** A process's operations die with it. */
      const dropObligations = (proc: Proc) =>
        Effect.forEach(
          obligations.filter((o) => o.proc === proc),
          (o) => Fiber.interruptFork(o.fiber),
          { discard: true },
        )

      const oblige = <A, E>(proc: Proc, what: string, effect: Effect.Effect<A, E>, patience?: number) =>
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
          started.flatMap((proc) => {
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
          const found = fleetViolations(
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
          memory.settles.set(key, [...(memory.settles.get(key) ?? []), outcomeText(outcome as never)])
        })

      const onKey = (step: Extract<FleetStep, { readonly slot: number; readonly tool: string }>) =>
        Effect.gen(function* () {
          const proc = alive(slotOf(step.slot))
          if (proc === undefined) return
          const key = keyOf(step)
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

      for (const slot of slots) yield* start(slot, true, false)

      for (const [index, step] of sequence.steps.entries()) {
        world.trace.push(`#${index} ${describeFleetStep(step)}`)
        switch (step.kind) {
          case "call":
          case "settle":
          case "cancel":
          case "reissue":
          case "abandon":
            yield* onKey(step)
            break
          case "answer":
          case "refuse":
          case "fault":
          case "serverRestart":
          case "advance":
            yield* runWorldStep(world, step)
            break
          case "input":
            inputMode = step.mode
            break
          case "crash": {
            const proc = alive(slotOf(step.slot))
            if (proc === undefined) break
            proc.crash()
            yield* dropObligations(proc)
            break
          }
          case "close": {
            const proc = alive(slotOf(step.slot))
            if (proc === undefined) break
            const closed = yield* runFor(world, Scope.close(proc.scope, Exit.void), 5_000)
            if (closed !== "done") yield* fail(`closing ${clientName(proc)} did not finish (${closed})`)
            closedAt.set(proc, now())
            proc.stop()
            yield* dropObligations(proc)
            break
          }
          case "start": {
            const slot = slotOf(step.slot)
            if (alive(slot) === undefined) yield* start(slot, step.sameId, true)
            break
          }
          case "arm":
            alive(slotOf(step.slot))?.arm(step.point)
            break
        }
        yield* flush(world)
        stats.steps++
        yield* check(`after step #${index} (${describeFleetStep(step)})`)
      }

      // Liveness: faults stop, every question is answered, every slot runs again, time passes.
      world.trace.push("quiet: faults off, input answered, every slot up")
      quiet = true
      world.faults = []
      for (const waiter of world.inputWaiters) yield* Deferred.succeed(waiter, inputAnswer)
      world.inputWaiters = []
      for (const slot of slots) {
        const proc = alive(slot)
        if (proc === undefined) yield* start(slot, true, true)
        else proc.arm(undefined)
      }
      for (let second = 0; second < quietSeconds; second += 20) {
        yield* elapse(world, 20_000)
        yield* check(`while quiet at +${second + 20} s`)
        // A crash armed before the quiet period can still fire in it (its request had left):
        // a supervisor starts the process again, as it would in production.
        for (const slot of slots) if (alive(slot) === undefined) yield* start(slot, true, true)
      }
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
      yield* runFor(world, Effect.all(settles, { concurrency: "unbounded", discard: true }), finalSettleMs)
      if (pending.size > 0)
        yield* stall(
          `liveness: settle of ${[...pending].join(", ")} did not return within ${finalSettleMs} ms of rest`,
        )
      yield* check("at the end", true)
      for (const proc of live) {
        const closed = yield* runFor(world, Scope.close(proc.scope, Exit.void), 5_000)
        if (closed !== "done")
          yield* fail(`closing ${clientName(proc)} at the end did not finish (${closed})`)
      }
    }),
  )
