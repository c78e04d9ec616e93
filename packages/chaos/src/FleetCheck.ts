/**
 * The fleet's invariants, checked from outside: the fake server's ledger against the store's
 * rows and what the simulated world saw reach the clients. Every check is per task and per key,
 * never by counts: a row may only "cover" the one unrecorded launch it can explain.
 *
 * Pure functions of a state, so that each can be shown to flag a hand-built violating state
 * (test/fleet-check.test.ts).
 *
 * @since 0.1.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Outcome from "@mcp-handles/core/Outcome"
import type * as Ledger from "@mcp-handles/fake-server/Ledger"
import { earlyPolls } from "./Model.js"
import { canonical } from "./Simulation.js"
import * as Tools from "./Tools.js"

/**
 * A `tools/call` answer with a task id that reached a live client.
 *
 * @since 0.1.0
 */
export interface Delivered {
  readonly at: number
  /** The instance it reached, for the message. */
  readonly client: string
  /** Whether that process is still alive: a process that died before writing it is excused. */
  readonly alive: boolean
}

/**
 * One call of an input handler.
 *
 * @since 0.1.0
 */
export interface Ask {
  readonly key: string
  readonly inputKey: string
  readonly client: string
  readonly at: number
  /** When the handler returned, failed or was interrupted (undefined while it runs). */
  readonly endedAt: number | undefined
  /** When its process died (a dead process's question is nobody's). */
  readonly diedAt: number | undefined
  /** The row already held an answer for this input key when the handler was called. */
  readonly alreadyAnswered: boolean
}

/**
 * A `cancel` or `abandon` that returned successfully.
 *
 * @since 0.1.0
 */
export interface CancelRequest {
  readonly key: string
  readonly at: number
  readonly how: "cancel" | "abandon"
}

/** @since 0.1.0 */
export interface Observations {
  readonly now: number
  /**
   * When each client (`instanceId#process`) crashed or was closed. A request it left in the
   * network may still reach the server afterwards: nobody can stop it, so it excuses overlaps.
   */
  readonly gone: ReadonlyMap<string, number>
  readonly delivered: ReadonlyMap<string, Delivered>
  readonly asks: ReadonlyArray<Ask>
  readonly cancels: ReadonlyArray<CancelRequest>
  readonly garbledCreates: ReadonlySet<string>
  readonly lostPollAnswers: ReadonlySet<string>
  /** At the end, after the quiet period: obligations that may lag (cancels) must be met. */
  readonly final: boolean
}

/**
 * Time a delivered task id may take to reach the store (a commit retried after a conflict):
 * checks between steps judge it only after this much virtual time.
 *
 * @since 0.1.0
 */
export const deliveryGraceMs = 1_000

const isAbandoned = (row: HandleRecord.HandleRecord) =>
  row.status === "cancelled" && (row.lastProblem ?? "").includes("abandoned")

/** Strictly overlapping in time: both were in flight at some instant. */
const overlaps = (a: Ledger.Request, b: Ledger.Request) => a.startedAt < b.endedAt && b.startedAt < a.endedAt

/** Whether `request` was left behind by a client that was gone by `at`. */
const stray = (gone: ReadonlyMap<string, number>, request: Ledger.Request, at: number) =>
  request.client !== null && (gone.get(request.client) ?? Number.POSITIVE_INFINITY) <= at

/** Overlapping, and both senders still waiting for their answers at the time. */
const concurrent = (gone: ReadonlyMap<string, number>, a: Ledger.Request, b: Ledger.Request) =>
  overlaps(a, b) && !stray(gone, a, b.startedAt) && !stray(gone, b, a.startedAt)

const short = (id: string) => `…${id.slice(-6)}`

/**
 * Whether a task's id reached a client that is still alive: one that reached a process which
 * died before writing it is known to nobody (the in-doubt row stands for it).
 */
const heldByLiveClient = (delivered: Observations["delivered"], taskId: string) =>
  delivered.get(taskId)?.alive === true

/**
 * No orphan: every server task is recorded by its id on the row of its key, or was cancelled by
 * the client, or is the one unrecorded launch its key's pending/in_doubt row stands for (an
 * explicit reissue adds one more: the launch it gave up on). A task id that reached a live
 * client must be recorded or cancelled, whatever the row's state.
 *
 * @since 0.1.0
 */
export const orphans = (
  ledger: Ledger.Snapshot,
  rows: ReadonlyArray<HandleRecord.HandleRecord>,
  observed: Pick<Observations, "now" | "delivered" | "final">,
): Array<string> => {
  const found: Array<string> = []
  const byKey = new Map(rows.map((row) => [row.key, row]))
  const unrecorded = new Map<string, Array<Ledger.Task>>()
  for (const task of ledger.tasks) {
    if (task.idempotencyKey === null) {
      found.push(`no orphan: task ${short(task.taskId)} of ${task.tool} was launched without a key`)
      continue
    }
    const row = byKey.get(task.idempotencyKey)
    if (row?.taskId === task.taskId || task.cancels.length > 0) continue
    const delivered = observed.delivered.get(task.taskId)
    if (delivered?.alive === true && (observed.final || observed.now - delivered.at >= deliveryGraceMs)) {
      found.push(
        `no orphan: task ${short(task.taskId)} of ${task.idempotencyKey} reached ${delivered.client} at ${delivered.at} in a tools/call answer, but it is neither recorded (row ${row === undefined ? "missing" : `${row.status}, task ${row.taskId === null ? "none" : short(row.taskId)}`}) nor cancelled`,
      )
      continue
    }
    const list = unrecorded.get(task.idempotencyKey) ?? []
    list.push(task)
    unrecorded.set(task.idempotencyKey, list)
  }
  for (const [key, tasks] of unrecorded) {
    const row = byKey.get(key)
    if (row === undefined) {
      found.push(`no orphan: ${key} has ${tasks.length} server task(s) but no row`)
      continue
    }
    const covering =
      row.status === "pending" || row.status === "in_doubt" || (isAbandoned(row) && row.taskId === null)
        ? 1
        : 0
    const allowed = Math.max(0, row.launches - 1) + covering
    // Only unanswered launches count: a task whose id reached a process that then died is one.
    const pending = tasks.filter((task) => !heldByLiveClient(observed.delivered, task.taskId))
    if (pending.length > allowed) {
      found.push(
        `no orphan: ${key} has ${pending.length} server task(s) neither recorded nor cancelled (${pending
          .map((t) => short(t.taskId))
          .join(", ")}); its row (${row.status}, launches ${row.launches}) covers ${allowed}`,
      )
    }
  }
  return found
}

/**
 * No double launch: launches per key never exceed the row's `launches` (only an explicit
 * reissue increments it), and two `tools/call` of one key are never in flight at once.
 *
 * @since 0.1.0
 */
export const doubleLaunches = (
  ledger: Ledger.Snapshot,
  rows: ReadonlyArray<HandleRecord.HandleRecord>,
  observed: Pick<Observations, "gone">,
): Array<string> => {
  const found: Array<string> = []
  const byKey = new Map(rows.map((row) => [row.key, row]))
  const perKey = new Map<string, number>()
  for (const launch of ledger.launches) {
    if (launch.idempotencyKey === null) continue
    perKey.set(launch.idempotencyKey, (perKey.get(launch.idempotencyKey) ?? 0) + 1)
  }
  for (const [key, count] of perKey) {
    const row = byKey.get(key)
    const allowed = row?.launches ?? 0
    if (count > allowed)
      found.push(
        `no double launch: ${key} launched ${count}× on the server, its row allows ${allowed} (${row?.status ?? "no row"})`,
      )
  }
  const calls = ledger.requests.filter((r) => r.method === "tools/call" && r.idempotencyKey !== null)
  for (let i = 0; i < calls.length; i++) {
    for (let j = i + 1; j < calls.length; j++) {
      const a = calls[i] as Ledger.Request
      const b = calls[j] as Ledger.Request
      if (a.idempotencyKey === b.idempotencyKey && concurrent(observed.gone, a, b))
        found.push(
          `no double launch: two tools/call of ${a.idempotencyKey} in flight at once (${a.client} ${a.startedAt}–${a.endedAt}, ${b.client} ${b.startedAt}–${b.endedAt})`,
        )
    }
  }
  return found
}

/**
 * One row per task id.
 *
 * @since 0.1.0
 */
export const sharedTaskIds = (rows: ReadonlyArray<HandleRecord.HandleRecord>): Array<string> => {
  const holders = new Map<string, Array<string>>()
  for (const row of rows) {
    if (row.taskId === null) continue
    holders.set(row.taskId, [...(holders.get(row.taskId) ?? []), row.key])
  }
  return [...holders]
    .filter(([, keys]) => keys.length > 1)
    .map(([taskId, keys]) => `one row per task: task ${short(taskId)} is held by ${keys.join(", ")}`)
}

/**
 * Poll discipline across the fleet: no two `tasks/get` of one task in flight at once, and none
 * sooner than the task's last `pollIntervalMs` (whoever sent the previous one).
 *
 * @since 0.1.0
 */
export const pollDiscipline = (
  ledger: Ledger.Snapshot,
  observed: Pick<Observations, "garbledCreates" | "lostPollAnswers" | "gone">,
): Array<string> => {
  const found: Array<string> = []
  const polls = new Map<string, Array<Ledger.Request>>()
  for (const request of ledger.requests) {
    if (request.method !== "tasks/get" || request.taskId === null) continue
    polls.set(request.taskId, [...(polls.get(request.taskId) ?? []), request])
  }
  for (const [taskId, list] of polls) {
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i] as Ledger.Request
        const b = list[j] as Ledger.Request
        if (concurrent(observed.gone, a, b))
          found.push(
            `poll discipline: task ${short(taskId)} polled twice at once (${a.client} ${a.startedAt}–${a.endedAt}, ${b.client} ${b.startedAt}–${b.endedAt})`,
          )
      }
    }
  }
  for (const task of ledger.tasks) {
    if (task.earlyPolls === 0) continue
    const sent = polls.get(task.taskId) ?? []
    const strayAt = (at: number) => sent.some((r) => r.at === at && stray(observed.gone, r, at))
    const early = earlyPolls(task, observed.garbledCreates, observed.lostPollAnswers).filter(
      (poll) => poll.cause === "unexplained" && !strayAt(poll.at) && !strayAt(poll.at - poll.gap),
    )
    if (early.length > 0)
      found.push(
        `poll discipline: task of ${task.idempotencyKey} (${task.tool}) polled early: ${early
          .map((poll) => `at ${poll.at}, ${poll.gap} ms after the previous (interval ${poll.interval})`)
          .join(", ")}`,
      )
  }
  return found
}

/**
 * Input once: each input key is asked at most once across the fleet (again only after the
 * previous ask failed, or its process died, and never once an answer is stored), and answered at
 * most once (no `tasks/update` carries a key the server already accepted).
 *
 * @since 0.1.0
 */
export const inputOnce = (
  ledger: Ledger.Snapshot,
  observed: Pick<Observations, "asks"> & Partial<Pick<Observations, "gone">>,
): Array<string> => {
  // A tasks/update a client left in the network when it died, reaching the server afterwards:
  // nobody can stop it, and the process that took over cannot know it is still coming.
  const gone = observed.gone ?? new Map<string, number>()
  const leftBehind = (taskId: string, at: number) =>
    ledger.requests.some(
      (r) =>
        r.method === "tasks/update" &&
        r.taskId === taskId &&
        r.startedAt <= at &&
        at <= r.endedAt &&
        stray(gone, r, at),
    )
  const found: Array<string> = []
  for (const ask of observed.asks) {
    if (ask.alreadyAnswered)
      found.push(
        `input once: ${ask.key}/${ask.inputKey} asked again by ${ask.client} at ${ask.at}, its answer already stored`,
      )
  }
  for (let i = 0; i < observed.asks.length; i++) {
    for (let j = i + 1; j < observed.asks.length; j++) {
      const a = observed.asks[i] as Ask
      const b = observed.asks[j] as Ask
      if (a.key !== b.key || a.inputKey !== b.inputKey) continue
      const [first, second] = a.at <= b.at ? [a, b] : [b, a]
      const open = (first.endedAt ?? Number.POSITIVE_INFINITY) > second.at
      const alive = (first.diedAt ?? Number.POSITIVE_INFINITY) > second.at
      if (open && alive)
        found.push(
          `input once: ${a.key}/${a.inputKey} asked by ${second.client} at ${second.at} while ${first.client} was still asking (since ${first.at})`,
        )
    }
  }
  for (const task of ledger.tasks) {
    const accepted = new Map<string, number>()
    for (const update of task.updates) {
      for (const key of update.keys) {
        const at = accepted.get(key)
        if (at !== undefined && !leftBehind(task.taskId, update.at) && !leftBehind(task.taskId, at))
          found.push(
            `input once: ${task.idempotencyKey}/${key} answered again at ${update.at}, the server accepted it at ${at}`,
          )
      }
      for (const key of update.accepted) if (!accepted.has(key)) accepted.set(key, update.at)
    }
  }
  return found
}

/** The earliest a task can end on its own (its working time or its TTL): running before then. */
const earliestEnd = (task: Ledger.Task): number => {
  const tool = Tools.byName(task.tool)
  const duration = typeof tool?.durationMs === "number" ? tool.durationMs : 0
  const ttl = typeof tool?.ttlMs === "number" ? tool.ttlMs : Number.POSITIVE_INFINITY
  return task.createdAt + Math.min(duration, ttl)
}

/**
 * A requested cancel (or abandon) leads to `tasks/cancel` for every task of the key whose id the
 * client knew, unless the server ended the task first: it could have (its working time or TTL
 * was up), or a poll sent before the cancel was requested came back terminal. A poll sent after
 * the request does not excuse it: whoever drove the row chose to poll instead of cancelling.
 * An id the client knew is one on the row or held by a live process: an id whose write failed
 * and whose holder died before writing it again is known to nobody (the row stays in doubt, as
 * `orphans` accepts), so nobody can cancel it. Judged at the end, after the quiet period.
 *
 * @since 0.1.0
 */
export const cancelsSent = (
  ledger: Ledger.Snapshot,
  rows: ReadonlyArray<HandleRecord.HandleRecord>,
  observed: Pick<Observations, "cancels" | "delivered" | "final">,
): Array<string> => {
  if (!observed.final) return []
  const found: Array<string> = []
  const byKey = new Map(rows.map((row) => [row.key, row]))
  for (const request of observed.cancels) {
    const row = byKey.get(request.key)
    for (const task of ledger.tasks) {
      if (task.idempotencyKey !== request.key || task.cancels.length > 0 || task.lostAt !== null) continue
      const known = row?.taskId === task.taskId || heldByLiveClient(observed.delivered, task.taskId)
      if (!known || request.at >= earliestEnd(task)) continue
      const sawEnd = ledger.requests.find(
        (r) => r.method === "tasks/get" && r.taskId === task.taskId && r.at === task.terminalSeenAt,
      )
      if (sawEnd !== undefined && sawEnd.startedAt <= request.at) continue
      // Pushed before the cancel was asked for: the client knew the task had ended.
      if (
        task.terminalSeenBy === "notifications/tasks" &&
        (task.terminalSeenAt ?? Number.POSITIVE_INFINITY) <= request.at
      )
        continue
      found.push(
        `cancel: ${request.how} of ${request.key} at ${request.at}, but task ${short(task.taskId)} (running until ${earliestEnd(task)} at least) never got tasks/cancel (row ${row?.status ?? "missing"})`,
      )
    }
  }
  return found
}

/**
 * What each key's row rested as first, and what each `settle` returned, across checks.
 *
 * @since 0.1.0
 */
export interface TerminalMemory {
  readonly terminal: Map<string, string>
  readonly settles: Map<string, Array<string>>
}

/** @since 0.1.0 */
export const emptyTerminalMemory = (): TerminalMemory => ({ terminal: new Map(), settles: new Map() })

/** The state a rested row must keep. */
const restedAs = (row: HandleRecord.HandleRecord): string =>
  canonical({ status: row.status, taskId: row.taskId, result: row.result, error: row.error })

/**
 * An outcome as compared between `settle` calls and the row.
 *
 * @since 0.1.0
 */
export const outcomeText = (outcome: Outcome.Outcome): string => canonical({ ...outcome })

/**
 * Terminal is final (a rested row never changes), the server decided it, polling stopped there,
 * and every `settle` of the key returned that same state.
 *
 * @since 0.1.0
 */
export const terminalFinal = (
  memory: TerminalMemory,
  ledger: Ledger.Snapshot,
  rows: ReadonlyArray<HandleRecord.HandleRecord>,
  observed: Pick<Observations, "gone"> = { gone: new Map() },
): Array<string> => {
  const found: Array<string> = []
  for (const row of rows) {
    const settled = memory.settles.get(row.key) ?? []
    if (!HandleRecord.isTerminal(row.status)) {
      const was = memory.terminal.get(row.key)
      if (was !== undefined) found.push(`terminal is final: ${row.key} left ${was} for ${row.status}`)
      if (settled.length > 0)
        found.push(`settle agrees: ${row.key} settled as ${settled[0]} but the row is ${row.status}`)
      continue
    }
    const state = restedAs(row)
    const was = memory.terminal.get(row.key)
    if (was === undefined) memory.terminal.set(row.key, state)
    else if (was !== state) found.push(`terminal is final: ${row.key} changed from ${was} to ${state}`)
    const rested = Outcome.fromRecord(row)
    const restedText = rested === undefined ? "" : outcomeText(rested)
    for (const outcome of settled)
      if (outcome !== restedText)
        found.push(`settle agrees: ${row.key} settled as ${outcome}, the row rests as ${restedText}`)
    if (row.taskId !== null && row.status !== "expired" && !isAbandoned(row)) {
      const task = ledger.tasks.find((t) => t.taskId === row.taskId)
      if (task !== undefined && task.lostAt === null && task.terminalStatus !== row.status)
        found.push(
          `only the server decides: ${row.key} is ${row.status} (${row.lastProblem ?? row.error?.message ?? "no reason"}) but the server reported ${task.terminalStatus ?? "no terminal status"}`,
        )
      // A poll a dead process left in the network may arrive after the row rested.
      const strayPoll = (at: number) =>
        ledger.requests.some(
          (r) =>
            r.method === "tasks/get" && r.taskId === row.taskId && r.at === at && stray(observed.gone, r, at),
        )
      const late = (task?.polls ?? []).filter(
        (at) => at > (row.settledAt ?? Number.POSITIVE_INFINITY) && !strayPoll(at),
      )
      if (late.length > 0)
        found.push(
          `polling stops at terminal: ${row.key} polled ${late.length}× after it rested at ${row.settledAt} (at ${late.join(", ")})`,
        )
    }
  }
  return found
}

/**
 * Every violation in this state of the fleet (empty when all hold).
 *
 * @since 0.1.0
 */
export const violations = (
  memory: TerminalMemory,
  ledger: Ledger.Snapshot,
  rows: ReadonlyArray<HandleRecord.HandleRecord>,
  observed: Observations,
): Array<string> => [
  ...orphans(ledger, rows, observed),
  ...doubleLaunches(ledger, rows, observed),
  ...sharedTaskIds(rows),
  ...pollDiscipline(ledger, observed),
  ...inputOnce(ledger, observed),
  ...cancelsSent(ledger, rows, observed),
  ...terminalFinal(memory, ledger, rows, observed),
]
