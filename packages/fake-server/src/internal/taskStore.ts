import { defaults, type Expiry } from "../Config.js"
import type { Persistence, TaskRecord } from "../Persistence.js"
import type { Recorder } from "./ledger.js"

/** A task as looked up at one instant: live, expired (but not yet purged), or unknown. */
export type Lookup =
  | { readonly kind: "live"; readonly record: TaskRecord }
  | { readonly kind: "expired"; readonly record: TaskRecord }
  | { readonly kind: "unknown" }

/**
 * The server's memory of tasks. Expiry is derived from the clock; purging happens lazily, at most
 * once per due time, so a store with many open tasks costs nothing per request.
 */
export interface TaskStore {
  ids(): string[]
  add(record: TaskRecord): void
  /** The task a launch under this idempotency key created, if the server still holds it. */
  taskIdForKey(key: string): string | undefined
  /** Call after mutating a record (an answer, a cancel). */
  changed(): void
  /** Moves on every `changed` and `restart`: a record read before is the same while it holds. */
  version(): number
  lookup(taskId: string, now: number): Lookup
  /** Forget everything held in memory; reload what the persistence kept. Returns the lost ids. */
  restart(): string[]
}

export const makeTaskStore = (
  expiry: Expiry,
  ledger: Recorder,
  persistence: Persistence | undefined,
): TaskStore => {
  let tasks = new Map<string, TaskRecord>()
  let byKey = new Map<string, string>()
  let nextPurgeAt = Number.POSITIVE_INFINITY

  const purgeAtOf = (record: TaskRecord): number =>
    expiresAtOf(record) + (expiry.purgeAfterMs ?? defaults.purgeAfterMs)
  const index = (record: TaskRecord) => {
    tasks.set(record.taskId, record)
    if (record.idempotencyKey != null) byKey.set(record.idempotencyKey, record.taskId)
    nextPurgeAt = Math.min(nextPurgeAt, purgeAtOf(record))
  }
  const persist = () => persistence?.save([...tasks.values()])
  const reload = () => {
    for (const record of persistence?.load() ?? []) index(record)
  }

  /** Delete every task whose purge time has come. */
  const sweep = (now: number) => {
    if (now < nextPurgeAt) return
    let next = Number.POSITIVE_INFINITY
    let purged = false
    for (const [taskId, record] of tasks) {
      const purgeAt = purgeAtOf(record)
      if (now >= purgeAt) {
        tasks.delete(taskId)
        const entry = ledger.taskEntry(taskId)
        if (entry !== undefined) entry.purgedAt = now
        purged = true
      } else {
        next = Math.min(next, purgeAt)
      }
    }
    nextPurgeAt = next
    if (purged) persist()
  }

  if (persistence !== undefined) reload()
  let version = 0
  return {
    ids: () => [...tasks.keys()],
    add: (record) => {
      index(record)
      persist()
    },
    taskIdForKey: (key) => {
      const taskId = byKey.get(key)
      return taskId !== undefined && tasks.has(taskId) ? taskId : undefined
    },
    changed: () => {
      version++
      persist()
    },
    version: () => version,
    lookup: (taskId, now) => {
      sweep(now)
      const record = tasks.get(taskId)
      if (record === undefined) return { kind: "unknown" }
      return now >= expiresAtOf(record) ? { kind: "expired", record } : { kind: "live", record }
    },
    restart: () => {
      version++
      const before = new Set(tasks.keys())
      tasks = new Map()
      byKey = new Map()
      nextPurgeAt = Number.POSITIVE_INFINITY
      if (persistence !== undefined) reload()
      return [...before].filter((taskId) => !tasks.has(taskId))
    },
  }
}

export const expiresAtOf = (record: TaskRecord): number =>
  record.plan.ttlMs === null ? Number.POSITIVE_INFINITY : record.createdAt + record.plan.ttlMs
