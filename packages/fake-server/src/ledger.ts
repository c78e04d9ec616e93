import type { JsonObject } from "./json.js"

/** One execution of a tool: a task created, or a direct answer computed. */
export interface LaunchEntry {
  readonly seq: number
  readonly tool: string
  readonly arguments: JsonObject
  /** The key the client sent in `params._meta["mcp-handles/key"]`, if any. */
  readonly idempotencyKey: string | null
  /** `null` for a direct (non-task) answer. */
  readonly taskId: string | null
  readonly resultType: "task" | "complete" | "error"
  /** Clock time of the launch. */
  readonly at: number
  /** False when a fault lost or garbled the response that carried the outcome. */
  responseDelivered: boolean
  /** The fault applied to the launching response, if any. */
  fault: string | null
}

export interface TaskUpdateEntry {
  readonly at: number
  /** Keys the client sent. */
  readonly keys: readonly string[]
  /** Keys that answered an outstanding request (the others were ignored). */
  readonly accepted: readonly string[]
}

/** What happened to one task, from the server's side. */
export interface TaskEntry {
  readonly taskId: string
  readonly tool: string
  readonly launchSeq: number
  readonly idempotencyKey: string | null
  readonly createdAt: number
  /** Times of every `tasks/get` for this task that reached it. */
  readonly polls: number[]
  /** Polls that came sooner than the `pollIntervalMs` of the previous answer about the task. */
  earlyPolls: number
  readonly updates: TaskUpdateEntry[]
  readonly cancels: number[]
  /** When a `tasks/get` first reported a terminal status (and which). */
  terminalSeenAt: number | null
  terminalStatus: string | null
  /** When the task was lost in a non-durable restart. */
  lostAt: number | null
  /** When the task was deleted after expiry. */
  purgedAt: number | null
}

export interface RequestEntry {
  readonly seq: number
  /** Clock time at which the server processed the request (after any `before` latency). */
  readonly at: number
  /** Clock time the request arrived: with `endedAt`, what was in flight at once. */
  readonly startedAt: number
  /** Clock time the answer (or the cut connection) left: after any `after` latency. */
  readonly endedAt: number
  readonly method: string | null
  readonly tool: string | null
  readonly taskId: string | null
  /** The idempotency key the request carried in `_meta["mcp-handles/key"]`. */
  readonly idempotencyKey: string | null
  /** Who sent it: the request's `x-client-id` header (tests name their client instances). */
  readonly client: string | null
  readonly httpStatus: number
  /** `dropped`: the connection was cut; `malformed`: the body was not valid JSON. */
  readonly outcome: "result" | "error" | "dropped" | "malformed" | "stream"
  readonly errorCode: number | null
  readonly fault: string | null
}

export interface RestartEntry {
  readonly at: number
  readonly durable: boolean
  readonly lostTaskIds: readonly string[]
}

export interface LedgerSnapshot {
  readonly launches: readonly LaunchEntry[]
  readonly tasks: readonly TaskEntry[]
  readonly requests: readonly RequestEntry[]
  readonly restarts: readonly RestartEntry[]
}

/**
 * The outside observer's record of everything the server did. It survives `restart()` (it models
 * what an operator could reconstruct from logs, not the server's memory) so tests can check
 * "no orphan" and "no double launch" across crashes.
 */
export class Ledger {
  private launchList: LaunchEntry[] = []
  private taskMap = new Map<string, TaskEntry>()
  private requestList: RequestEntry[] = []
  private restartList: RestartEntry[] = []

  /** @internal */
  recordLaunch(entry: Omit<LaunchEntry, "seq">): LaunchEntry {
    const launch: LaunchEntry = { ...entry, seq: this.launchList.length + 1 }
    this.launchList.push(launch)
    return launch
  }

  /** @internal */
  recordTask(
    entry: Pick<TaskEntry, "taskId" | "tool" | "launchSeq" | "idempotencyKey" | "createdAt">,
  ): TaskEntry {
    const task: TaskEntry = {
      ...entry,
      polls: [],
      earlyPolls: 0,
      updates: [],
      cancels: [],
      terminalSeenAt: null,
      terminalStatus: null,
      lostAt: null,
      purgedAt: null,
    }
    this.taskMap.set(entry.taskId, task)
    return task
  }

  /** @internal */
  recordRequest(entry: Omit<RequestEntry, "seq">): void {
    this.requestList.push({ ...entry, seq: this.requestList.length + 1 })
  }

  /** @internal */
  recordRestart(entry: RestartEntry): void {
    this.restartList.push(entry)
  }

  /** @internal Mutable access for the server. */
  taskEntry(taskId: string): TaskEntry | undefined {
    return this.taskMap.get(taskId)
  }

  get launches(): readonly LaunchEntry[] {
    return this.launchList
  }

  get tasks(): readonly TaskEntry[] {
    return [...this.taskMap.values()]
  }

  get requests(): readonly RequestEntry[] {
    return this.requestList
  }

  get restarts(): readonly RestartEntry[] {
    return this.restartList
  }

  task(taskId: string): TaskEntry | undefined {
    return this.taskMap.get(taskId)
  }

  /** Every launch made under one idempotency key (more than one is a double launch). */
  launchesForKey(key: string): readonly LaunchEntry[] {
    return this.launchList.filter((launch) => launch.idempotencyKey === key)
  }

  /** Number of `tasks/get` that reached a task. */
  pollCount(taskId: string): number {
    return this.taskMap.get(taskId)?.polls.length ?? 0
  }

  /** A deep, JSON-safe copy: what `GET {prefix}ledger` serves. */
  snapshot(): LedgerSnapshot {
    return structuredClone({
      launches: this.launchList,
      tasks: [...this.taskMap.values()],
      requests: this.requestList,
      restarts: this.restartList,
    })
  }

  clear(): void {
    this.launchList = []
    this.taskMap = new Map()
    this.requestList = []
    this.restartList = []
  }
}
