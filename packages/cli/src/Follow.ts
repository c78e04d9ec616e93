/**
 * Waiting for calls to rest, with a live status line on stderr: status, the server's status
 * message, polls sent, time elapsed. On a terminal the line is rewritten in place; otherwise a
 * line is printed each time the status or message changes, so logs stay readable.
 */
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Outcome from "@mcp-handles/core/Outcome"
import type * as TaskClient from "@mcp-handles/core/TaskClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Session } from "./Common.js"
import * as Render from "./Render.js"

const isTty = (): boolean => process.stderr.isTTY === true

export interface StatusLine {
  readonly show: (text: string) => void
  readonly clear: () => void
}

export const statusLine = (): StatusLine => {
  let last = ""
  return {
    show: (text) => {
      if (text === last) return
      last = text
      if (isTty()) process.stderr.write(`\r\x1b[2K${text}`)
      else process.stderr.write(`${text}\n`)
    },
    clear: () => {
      if (isTty() && last !== "") process.stderr.write("\r\x1b[2K")
      last = ""
    },
  }
}

const describeRow = (session: Session, record: HandleRecord.HandleRecord): string => {
  const message = Render.note(record)
  // Without a terminal every change is a new line: leave the poll count to terminals.
  const polls = isTty() ? `polls ${session.counter.polls(record.taskId)}` : undefined
  return [record.status, message === "" ? undefined : JSON.stringify(Render.truncate(message, 60)), polls]
    .filter((part) => part !== undefined)
    .join(" · ")
}

/** The call waits on input nobody here can give (no `--answer`, no terminal). */
export interface WaitingForInput {
  readonly _tag: "WaitingForInput"
  readonly key: string
  readonly inputKeys: ReadonlyArray<string>
}

export type Followed = Outcome.Outcome | WaitingForInput

const unanswered = (record: HandleRecord.HandleRecord): ReadonlyArray<string> =>
  record.status === "input_required" && record.inputRequests !== null
    ? Object.keys(record.inputRequests).filter((k) => !Object.hasOwn(record.answers, k))
    : []

/**
 * Waits until the call rests, or, when this process cannot answer input, until it waits on
 * input (a script must not hang until the task's TTL). `onSample` sees the row as it changes.
 */
export const settle = (
  session: Session,
  key: string,
  canAnswer: boolean,
  onSample: (record: HandleRecord.HandleRecord) => void = () => {},
): Effect.Effect<Followed, TaskClient.UnknownKey | TaskClient.UnknownServer | HandleStore.StoreError> => {
  const sample: Effect.Effect<ReadonlyArray<string>> = session.client.get(key).pipe(
    Effect.tap((record) => Effect.sync(() => onSample(record))),
    Effect.map((record) => (canAnswer ? [] : unanswered(record))),
    Effect.orElseSucceed((): ReadonlyArray<string> => []),
  )
  const watch: Effect.Effect<Followed> = Effect.flatMap(sample, (inputKeys) =>
    inputKeys.length > 0
      ? Effect.succeed({ _tag: "WaitingForInput", key, inputKeys } as const)
      : Effect.zipRight(
          Effect.sleep(Duration.millis(200)),
          Effect.suspend(() => watch),
        ),
  )
  // raceFirst: a failure to settle also ends the wait.
  return Effect.raceFirst(session.client.settle(key), watch)
}

const waitingLine = (waiting: WaitingForInput): string =>
  `${waiting.key}: waiting for input (${waiting.inputKeys.join(", ")}); answer with \`mcp-handles resume --answer JSON\` or run on a terminal`

/**
 * Settles one call while showing its status. Interrupted (Ctrl-C), it hands the call off: the
 * row stays open for `mcp-handles resume`.
 */
export const follow = (
  session: Session,
  key: string,
  canAnswer: boolean,
): Effect.Effect<Followed, TaskClient.UnknownKey | TaskClient.UnknownServer | HandleStore.StoreError> =>
  Effect.suspend(() => {
    const started = Date.now()
    const line = statusLine()
    const render = (record: HandleRecord.HandleRecord) => {
      // A call that already rests gets its outcome line, not a status line.
      if (Outcome.fromRecord(record) !== undefined) return
      // Without a terminal, elapsed time would make every sample a new line: leave it out there.
      line.show(
        `${key}: ${describeRow(session, record)}${isTty() ? ` · ${Render.elapsed(Date.now() - started)}` : ""}`,
      )
    }
    return settle(session, key, canAnswer, render).pipe(
      Effect.ensuring(Effect.sync(line.clear)),
      Effect.onInterrupt(() =>
        Effect.sync(() =>
          process.stderr.write(
            `\n${key}: detached; the call is still open in the store. \`mcp-handles resume\` picks it up.\n`,
          ),
        ),
      ),
    )
  })

export const followedLine = (followed: Followed): string =>
  followed._tag === "WaitingForInput"
    ? waitingLine(followed)
    : `${followed.key}: ${Render.outcomeLine(followed)}`

export const followedJson = (followed: Followed) =>
  followed._tag === "WaitingForInput"
    ? { outcome: followed._tag, key: followed.key, inputKeys: followed.inputKeys }
    : Render.outcomeJson(followed)
