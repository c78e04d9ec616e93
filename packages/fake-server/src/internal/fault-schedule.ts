import type { Fault, FaultMatch, FaultRule } from "../config.js"
import type { Peek } from "./envelope.js"
import type { Random } from "./random.js"

/**
 * Decides, request by request, which configured faults fire. Deterministic: a rule counts the
 * requests it matches (for `nth`) and draws from its own seeded stream (for `probability`).
 */
export class FaultSchedule {
  private readonly matched: number[]
  private readonly fired: number[]

  constructor(
    private readonly rules: readonly FaultRule[],
    private readonly random: Random,
  ) {
    this.matched = rules.map(() => 0)
    this.fired = rules.map(() => 0)
  }

  /** The faults that fire for this request, in rule order. */
  next(request: Peek): Fault[] {
    const faults: Fault[] = []
    this.rules.forEach((rule, index) => {
      const when = rule.when ?? {}
      if (!matches(when, request)) return
      const count = (this.matched[index] ?? 0) + 1
      this.matched[index] = count
      if (when.times !== undefined && (this.fired[index] ?? 0) >= when.times) return
      if (when.nth !== undefined) {
        const wanted = typeof when.nth === "number" ? [when.nth] : when.nth
        if (!wanted.includes(count)) return
      }
      // Draw even when there is no probability, so adding one to a rule does not shift others.
      const draw = this.random.next()
      if (when.probability !== undefined && draw >= when.probability) return
      this.fired[index] = (this.fired[index] ?? 0) + 1
      faults.push(rule.fault)
    })
    return faults
  }
}

const matches = (when: FaultMatch, request: Peek): boolean => {
  if (when.method !== undefined) {
    const methods = typeof when.method === "string" ? [when.method] : when.method
    if (request.method === undefined || !methods.includes(request.method)) return false
  }
  if (when.tool !== undefined && request.tool !== when.tool) return false
  return true
}

/** A short label for the ledger, e.g. `drop:after` or `status:503:before`. */
export const faultLabel = (fault: Fault): string => {
  switch (fault.kind) {
    case "drop":
    case "malformed-json":
      return `${fault.kind}:${fault.phase ?? "after"}`
    case "status":
      return `status:${fault.status}:${fault.phase ?? "before"}`
    case "latency":
      return fault.phase === "after" ? `latency:${fault.ms}:after` : `latency:${fault.ms}`
    case "wrong-shape":
      return `wrong-shape:${typeof fault.shape === "string" ? fault.shape : "replace-result"}`
    case "restart":
      return "restart"
    case "skew":
      return `skew:${fault.ms}`
  }
}
