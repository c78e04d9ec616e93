/**
 * B9's counting: what users lost, from the server's ledger and the two journals every B9 app
 * keeps (what it delivered to the user, and each time it asked the user for input). Pure: the
 * same files give the same counts, so a test can hand it a made-up run.
 */
import type * as Ledger from "@mcp-handles/fake-server/Ledger"

/** The three applications B9 runs: the same calls, the same faults, each client's own persistence. */
export type Kind = "ext-tasks" | "naive" | "mcp-handles"

export const kinds: ReadonlyArray<Kind> = ["ext-tasks", "naive", "mcp-handles"]

/** One call the user asked for; `key` is also in its arguments, so the server's ledger names it. */
export interface Call {
  readonly key: string
  readonly tool: string
  readonly n: number
}

/** A line of `delivered.jsonl`: the app handed the user this call's outcome. */
export interface Delivered {
  readonly key: string
  /** `completed`, `failed`, `cancelled`, `expired`: as the client reported it. */
  readonly status: string
  /** The server task the outcome came from (none for a direct answer). */
  readonly taskId: string | null
  /** Why the client says the call failed. */
  readonly reason?: string
}

/** A line of `asked.jsonl`: the app asked the user a question of this call (written before answering). */
export interface Asked {
  readonly key: string
  /** The question's name within its task (e.g. `name`), or the message when the client gives no name. */
  readonly question: string
  readonly at: number
}

export interface Losses {
  /** Server work nobody will read or cancel: tasks never delivered nor cancelled, direct answers cut off. */
  readonly orphaned: number
  /** Calls the server launched more than once. */
  readonly launchedTwice: number
  /** Questions the user answered again after the server had accepted their answer, or the server got twice. */
  readonly answeredTwice: number
  /** Calls whose outcome the user never got: not delivered, or delivered as a failure the server never had. */
  readonly neverFinished: number
}

/** The counts and, for the report, what is behind them. */
export interface Count {
  readonly losses: Losses
  readonly calls: number
  readonly launches: number
  readonly tasks: number
  /** Calls delivered with another status than `completed` (every tool of the workload completes). */
  readonly wrongOutcomes: number
  /** The reasons the clients gave for those, with how often. */
  readonly failureReasons: ReadonlyArray<string>
  readonly undelivered: number
  /** Calls the server never launched (a process killed before it sent them, and none after). */
  readonly neverLaunched: number
}

/** `["a", "b", "a"]` → `["2× a", "1× b"]`. */
const tally = (xs: ReadonlyArray<string>): Array<string> => {
  const counts = new Map<string, number>()
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1)
  return [...counts].map(([x, n]) => `${n}× ${x}`)
}

/** The call a launch belongs to: the harness puts the key in every call's arguments. */
const keyOf = (launch: { readonly arguments: Record<string, unknown> }): string | undefined => {
  const key = launch.arguments.key
  return typeof key === "string" ? key : undefined
}

/**
 * Counts one application's losses. `calls` are every call the user asked for; `delivered` and
 * `asked` are the app's journals over all its processes; `ledger` is the server's at the end.
 */
export const count = (
  calls: ReadonlyArray<Call>,
  ledger: Ledger.Snapshot,
  delivered: ReadonlyArray<Delivered>,
  asked: ReadonlyArray<Asked>,
): Count => {
  const deliveredTasks = new Set(delivered.flatMap((d) => (d.taskId === null ? [] : [d.taskId])))
  const launchesByKey = new Map<string, number>()
  for (const launch of ledger.launches) {
    const key = keyOf(launch)
    if (key !== undefined) launchesByKey.set(key, (launchesByKey.get(key) ?? 0) + 1)
  }
  const orphanedTasks = ledger.tasks.filter(
    (task) => !deliveredTasks.has(task.taskId) && task.cancels.length === 0,
  ).length
  // A held answer whose client went away (or whose connection a fault cut): the work ran, and
  // nobody will ever read what it returned.
  const cutDirect = ledger.launches.filter((l) => l.taskId === null && !l.responseDelivered).length
  const launchedTwice = [...launchesByKey.values()].filter((n) => n > 1).length

  // When the server first accepted each call's answer to each question (on any task of the call).
  const keyOfTask = new Map<string, string>()
  for (const launch of ledger.launches) {
    const key = keyOf(launch)
    if (key !== undefined && launch.taskId !== null) keyOfTask.set(launch.taskId, key)
  }
  const acceptedAt = new Map<string, number>()
  let sentTwice = 0
  for (const task of ledger.tasks) {
    const key = keyOfTask.get(task.taskId)
    if (key === undefined) continue
    const accepted = new Set<string>()
    for (const update of task.updates) {
      for (const question of update.keys) if (accepted.has(question)) sentTwice++
      for (const question of update.accepted) {
        accepted.add(question)
        const id = `${key}\u0000${question}`
        acceptedAt.set(id, Math.min(acceptedAt.get(id) ?? Number.POSITIVE_INFINITY, update.at))
      }
    }
  }
  const askedAgain = asked.filter(
    (a) => a.at > (acceptedAt.get(`${a.key}\u0000${a.question}`) ?? Number.POSITIVE_INFINITY),
  ).length

  const finished = new Set(delivered.filter((d) => d.status === "completed").map((d) => d.key))
  const everDelivered = new Set(delivered.map((d) => d.key))
  const neverFinished = calls.filter((call) => !finished.has(call.key)).length
  return {
    losses: {
      orphaned: orphanedTasks + cutDirect,
      launchedTwice,
      answeredTwice: askedAgain + sentTwice,
      neverFinished,
    },
    calls: calls.length,
    launches: ledger.launches.length,
    tasks: ledger.tasks.length,
    wrongOutcomes: calls.filter((call) => everDelivered.has(call.key) && !finished.has(call.key)).length,
    failureReasons: tally(
      delivered.filter((d) => !finished.has(d.key)).map((d) => `${d.status}: ${d.reason ?? "no reason"}`),
    ),
    undelivered: calls.filter((call) => !everDelivered.has(call.key)).length,
    neverLaunched: calls.filter((call) => !launchesByKey.has(call.key)).length,
  }
}
