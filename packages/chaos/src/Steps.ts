/**
 * What the single-process model and the fleet model share of their steps: the operations on a
 * key, the steps on the world (input, faults, server restarts, time), where a process dies, and
 * how each is described in a trace.
 *
 * The generators are pieces of each model's `fc.oneof`, in the order and with the weights each
 * model always had, so that a printed seed still replays the same sequence.
 *
 * @since 0.2.0
 */
import * as fc from "fast-check"
import type { CrashPoint, FaultMethod, WorldStep } from "./World.js"

/**
 * The client operations on one key.
 *
 * @since 0.2.0
 * @category models
 */
export type KeyStepKind = "call" | "settle" | "cancel" | "reissue" | "abandon"

const keyStepKinds: ReadonlySet<string> = new Set<KeyStepKind>([
  "call",
  "settle",
  "cancel",
  "reissue",
  "abandon",
])

/**
 * Whether a step is an operation on a key.
 *
 * @since 0.2.0
 * @category guards
 */
export const isKeyStep = <S extends { readonly kind: string }>(
  step: S,
): step is Extract<S, { readonly kind: KeyStepKind }> => keyStepKinds.has(step.kind)

/**
 * @since 0.2.0
 * @category constants
 */
export const faultMethods: ReadonlyArray<FaultMethod> = [
  "tools/call",
  "tasks/get",
  "tasks/update",
  "tasks/cancel",
]

type Weighted<A> = fc.WeightedArbitrary<A>

/**
 * The operations on a key, most often a call; `settle` weighs as the model says.
 *
 * @since 0.2.0
 */
export const keySteps = <A>(
  onKey: (kind: KeyStepKind) => fc.Arbitrary<A>,
  settleWeight: number,
): Array<Weighted<A>> => [
  { weight: 8, arbitrary: onKey("call") },
  { weight: settleWeight, arbitrary: onKey("settle") },
  { weight: 2, arbitrary: onKey("cancel") },
  { weight: 2, arbitrary: onKey("reissue") },
  { weight: 1, arbitrary: onKey("abandon") },
]

/**
 * A human answers (or refuses) every open question.
 *
 * @since 0.2.0
 */
export const inputSteps: ReadonlyArray<Weighted<WorldStep>> = [
  { weight: 2, arbitrary: fc.constant<WorldStep>({ kind: "answer" }) },
  { weight: 1, arbitrary: fc.constant<WorldStep>({ kind: "refuse" }) },
]

/**
 * The next write of a fact fails once (a store that is busy for a moment): the process lives on.
 *
 * @since 0.4.0
 */
export const storeFaultSteps: ReadonlyArray<Weighted<WorldStep>> = [
  { weight: 2, arbitrary: fc.constant<WorldStep>({ kind: "factWriteFails" }) },
]

/**
 * The server restarts, or time moves on by up to `maxAdvanceMs`.
 *
 * @since 0.2.0
 */
export const timeSteps = (maxAdvanceMs: number): Array<Weighted<WorldStep>> => [
  { weight: 1, arbitrary: fc.constant<WorldStep>({ kind: "serverRestart" }) },
  {
    weight: 6,
    arbitrary: fc.integer({ min: 100, max: maxAdvanceMs }).map((ms): WorldStep => ({ kind: "advance", ms })),
  },
]

/**
 * Where a process dies: at a request of each method, or around a store operation.
 *
 * @since 0.1.0
 */
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

/**
 * @since 0.2.0
 */
export const describeCrashPoint = (point: CrashPoint): string =>
  point.at === "fetch"
    ? `crash at fetch ${point.method} #${point.nth} ${point.phase}`
    : `crash at store.${point.op} #${point.nth} ${point.phase}`

/**
 * @since 0.2.0
 */
export const describeWorldStep = (step: WorldStep): string => {
  switch (step.kind) {
    case "fault":
      return `fault ${step.fault.kind}${step.fault.ms === undefined ? "" : ` ${step.fault.ms} ms`} on next ${step.fault.method}`
    case "advance":
      return `advance ${step.ms} ms`
    case "streams":
      return step.what === "drop" ? "listen streams dropped" : "listen streams half-open"
    case "factWriteFails":
      return "the next fact write fails once"
    default:
      return step.kind
  }
}
