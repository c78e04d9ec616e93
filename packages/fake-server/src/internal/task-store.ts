import type { ExpiryConfig } from "../config.js"
import type { Ledger } from "../ledger.js"
import type { TaskPersistence } from "../persistence.js"
import type { TaskRecord } from "./task-record.js"

/** How long an expired task still answers "expired" before it is forgotten. */
export const DEFAULT_PURGE_AFTER_MS = 60_000

/** A task as looked up at one instant: live, expired (but not yet purged), or unknown. */
export type Lookup =
  | { readonly kind: "live"; readonly record: TaskRecord }
  | { readonly kind: "expired"; readonly record: TaskRecord }
  | { readonly kind: "unknown" }

/**
 * The server's memory of tasks. Expiry is derived from the clock; purging happens lazily, at most
 * once per due time, so a store with many open tasks costs nothing per request.
 */
export class TaskStore {
  private tasks = new Map<string, TaskRecord>()
  private byKey = new Map<string, string>()
  private nextPurgeAt = Number.POSITIVE_INFINITY

  constructor(
    private readonly expiry: ExpiryConfig,
    private readonly ledger: Ledger,
    private readonly persistence: TaskPersistence | undefined,
  ) {
    if (persistence !== undefined) this.reload()
  }

  get size(): number {
    return this.tasks.size
  }

  ids(): string[] {
    return [...this.tasks.keys()]
  }

  add(record: TaskRecord): void {
    this.index(record)
    this.scheduleOf(record)
    this.persist()
  }

  /** The task a launch under this idempotency key created, if the server still holds it. */
  taskIdForKey(key: string): string | undefined {
    const taskId = this.byKey.get(key)
    return taskId !== undefined && this.tasks.has(taskId) ? taskId : undefined
  }

  /** Call after mutating a record (an answer, a cancel). */
  changed(): void {
    this.persist()
  }

  lookup(taskId: string, now: number): Lookup {
    this.sweep(now)
    const record = this.tasks.get(taskId)
    if (record === undefined) return { kind: "unknown" }
    const expiresAt = expiresAtOf(record)
    return now >= expiresAt ? { kind: "expired", record } : { kind: "live", record }
  }

  /** Delete every task whose purge time has come. */
  sweep(now: number): void {
    if (now < this.nextPurgeAt) return
    let next = Number.POSITIVE_INFINITY
    let purged = false
    for (const [taskId, record] of this.tasks) {
      const purgeAt = this.purgeAtOf(record)
      if (now >= purgeAt) {
        this.tasks.delete(taskId)
        const entry = this.ledger.taskEntry(taskId)
        if (entry !== undefined) entry.purgedAt = now
        purged = true
      } else {
        next = Math.min(next, purgeAt)
      }
    }
    this.nextPurgeAt = next
    if (purged) this.persist()
  }

  /** Forget everything held in memory; reload what the persistence kept. Returns the lost ids. */
  restart(): string[] {
    const before = new Set(this.tasks.keys())
    this.tasks = new Map()
    this.byKey = new Map()
    this.nextPurgeAt = Number.POSITIVE_INFINITY
    if (this.persistence !== undefined) this.reload()
    return [...before].filter((taskId) => !this.tasks.has(taskId))
  }

  private reload(): void {
    for (const record of this.persistence?.load() ?? []) {
      this.index(record)
      this.scheduleOf(record)
    }
  }

  private index(record: TaskRecord): void {
    this.tasks.set(record.taskId, record)
    if (record.idempotencyKey != null) this.byKey.set(record.idempotencyKey, record.taskId)
  }

  private persist(): void {
    this.persistence?.save([...this.tasks.values()])
  }

  private scheduleOf(record: TaskRecord): void {
    this.nextPurgeAt = Math.min(this.nextPurgeAt, this.purgeAtOf(record))
  }

  private purgeAtOf(record: TaskRecord): number {
    return expiresAtOf(record) + (this.expiry.purgeAfterMs ?? DEFAULT_PURGE_AFTER_MS)
  }
}

export const expiresAtOf = (record: TaskRecord): number =>
  record.plan.ttlMs === null ? Number.POSITIVE_INFINITY : record.createdAt + record.plan.ttlMs
