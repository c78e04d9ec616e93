import type {
  DurationConfig,
  FakeServerConfig,
  Outcome,
  OutcomeConfig,
  ToolBehaviour,
  ToolConfig,
} from "../config.js"
import type { JsonObject } from "../json.js"
import type { Random } from "./random.js"
import type { TaskPlan } from "./task-record.js"

export const DEFAULT_TTL_MS = 3_600_000
const DEFAULT_OUTCOME: Outcome = { kind: "result", text: "ok" }

/** A tool's behaviour with the global defaults filled in (the tool's own values win). */
export const behaviourOf = (config: FakeServerConfig, tool: ToolConfig): ToolBehaviour => ({
  ...config.defaults,
  ...definedOnly(tool),
})

const definedOnly = (tool: ToolConfig): ToolBehaviour => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(tool)) if (value !== undefined) out[key] = value
  return out as ToolBehaviour
}

export const canAnswerWithTask = (behaviour: ToolBehaviour): boolean =>
  (behaviour.shape ?? "task") !== "direct"

export const advertisedTaskSupport = (
  tool: ToolConfig,
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

export const chooseOutcome = (config: OutcomeConfig | undefined, random: Random): Outcome => {
  if (config === undefined) return DEFAULT_OUTCOME
  if (!("weighted" in config)) return config
  const total = config.weighted.reduce((sum, entry) => sum + Math.max(0, entry.weight), 0)
  let draw = random.next() * total
  for (const entry of config.weighted) {
    draw -= Math.max(0, entry.weight)
    if (draw < 0) return entry.outcome
  }
  return config.weighted.at(-1)?.outcome ?? DEFAULT_OUTCOME
}

export const durationOf = (duration: DurationConfig | undefined, args: JsonObject): number => {
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
  ttlMs: behaviour.ttlMs === undefined ? DEFAULT_TTL_MS : behaviour.ttlMs,
  pollIntervalMs: behaviour.pollIntervalMs,
  cancellable: behaviour.cancellable ?? true,
  cancelDelayMs: behaviour.cancelDelayMs ?? 0,
  workingMessage: behaviour.workingMessage,
})
