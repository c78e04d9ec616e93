/**
 * Where a "durable" fake server keeps its tasks. Without one, `restart()` loses every task (the
 * in-memory server of a crashed process); with one, tasks come back after a restart.
 *
 * @since 0.1.0
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import type { InputStep, Outcome, PollInterval } from "./Config.js"
import type { Json, JsonObject } from "./Json.js"

/**
 * Everything decided about a task when it was created, frozen so that later config changes, random
 * draws or a reload from a durable store cannot change its fate.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskPlan {
  readonly durationMs: number
  /** Sorted by `atMs`. */
  readonly steps: readonly InputStep[]
  readonly outcome: Outcome
  readonly ttlMs: number | null
  readonly pollIntervalMs: PollInterval | undefined
  readonly cancellable: boolean
  readonly cancelDelayMs: number
  readonly workingMessage: string | undefined
}

/**
 * The server-side state of one task: only facts (when it was created, which answers arrived when,
 * when cancel was asked). Its status at any instant is derived from these and the clock.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskRecord {
  readonly taskId: string
  readonly tool: string
  readonly arguments: JsonObject
  /** Answers gathered by multi round-trip rounds before the task was created. */
  readonly mrtrInputs: { readonly [key: string]: Json }
  readonly createdAt: number
  readonly plan: TaskPlan
  readonly launchSeq: number
  /** The client's idempotency key (`_meta["io.github.mcp-handles/key"]`), kept for `deduplicateByKey`. */
  readonly idempotencyKey: string | null
  answers: { [key: string]: { readonly at: number; readonly response: Json } }
  cancelRequestedAt: number | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Persistence {
  load(): readonly TaskRecord[]
  save(tasks: readonly TaskRecord[]): void
}

/**
 * Durable across `restart()` within one process: a stand-in for a database.
 *
 * @since 0.1.0
 * @category constructors
 */
export const memory = (): Persistence => {
  let saved: TaskRecord[] = []
  return {
    load: () => structuredClone(saved),
    save: (tasks) => {
      saved = structuredClone([...tasks])
    },
  }
}

/**
 * Tasks kept in a JSON file, so they survive a real process restart of the binary. Writes go to a
 * temporary file that is renamed over the old one: a crash never leaves half a file behind.
 *
 * @since 0.1.0
 * @category constructors
 */
export const jsonFile = (path: string): Persistence => ({
  load: () => {
    if (!existsSync(path)) return []
    const parsed = JSON.parse(readFileSync(path, "utf8")) as { tasks?: TaskRecord[] }
    return Array.isArray(parsed.tasks) ? parsed.tasks : []
  },
  save: (tasks) => {
    const temporary = `${path}.tmp`
    writeFileSync(temporary, JSON.stringify({ tasks }), { mode: 0o600 })
    renameSync(temporary, path)
  },
})
