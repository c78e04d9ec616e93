import type { Fault, FaultMatch, FaultRule } from "../Config.js"
import type { Peek } from "./envelope.js"
import type { Random } from "./random.js"

/**
 * Decides, request by request, which configured faults fire. Deterministic: a rule counts the
 * requests it matches (for `nth`) and draws from its own seeded stream (for `probability`).
 */
export interface FaultSchedule {
  /** The faults that fire for this request, in rule order. */
  next(request: Peek): Fault[]
}

export const makeFaultSchedule = (rules: readonly FaultRule[], random: Random): FaultSchedule => {
  const matched = rules.map(() => 0)
  const fired = rules.map(() => 0)
  return {
    next: (request) => {
      const faults: Fault[] = []
      rules.forEach((rule, index) => {
        const when = rule.when ?? {}
        if (!matches(when, request)) return
        const count = (matched[index] ?? 0) + 1
        matched[index] = count
        if (when.times !== undefined && (fired[index] ?? 0) >= when.times) return
        if (when.nth !== undefined) {
          const wanted = typeof when.nth === "number" ? [when.nth] : when.nth
          if (!wanted.includes(count)) return
        }
        // Draw even when there is no probability, so adding one to a rule does not shift others.
        const draw = random.next()
        if (when.probability !== undefined && draw >= when.probability) return
        fired[index] = (fired[index] ?? 0) + 1
        faults.push(rule.fault)
      })
      return faults
    },
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

/** When a fault acts: before the server processes the request, or after; none for the others. */
export const phaseOf = (fault: Fault): "before" | "after" | undefined => {
  switch (fault.kind) {
    case "drop":
    case "malformed-json":
      return fault.phase ?? "after"
    case "status":
      return fault.phase ?? "before"
    case "wrong-shape":
      return "after"
    default:
      return undefined
  }
}

/** A short label for the ledger, e.g. `drop:after` or `status:503:before`. */
export const faultLabel = (fault: Fault): string => {
  switch (fault.kind) {
    case "drop":
    case "malformed-json":
      return `${fault.kind}:${phaseOf(fault)}`
    case "status":
      return `status:${fault.status}:${phaseOf(fault)}`
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
