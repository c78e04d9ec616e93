import type * as Ledger from "../Ledger.js"

/** The ledger with its write side: what the server records into. */
export interface Recorder extends Ledger.Ledger {
  recordLaunch(entry: Omit<Ledger.Launch, "seq">): Ledger.Launch
  recordTask(
    entry: Pick<Ledger.Task, "taskId" | "tool" | "launchSeq" | "idempotencyKey" | "createdAt">,
  ): Ledger.Task
  recordRequest(entry: Omit<Ledger.Request, "seq">): void
  recordRestart(entry: Ledger.Restart): void
  /** The entry itself, to update in place (polls, cancels, terminal status). */
  taskEntry(taskId: string): Ledger.Task | undefined
}

export const make = (): Recorder => {
  let launches: Ledger.Launch[] = []
  let tasks = new Map<string, Ledger.Task>()
  let requests: Ledger.Request[] = []
  let restarts: Ledger.Restart[] = []
  return {
    recordLaunch: (entry) => {
      const launch: Ledger.Launch = { ...entry, seq: launches.length + 1 }
      launches.push(launch)
      return launch
    },
    recordTask: (entry) => {
      const task: Ledger.Task = {
        ...entry,
        polls: [],
        earlyPolls: 0,
        updates: [],
        cancels: [],
        terminalSeenAt: null,
        terminalStatus: null,
        terminalSeenBy: null,
        lostAt: null,
        purgedAt: null,
      }
      tasks.set(entry.taskId, task)
      return task
    },
    recordRequest: (entry) => {
      requests.push({ ...entry, seq: requests.length + 1 })
    },
    recordRestart: (entry) => {
      restarts.push(entry)
    },
    taskEntry: (taskId) => tasks.get(taskId),
    get launches() {
      return launches
    },
    get tasks() {
      return [...tasks.values()]
    },
    get requests() {
      return requests
    },
    get restarts() {
      return restarts
    },
    task: (taskId) => tasks.get(taskId),
    launchesForKey: (key) => launches.filter((launch) => launch.idempotencyKey === key),
    pollCount: (taskId) => tasks.get(taskId)?.polls.length ?? 0,
    snapshot: () =>
      structuredClone({ launches, tasks: [...tasks.values()], requests, restarts }) as Ledger.Snapshot,
    clear: () => {
      launches = []
      tasks = new Map()
      requests = []
      restarts = []
    },
  }
}
