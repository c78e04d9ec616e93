/**
 * The steps of a fleet sequence and their generators: several live client instances on one
 * store, each step aimed at one of them (an instance that is down ignores it), with the faults
 * that matter for a fleet: latency longer than the lease and the call timeout, proxies that
 * answer 502/503/504 after forwarding, late answers, slow or failing input handlers.
 *
 * @since 0.1.0
 */
import * as fc from "fast-check"
import type * as Property from "./Property.js"
import * as Steps from "./Steps.js"
import * as Tools from "./Tools.js"
import type { CrashPoint, FaultKind, ServerFault, WorldStep } from "./World.js"

/**
 * How input handlers behave from this step on.
 *
 * @since 0.1.0
 */
export type InputMode =
  /** Waits for an `answer` or `refuse` step (a human). */
  | "human"
  /** Answers after twice the lease (a handler slower than the lease). */
  | "slow"
  /** Fails. */
  | "fail"
  /** Dies with a defect. */
  | "defect"

/**
 * @since 0.1.0
 * @category models
 */
export type FleetStep =
  | {
      readonly kind: Steps.KeyStepKind
      /** The instance slot (taken modulo the number of instances). */
      readonly slot: number
      readonly tool: string
      readonly n: number
      /** The caller gives up (interrupts the operation) after this long: settle and cancel only. */
      readonly patience?: number | undefined
    }
  | { readonly kind: "input"; readonly mode: InputMode }
  | { readonly kind: "crash"; readonly slot: number }
  | { readonly kind: "close"; readonly slot: number }
  /** Starts a down slot again, under its last instance id or a new one. */
  | { readonly kind: "start"; readonly slot: number; readonly sameId: boolean }
  | { readonly kind: "arm"; readonly slot: number; readonly point: CrashPoint }
  | WorldStep

/**
 * @since 0.1.0
 * @category models
 */
export interface FleetSetup {
  /** Live instances at the start (1 to 4). */
  readonly instances: number
  /** Short enough to run out in the middle of a step. */
  readonly leaseMs: number
  /** The clients' `callTimeout` (null: the wire's request timeout only). */
  readonly callTimeoutMs: number | null
  readonly inDoubtPolicy: "surface" | "reissue-if-idempotent"
  readonly dedup: boolean
  readonly durableServer: boolean
  readonly seed: number
  /** The protocol generation the fake server speaks (default 2026-07-28). */
  readonly generation?: "2026-07-28" | "2025-11-25" | undefined
  /** The instances run with push (`subscriptions/listen`), and streams drop and go half-open. */
  readonly push?: boolean | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type FleetSequence = Property.Sequence<FleetSetup, FleetStep>

/**
 * The wire's request timeout in fleet runs: `slow` and `late` requests end before it.
 *
 * @since 0.1.0
 */
export const requestTimeoutMs = 8_000

const slot = fc.integer({ min: 0, max: 3 })

const onKey = (kind: Steps.KeyStepKind) =>
  fc
    .record({
      slot,
      tool: fc.constantFrom(...Tools.names),
      n: fc.integer({ min: 0, max: 2 }),
      patience: fc.constantFrom(0, 0, 500, 3_000),
    })
    .map(
      ({ patience, ...ref }): FleetStep =>
        patience > 0 && (kind === "settle" || kind === "cancel")
          ? { kind, ...ref, patience }
          : { kind, ...ref },
    )

const plainFaults: ReadonlyArray<FaultKind> = [
  "refused",
  "reset-before",
  "drop-after",
  "503",
  "502-after",
  "503-after",
  "504-after",
  "504-before",
  "500-after",
  "malformed-after",
]

const fault: fc.Arbitrary<ServerFault> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      method: fc.constantFrom(...Steps.faultMethods),
      kind: fc.constantFrom(...plainFaults),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      method: fc.constantFrom(...Steps.faultMethods),
      kind: fc.constantFrom("slow" as const, "late" as const),
      // Longer than the lease and the call timeout, within the wire's timeout (a request the
      // client gave up on still in the network is nobody's fault; answers lost after it are
      // the drop and proxy faults).
      ms: fc.constantFrom(3_000, 5_000),
    }),
  },
)

/** With push: the streams drop or go half-open (after the other steps, so seeds without push replay as before). */
const streamSteps: ReadonlyArray<fc.WeightedArbitrary<FleetStep>> = [
  {
    weight: 4,
    arbitrary: fc
      .constantFrom("drop" as const, "mute" as const)
      .map((what): FleetStep => ({ kind: "streams", what })),
  },
]

const fleetSteps = (push: boolean): fc.Arbitrary<FleetStep> =>
  fc.oneof<Array<fc.WeightedArbitrary<FleetStep>>>(
    ...baseSteps,
    ...(push ? streamSteps : []),
    // Last, as the stream steps before it.
    ...Steps.storeFaultSteps,
  )

const baseSteps: ReadonlyArray<fc.WeightedArbitrary<FleetStep>> = [
  ...Steps.keySteps(onKey, 4),
  ...Steps.inputSteps,
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<InputMode>("human", "slow", "fail", "defect")
      .map((mode): FleetStep => ({ kind: "input", mode })),
  },
  { weight: 1, arbitrary: slot.map((s): FleetStep => ({ kind: "crash", slot: s })) },
  { weight: 1, arbitrary: slot.map((s): FleetStep => ({ kind: "close", slot: s })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(slot, fc.boolean())
      .map(([s, sameId]): FleetStep => ({ kind: "start", slot: s, sameId })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(slot, Steps.crashPoint)
      .map(([s, point]): FleetStep => ({ kind: "arm", slot: s, point })),
  },
  { weight: 8, arbitrary: fault.map((f): FleetStep => ({ kind: "fault", fault: f })) },
  // Up to past every lease and TTL: a clock that jumps.
  ...Steps.timeSteps(12_000),
]

/**
 * @since 0.1.0
 */
export const fleetStepArbitrary: fc.Arbitrary<FleetStep> = fleetSteps(false)

/**
 * @since 0.1.0
 */
export const fleetSequenceArbitrary = (
  maxInstances: number,
  maxSteps: number,
  generation?: FleetSetup["generation"],
  push?: boolean,
): fc.Arbitrary<FleetSequence> =>
  fc.record({
    setup: fc.record({
      instances: fc.integer({ min: 1, max: Math.max(1, maxInstances) }),
      leaseMs: fc.constantFrom(2_000, 4_000),
      callTimeoutMs: fc.constantFrom(null, 2_000),
      inDoubtPolicy: fc.constantFrom("surface", "reissue-if-idempotent" as const),
      dedup: fc.boolean(),
      durableServer: fc.boolean(),
      seed: fc.integer({ min: 1, max: 1_000_000 }),
      ...(generation === undefined ? {} : { generation: fc.constant(generation) }),
      ...(push === true ? { push: fc.constant(true) } : {}),
    }),
    steps: fc.array(fleetSteps(push === true), { minLength: 1, maxLength: maxSteps, size: "max" }),
  })

/**
 * @since 0.1.0
 */
export const describeFleetStep = (step: FleetStep): string => {
  if (Steps.isKeyStep(step))
    return `${step.kind} ${Tools.keyOf(step)} on slot ${step.slot}${step.patience === undefined ? "" : `, giving up after ${step.patience} ms`}`
  switch (step.kind) {
    case "input":
      return `input handlers: ${step.mode}`
    case "crash":
    case "close":
      return `${step.kind} slot ${step.slot}`
    case "start":
      return `start slot ${step.slot} (${step.sameId ? "same id" : "new id"})`
    case "arm":
      return `arm slot ${step.slot}: ${Steps.describeCrashPoint(step.point)}`
    default:
      return Steps.describeWorldStep(step)
  }
}
