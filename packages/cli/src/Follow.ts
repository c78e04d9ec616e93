/**
 * Following calls until they rest, with the live status line on stderr: status, the server's
 * status message, polls sent, time elapsed. On a terminal the line is rewritten in place (and a
 * prompt pauses it); otherwise a line is printed each time the status or message changes, so
 * logs stay readable.
 *
 * @since 0.1.0
 */
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Outcome from "@mcp-handles/core/Outcome"
import * as ServerRequest from "@mcp-handles/core/ServerRequest"
import type * as TaskClient from "@mcp-handles/core/TaskClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { exitCodes } from "./CliError.js"
import type { Session } from "./Common.js"
import * as Input from "./Input.js"
import type * as Output from "./Output.js"
import * as Render from "./Render.js"
import * as Screen from "./Screen.js"

/**
 * The call waits on input nobody here can give (no `--answer` for its key, no terminal).
 *
 * @since 0.1.0
 * @category models
 */
export interface WaitingForInput {
  readonly _tag: "WaitingForInput"
  readonly key: string
  readonly inputKeys: ReadonlyArray<string>
  /** For each of `inputKeys`, the `--answer` that answers it, with an answer of the shape it expects. */
  readonly answerFlags: ReadonlyArray<string>
}

/**
 * Why following a call ended: it rests (an outcome), or it waits on input.
 *
 * @since 0.1.0
 * @category models
 */
export type Followed = Outcome.Outcome | WaitingForInput

const unanswered = (record: HandleRecord.HandleRecord): ReadonlyArray<string> =>
  record.status === "input_required" && record.inputRequests !== null
    ? Object.keys(record.inputRequests).filter((k) => !Object.hasOwn(record.answers, k))
    : []

const describeRow = (session: Session, record: HandleRecord.HandleRecord): string => {
  const message = Render.note(record)
  // Without a terminal every change is a new line: leave the poll count to terminals, and keep
  // the whole message, as a log line must not lose the cause (a terminal's line is cut to fit).
  const live = Screen.liveStderr()
  const polls = live ? `polls ${session.counter.polls(record.taskId)}` : undefined
  // Cut after redacting: an id cut short would no longer be recognised, and would show almost whole.
  const shown = live ? Render.truncate(Render.known.text(message), 60) : message
  return [
    record.status,
    Render.progress(record, live),
    message === "" ? undefined : JSON.stringify(shown),
    polls,
  ]
    .filter((part) => part !== undefined)
    .join(" · ")
}

/**
 * Waits until the call rests, or until it waits on input this process cannot answer (a script
 * must not hang until the task's TTL). `onSample` sees the row as it changes.
 *
 * @since 0.1.0
 */
export const settle = (
  session: Session,
  key: string,
  input: Input.Input,
  onSample: (record: HandleRecord.HandleRecord) => void = () => {},
): Effect.Effect<Followed, TaskClient.SettleError> => {
  const sample: Effect.Effect<WaitingForInput | undefined> = session.client.get(key).pipe(
    Effect.tap((record) => Effect.sync(() => onSample(record))),
    Effect.map((record): WaitingForInput | undefined => {
      const inputKeys = unanswered(record).filter((inputKey) => !input.canAnswer(inputKey))
      if (inputKeys.length === 0) return undefined
      const requestOf = (inputKey: string) => {
        const raw = record.inputRequests?.[inputKey]
        return raw === undefined ? undefined : ServerRequest.decode(raw)
      }
      const answerFlags = inputKeys.map((inputKey) => Input.answerFlag(inputKey, requestOf(inputKey)))
      return { _tag: "WaitingForInput", key, inputKeys, answerFlags }
    }),
    Effect.orElseSucceed(() => undefined),
  )
  const watch: Effect.Effect<Followed> = Effect.flatMap(sample, (waiting) =>
    waiting !== undefined
      ? Effect.succeed(waiting)
      : Effect.zipRight(
          Effect.sleep(Duration.millis(200)),
          Effect.suspend(() => watch),
        ),
  )
  // raceFirst: a failure to settle also ends the wait.
  // The watch above stops for input nobody here answers; settle itself waits for any other.
  return Effect.raceFirst(session.client.settle(key, undefined, { waitForInput: true }), watch)
}

/**
 * The status line's text for a call.
 *
 * @since 0.2.0
 */
export const statusText = (
  session: Session,
  key: string,
  record: HandleRecord.HandleRecord,
  started: number,
) =>
  // Without a terminal, elapsed time would make every sample a new line: leave it out there.
  `${key}: ${describeRow(session, record)}${Screen.liveStderr() ? ` · ${Render.elapsed(Date.now() - started)}` : ""}`

/**
 * Settles one call while showing its status. Interrupted (Ctrl-C), it hands the call off: the
 * row stays open for `mcp-handles resume`.
 *
 * @since 0.1.0
 */
export const follow = (
  session: Session,
  key: string,
  input: Input.Input,
): Effect.Effect<Followed, TaskClient.SettleError> =>
  Effect.suspend(() => {
    const started = Date.now()
    const render = (record: HandleRecord.HandleRecord) => {
      // A call that already rests gets its outcome line, not a status line.
      if (Outcome.fromRecord(record) !== undefined) return
      Screen.status.show(statusText(session, key, record, started))
    }
    return settle(session, key, input, render).pipe(
      Effect.ensuring(Effect.sync(Screen.status.clear)),
      Effect.onInterrupt(() =>
        Effect.sync(() =>
          process.stderr.write(
            `\n${key}: detached; the call is still open in the store. \`mcp-handles resume\` picks it up.\n`,
          ),
        ),
      ),
    )
  })

/**
 * One line for how following ended, e.g. `j1: completed: done 1`.
 *
 * @since 0.1.0
 */
export const line = (followed: Followed): string =>
  followed._tag === "WaitingForInput"
    ? `${followed.key}: waiting for input (${followed.inputKeys.join(", ")}); answer with \`mcp-handles resume ${followed.answerFlags.join(" ")}\` (edit the values) or run resume on a terminal`
    : `${followed.key}: ${Render.outcomeLine(followed)}`

/**
 * A followed call as `--json` prints it: its row, and how following ended (`null`: not
 * followed).
 *
 * @since 0.2.0
 */
export const toOutput = (row: Output.Row, followed: Followed | undefined): Output.Followed => ({
  ...row,
  outcome: followed === undefined ? null : followed._tag,
  waitingFor: followed?._tag === "WaitingForInput" ? followed.inputKeys : [],
})

/**
 * The exit status of a followed call: 0 only for a result the tool did not flag as an error;
 * 3 when it does not rest yet (in doubt, or waiting for input); 1 otherwise.
 *
 * @since 0.2.0
 */
export const exitCode = (followed: Followed): number => {
  switch (followed._tag) {
    case "Completed":
      return followed.result.isError === true ? exitCodes.failed : exitCodes.ok
    case "InDoubt":
    case "WaitingForInput":
      return exitCodes.attention
    default:
      return exitCodes.failed
  }
}
