/**
 * Live events (issue 15, item 3): status changes, status messages and input requests, read from
 * the store and diffed poll by poll, so they come from whichever instance drives a call. Status
 * changes come from the rows' history, so a change between two polls is not lost.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as ClientError from "../ClientError.js"
import * as HandleRecord from "../HandleRecord.js"
import type { HandleStore, StoreError } from "../HandleStore.js"
import { encodeCursor } from "../HandleStoreDriver.js"
import * as ServerRequest from "../ServerRequest.js"
import type { ClientEvent, EventsOptions } from "../TaskClient.js"

/** The client's members built here rather than by the engine. */
export type Members = "events"

const defaultPollMs = 500
/** Rows created this long before the last poll are looked for again (clocks of several writers). */
const createdMarginMs = 5_000
const watched: ReadonlyArray<HandleRecord.Status> = [...HandleRecord.openStatuses, "in_doubt"]

/** What was last reported of one row. */
interface Seen {
  readonly lastEntry: HandleRecord.HistoryEntry | undefined
  readonly message: string | undefined
  readonly progressAt: number | undefined
  readonly inputKeys: ReadonlySet<string>
  /** Requests whose refused answer (this process's handler) was reported. */
  readonly refusedKeys: ReadonlySet<string>
  readonly createdAt: number
  readonly done: boolean
}

interface KeyState {
  readonly seen: Seen | undefined
  readonly first: boolean
}

const sameEntry = (a: HandleRecord.HistoryEntry, b: HandleRecord.HistoryEntry) =>
  a.at === b.at && a.from === b.from && a.to === b.to && a.cause === b.cause && a.instance === b.instance

/** The events that `record` holds beyond `seen` (everything when unseen), and what is seen now. */
const diff = (
  record: HandleRecord.HandleRecord,
  seen: Seen | undefined,
  refused: ReadonlyMap<string, ReadonlyArray<string>>,
): [Array<ClientEvent>, Seen] => {
  const events: Array<ClientEvent> = []
  const { scope, key, history } = record
  const last = seen?.lastEntry
  let from = -1
  if (last !== undefined)
    for (let i = history.length - 1; from === -1 && i >= 0; i--)
      if (sameEntry(history[i] as HandleRecord.HistoryEntry, last)) from = i
  for (const entry of history.slice(from + 1)) {
    if (from === -1 && last !== undefined && entry.at <= last.at) continue
    // A note (the ui's "who did it") keeps the status: not a change to report.
    if (entry.from === entry.to) continue
    events.push({ _tag: "StatusChanged", scope, key, ...entry })
  }
  const message = record.snapshot?.statusMessage
  if (message !== undefined && message !== seen?.message) {
    events.push({ _tag: "StatusMessage", scope, key, status: record.status, message })
  }
  const progress = record.progress
  if (progress !== null && progress.at !== seen?.progressAt) {
    events.push({
      _tag: "Progress",
      scope,
      key,
      progress: progress.progress,
      total: progress.total,
      message: progress.message,
      at: progress.at,
    })
  }
  const inputKeys = new Set(seen?.inputKeys)
  for (const [inputKey, request] of Object.entries(record.inputRequests ?? {})) {
    if (inputKeys.has(inputKey)) continue
    inputKeys.add(inputKey)
    events.push({ _tag: "InputRequested", scope, key, inputKey, request: ServerRequest.decode(request) })
  }
  const refusedKeys = new Set(seen?.refusedKeys)
  for (const [inputKey, problems] of refused) {
    if (refusedKeys.has(inputKey) || record.status !== "input_required") continue
    refusedKeys.add(inputKey)
    events.push({ _tag: "InvalidAnswer", scope, key, inputKey, problems })
  }
  return [
    events,
    {
      lastEntry: history[history.length - 1] ?? last,
      message: message ?? seen?.message,
      progressAt: progress?.at ?? seen?.progressAt,
      inputKeys,
      refusedKeys,
      createdAt: record.createdAt,
      done: HandleRecord.isTerminal(record.status),
    },
  ]
}

export const make = (
  store: HandleStore,
  config: {
    readonly defaultScope: string
    /**
     * Waits for the next write of a row in this process (or the timeout): a call driven here is
     * reported the moment it is written, its last event as its outcome resolves.
     */
    readonly written: (id: string, timeoutMs: number) => Effect.Effect<void>
    /** A row's open requests whose handler here answered with what does not fit, and why. */
    readonly refusedAnswers: (id: string) => ReadonlyMap<string, ReadonlyArray<string>>
  },
) => {
  /**
   * One call's events, from its first status on; ends once the call is terminal. A key with no
   * call yet is waited for: a subscriber may come before `callTool`.
   */
  const ofKey = (
    key: string,
    scope: string,
    pollMs: number,
  ): Stream.Stream<ClientEvent, StoreError | ClientError.UnknownKey> =>
    Stream.paginateEffect({ seen: undefined, first: true } as KeyState, (state) =>
      Effect.gen(function* () {
        if (!state.first) yield* config.written(HandleRecord.rowId(scope, key), pollMs)
        const found = yield* store.get(scope, key)
        if (Option.isNone(found)) {
          // Deleted while watched (gc): the stream ends; a key not written yet is waited for.
          if (state.seen !== undefined) return [[] as Array<ClientEvent>, Option.none<KeyState>()] as const
          return [[] as Array<ClientEvent>, Option.some<KeyState>({ seen: undefined, first: false })] as const
        }
        const [events, seen] = diff(
          found.value,
          state.seen,
          config.refusedAnswers(HandleRecord.rowId(scope, key)),
        )
        return [
          events,
          seen.done ? Option.none<KeyState>() : Option.some<KeyState>({ seen, first: false }),
        ] as const
      }),
    ).pipe(Stream.flattenIterables)

  /** Every call of the scope, from the moment the stream starts; never ends by itself. */
  const ofScope = (scope: string, pollMs: number): Stream.Stream<ClientEvent, StoreError> => {
    const pages = (statuses: ReadonlyArray<HandleRecord.Status> | undefined, cursor: string | undefined) =>
      Effect.gen(function* () {
        const records: Array<HandleRecord.HandleRecord> = []
        for (let next = cursor; ; ) {
          const page = yield* store.list({ scope, statuses, limit: 1000, cursor: next })
          records.push(...page.records)
          if (page.nextCursor === null) return records
          next = page.nextCursor
        }
      })
    const rows = new Map<string, Seen>()
    const poll = (first: boolean, since: number) =>
      Effect.gen(function* () {
        const now = yield* store.now
        const open = yield* pages(watched, undefined)
        // Calls created lately (a margin before the last poll, for writers with other clocks),
        // whatever their status: a call made and settled between two polls is not missed.
        const created = yield* pages(
          undefined,
          encodeCursor({ createdAt: (first ? now : since) - createdMarginMs, key: "" }),
        )
        const events: Array<ClientEvent> = []
        const polled = new Set<string>()
        const look = (record: HandleRecord.HandleRecord) => {
          const id = HandleRecord.rowId(record.scope, record.key)
          if (polled.has(id)) return
          polled.add(id)
          const seen = rows.get(id)
          if (seen?.done) return
          const [found, next] = diff(record, seen, config.refusedAnswers(id))
          // At the start, only where each call is: its later changes are the events.
          if (!first) events.push(...found)
          rows.set(id, next)
        }
        for (const record of [...open, ...created].sort((a, b) => a.createdAt - b.createdAt)) look(record)
        // Calls that left the open statuses since the last poll: their last changes.
        for (const [id, seen] of rows) {
          if (polled.has(id) || seen.done) continue
          const [rowScope, key] = JSON.parse(id) as [string, string]
          const found = yield* store.get(rowScope, key)
          if (Option.isSome(found)) look(found.value)
          else rows.delete(id)
        }
        // Settled calls are kept only while a poll may still list them as newly created.
        for (const [id, seen] of rows) {
          if (seen.done && seen.createdAt < since - 2 * createdMarginMs) rows.delete(id)
        }
        return [events, now] as const
      })
    return Stream.paginateEffect({ first: true, since: 0 }, (state) =>
      Effect.map(
        state.first ? poll(true, 0) : Effect.zipRight(Effect.sleep(pollMs), poll(false, state.since)),
        ([events, now]) => [events, Option.some({ first: false, since: now })] as const,
      ),
    ).pipe(Stream.flattenIterables)
  }

  const events = (key?: string, options: EventsOptions = {}) => {
    const scope = options.scope ?? config.defaultScope
    const pollMs = Math.max(10, options.pollIntervalMs ?? defaultPollMs)
    return key === undefined ? ofScope(scope, pollMs) : ofKey(key, scope, pollMs)
  }

  return { events }
}
