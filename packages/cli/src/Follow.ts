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
import * as Schedule from "effect/Schedule"
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

/**
 * Settles one call while showing its status. Interrupted (Ctrl-C), it hands the call off: the
 * row stays open for `mcp-handles resume`.
 */
export const follow = (
  session: Session,
  key: string,
): Effect.Effect<Outcome.Outcome, TaskClient.UnknownKey | HandleStore.StoreError> =>
  Effect.gen(function* () {
    const started = Date.now()
    const line = statusLine()
    // Without a terminal, elapsed time would make every sample a new line: leave it out there.
    const render = (record: HandleRecord.HandleRecord) => {
      // A call that already rests gets its outcome line, not a status line.
      if (Outcome.fromRecord(record) !== undefined) return
      line.show(
        `${key}: ${describeRow(session, record)}${isTty() ? ` · ${Render.elapsed(Date.now() - started)}` : ""}`,
      )
    }
    const watch = session.client
      .get(key)
      .pipe(Effect.tap(render), Effect.ignore, Effect.repeat(Schedule.spaced(Duration.millis(200))))
    // The watcher never ends; raceFirst also ends the wait when settling fails.
    return yield* Effect.raceFirst(session.client.settle(key), Effect.zipRight(watch, Effect.never)).pipe(
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
