/**
 * The steps of a fleet sequence and their generators: several live client instances on one
 * store, each step aimed at one of them (an instance that is down ignores it), with the faults
 * that matter for a fleet: latency longer than the lease and the call timeout, proxies that
 * answer 502/503/504 after forwarding, late answers, slow or failing input handlers.
 */
import * as fc from "fast-check"
import { crashPoint, toolNames } from "./model.js"
import type { CrashPoint, FaultKind, FaultMethod, ServerFault } from "./world.js"

/** How input handlers behave from this step on. */
export type InputMode =
  /** Waits for an `answer` or `refuse` step (a human). */
  | "human"
  /** Answers after twice the lease (a handler slower than the lease). */
  | "slow"
  /** Fails. */
  | "fail"
  /** Dies with a defect. */
  | "defect"

export type KeyStepKind = "call" | "settle" | "cancel" | "reissue" | "abandon"

export type FleetStep =
  | {
      readonly kind: KeyStepKind
      /** The instance slot (taken modulo the number of instances). */
      readonly slot: number
      readonly tool: string
      readonly n: number
      /** The caller gives up (interrupts the operation) after this long: settle and cancel only. */
      readonly patience?: number
    }
  | { readonly kind: "answer" }
  | { readonly kind: "refuse" }
  | { readonly kind: "input"; readonly mode: InputMode }
  | { readonly kind: "crash"; readonly slot: number }
  | { readonly kind: "close"; readonly slot: number }
  /** Starts a down slot again, under its last instance id or a new one. */
  | { readonly kind: "start"; readonly slot: number; readonly sameId: boolean }
  | { readonly kind: "arm"; readonly slot: number; readonly point: CrashPoint }
  | { readonly kind: "fault"; readonly fault: ServerFault }
  | { readonly kind: "serverRestart" }
  | { readonly kind: "advance"; readonly ms: number }

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
}

export interface FleetSequence {
  readonly setup: FleetSetup
  readonly steps: ReadonlyArray<FleetStep>
}

/** The wire's request timeout in fleet runs: `slow` and `late` requests end before it. */
export const requestTimeoutMs = 8_000

const slot = fc.integer({ min: 0, max: 3 })

const onKey = (kind: KeyStepKind) =>
  fc
    .record({
      slot,
      tool: fc.constantFrom(...toolNames),
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
const methods: ReadonlyArray<FaultMethod> = ["tools/call", "tasks/get", "tasks/update", "tasks/cancel"]

const fault: fc.Arbitrary<ServerFault> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ method: fc.constantFrom(...methods), kind: fc.constantFrom(...plainFaults) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      method: fc.constantFrom(...methods),
      kind: fc.constantFrom("slow" as const, "late" as const),
      // Longer than the lease and the call timeout, within the wire's timeout (a request the
      // client gave up on still in the network is nobody's fault; answers lost after it are
      // the drop and proxy faults).
      ms: fc.constantFrom(3_000, 5_000),
    }),
  },
)

export const fleetStepArbitrary: fc.Arbitrary<FleetStep> = fc.oneof(
  { weight: 8, arbitrary: onKey("call") },
  { weight: 4, arbitrary: onKey("settle") },
  { weight: 2, arbitrary: onKey("cancel") },
  { weight: 2, arbitrary: onKey("reissue") },
  { weight: 1, arbitrary: onKey("abandon") },
  { weight: 2, arbitrary: fc.constant<FleetStep>({ kind: "answer" }) },
  { weight: 1, arbitrary: fc.constant<FleetStep>({ kind: "refuse" }) },
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
    arbitrary: fc.tuple(slot, crashPoint).map(([s, point]): FleetStep => ({ kind: "arm", slot: s, point })),
  },
  { weight: 8, arbitrary: fault.map((f): FleetStep => ({ kind: "fault", fault: f })) },
  { weight: 1, arbitrary: fc.constant<FleetStep>({ kind: "serverRestart" }) },
  {
    weight: 6,
    // Up to past every lease and TTL: a clock that jumps.
    arbitrary: fc.integer({ min: 100, max: 12_000 }).map((ms): FleetStep => ({ kind: "advance", ms })),
  },
)

export const fleetSequenceArbitrary = (maxInstances: number, maxSteps: number): fc.Arbitrary<FleetSequence> =>
  fc.record({
    setup: fc.record({
      instances: fc.integer({ min: 1, max: Math.max(1, maxInstances) }),
      leaseMs: fc.constantFrom(2_000, 4_000),
      callTimeoutMs: fc.constantFrom(null, 2_000),
      inDoubtPolicy: fc.constantFrom("surface", "reissue-if-idempotent" as const),
      dedup: fc.boolean(),
      durableServer: fc.boolean(),
      seed: fc.integer({ min: 1, max: 1_000_000 }),
    }),
    steps: fc.array(fleetStepArbitrary, { minLength: 1, maxLength: maxSteps, size: "max" }),
  })

export const describeFleetStep = (step: FleetStep): string => {
  switch (step.kind) {
    case "call":
    case "settle":
    case "cancel":
    case "reissue":
    case "abandon":
      return `${step.kind} ${step.tool}-${step.n} on slot ${step.slot}${step.patience === undefined ? "" : `, giving up after ${step.patience} ms`}`
    case "input":
      return `input handlers: ${step.mode}`
    case "crash":
    case "close":
      return `${step.kind} slot ${step.slot}`
    case "start":
      return `start slot ${step.slot} (${step.sameId ? "same id" : "new id"})`
    case "arm":
      return step.point.at === "fetch"
        ? `arm slot ${step.slot}: crash at fetch ${step.point.method} #${step.point.nth} ${step.point.phase}`
        : `arm slot ${step.slot}: crash at store.${step.point.op} #${step.point.nth} ${step.point.phase}`
    case "fault":
      return `fault ${step.fault.kind}${step.fault.ms === undefined ? "" : ` ${step.fault.ms} ms`} on next ${step.fault.method}`
    case "advance":
      return `advance ${step.ms} ms`
    default:
      return step.kind
  }
}
