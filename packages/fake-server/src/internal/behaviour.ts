import {
  type Config,
  type Duration,
  defaults,
  type Outcome,
  type OutcomeChoice,
  type Tool,
  type ToolBehaviour,
} from "../Config.js"
import type { JsonObject } from "../Json.js"
import type { TaskPlan } from "../Persistence.js"
import type { Random } from "./random.js"

/** A tool's behaviour with the global defaults filled in (the tool's own values win). */
export const behaviourOf = (config: Config, tool: Tool): ToolBehaviour => ({
  ...config.defaults,
  ...definedOnly(tool),
})

const definedOnly = (tool: Tool): ToolBehaviour => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(tool)) if (value !== undefined) out[key] = value
  return out as ToolBehaviour
}

export const canAnswerWithTask = (behaviour: ToolBehaviour): boolean =>
  (behaviour.shape ?? "task") !== "direct"

export const advertisedTaskSupport = (
  tool: Tool,
  behaviour: ToolBehaviour,
): "forbidden" | "optional" | "required" =>
  tool.taskSupport ?? (canAnswerWithTask(behaviour) ? "optional" : "forbidden")

/** Whether this call becomes a task (before capability negotiation). */
export const wantsTask = (behaviour: ToolBehaviour, random: Random): boolean => {
  const shape = behaviour.shape ?? "task"
  if (shape === "task") return true
  if (shape === "direct") return false
  return random.next() < shape.taskProbability
}

export const chooseOutcome = (config: OutcomeChoice | undefined, random: Random): Outcome => {
  if (config === undefined) return defaults.outcome
  if (!("weighted" in config)) return config
  const total = config.weighted.reduce((sum, entry) => sum + Math.max(0, entry.weight), 0)
  let draw = random.next() * total
  for (const entry of config.weighted) {
    draw -= Math.max(0, entry.weight)
    if (draw < 0) return entry.outcome
  }
  return config.weighted.at(-1)?.outcome ?? defaults.outcome
}

export const durationOf = (duration: Duration | undefined, args: JsonObject): number => {
  if (duration === undefined) return 0
  if (typeof duration === "number") return duration
  const raw = args[duration.fromArgument]
  const value = typeof raw === "number" && Number.isFinite(raw) ? raw : undefined
  return value === undefined ? (duration.defaultMs ?? 0) : value * (duration.multiplier ?? 1)
}

export const planTask = (behaviour: ToolBehaviour, args: JsonObject, random: Random): TaskPlan => ({
  durationMs: Math.max(0, durationOf(behaviour.durationMs, args)),
  steps: [...(behaviour.inputSteps ?? [])].sort((a, b) => a.atMs - b.atMs),
  outcome: chooseOutcome(behaviour.outcome, random),
  ttlMs: behaviour.ttlMs === undefined ? defaults.ttlMs : behaviour.ttlMs,
  pollIntervalMs: behaviour.pollIntervalMs,
  cancellable: behaviour.cancellable ?? true,
  cancelDelayMs: behaviour.cancelDelayMs ?? 0,
  workingMessage: behaviour.workingMessage,
})
