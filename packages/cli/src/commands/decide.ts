/**
 * The commands that act on one stored call: `cancel`, `reissue` (an in-doubt call, sent again
 * with the same key) and `abandon` (give up an in-doubt call).
 *
 * @since 0.1.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Auth from "../Auth.js"
import { exitCodes, fromKnown } from "../CliError.js"
import * as Common from "../Common.js"
import * as Follow from "../Follow.js"
import * as Input from "../Input.js"
import * as Output from "../Output.js"
import * as Render from "../Render.js"
import * as Row from "../Row.js"
import * as Screen from "../Screen.js"
import * as Spec from "../Spec.js"
import { keyArg } from "./show.js"

const wait = Spec.withDefault(
  Spec.integer("wait", {
    placeholder: "SECONDS",
    description: "how long to keep observing the task after the cancel was sent",
    example: "--wait 30",
    minimum: 0,
  }),
  10,
  "10",
)

/**
 * @since 0.1.0
 * @category commands
 */
export const cancel = Spec.command(
  "cancel",
  {
    summary: "Cancel a call: record the intent, send tasks/cancel, observe until it ends",
    description: [
      "Records the intent to cancel (durably, before anything is sent), sends tasks/cancel, and observes the task for up to --wait seconds: the server decides, and a task that completes anyway is completed. A cancel that could not be sent yet is finished by resume. An in-doubt call is abandoned instead (it has no task to cancel).",
    ],
    examples: [
      { command: "mcp-handles cancel report-3" },
      { command: "mcp-handles cancel report-3 --wait 0 --json" },
    ],
    exitCodes: [
      [0, "the call has ended (cancelled, or it finished first)"],
      [3, "it is still running after --wait: resume keeps following it"],
    ],
  },
  {
    ...Common.common,
    servers: Common.servers,
    ...Auth.options,
    key: keyArg,
    wait,
    json: Common.json,
    reveal: Common.reveal,
  },
  (options) =>
    Effect.gen(function* () {
      const headers = yield* Auth.fromOptions(options)
      const session = yield* Common.open(options, { addServers: options.servers, headers, drives: true })
      const before = yield* session.client.get(options.key).pipe(Effect.mapError(fromKnown))
      session.authorize([before.serverId])
      const print = (record: HandleRecord.HandleRecord, text: string) => {
        if (options.json) Output.json(Output.Cancel, Row.make(record, session.rowContext(options.reveal)))
        else Output.line(text)
      }
      if (HandleRecord.isTerminal(before.status)) {
        print(before, `${before.key}: already ${before.status}; nothing to cancel`)
        return
      }
      const sent = yield* session.client.cancel(options.key).pipe(Effect.mapError(fromKnown))
      // The server decides: a task may still complete after the cancel. Watch it for a while.
      const settled = yield* session.client
        .settle(options.key, undefined, { waitForInput: true })
        .pipe(Effect.mapError(fromKnown), Effect.timeoutOption(Duration.seconds(Math.max(0, options.wait))))
      const now = yield* session.client.get(options.key).pipe(Effect.mapError(fromKnown))
      print(
        now,
        Option.match(settled, {
          onNone: () =>
            `${now.key}: cancel ${sent.cancel?.sent === true ? "sent" : "recorded (not yet sent)"}; the task is still ${now.status}. \`mcp-handles resume\` keeps following it.`,
          onSome: (outcome) => `${now.key}: ${Render.outcomeLine(outcome)}`,
        }),
      )
      if (!HandleRecord.isTerminal(now.status)) yield* Common.exitWith(exitCodes.attention)
    }).pipe(Effect.scoped),
)

const detach = Spec.boolean("detach", {
  description: "return once the call is sent again, without following it",
  example: "--detach",
})

/**
 * @since 0.1.0
 * @category commands
 */
export const reissue = Spec.command(
  "reissue",
  {
    summary: "Send an in-doubt call again, with the same idempotency key",
    description: [
      "An in-doubt call may or may not have launched; the CLI never decides for you. reissue sends it again with the same idempotency key (safe with a server that deduplicates on it) and follows it like call does.",
    ],
    examples: [{ command: "mcp-handles reissue archive-1" }],
    exitCodes: [
      [0, "the call completed"],
      [1, "it failed, was cancelled or expired, or completed with isError"],
      [2, "no such key, or the call is not in doubt"],
      [3, "it is in doubt again, or waits for input nobody here can give"],
    ],
  },
  {
    ...Common.common,
    servers: Common.servers,
    ...Auth.options,
    key: keyArg,
    detach,
    answer: Input.answer,
    push: Common.push,
    json: Common.json,
    reveal: Common.reveal,
  },
  (options) =>
    Effect.gen(function* () {
      const answers = yield* Input.parseAnswers(options.answer)
      const headers = yield* Auth.fromOptions(options)
      const input = Input.make(answers)
      const session = yield* Common.open(options, {
        addServers: options.servers,
        input,
        headers,
        drives: true,
        push: options.push,
      })
      const before = yield* session.client.get(options.key).pipe(Effect.mapError(fromKnown))
      session.authorize([before.serverId])
      const handle = yield* session.client.reissue(options.key).pipe(Effect.mapError(fromKnown))
      Screen.status.print(
        `${handle.key}: sent again with the same key (launch ${handle.record.launches}); ${handle.record.status}`,
      )
      const context = () => session.rowContext(options.reveal)
      if (options.detach) {
        if (options.json)
          Output.json(Output.Reissue, Follow.toOutput(Row.make(handle.record, context()), undefined))
        else Output.line(handle.key)
        return
      }
      const followed = yield* Follow.follow(session, handle.key, input).pipe(Effect.mapError(fromKnown))
      if (options.json) {
        const row = yield* session.client.get(handle.key).pipe(Effect.mapError(fromKnown))
        Output.json(Output.Reissue, Follow.toOutput(Row.make(row, context()), followed))
      } else Output.line(Follow.line(followed))
      yield* Common.exitWith(Follow.exitCode(followed))
    }).pipe(Effect.scoped),
)

/**
 * @since 0.1.0
 * @category commands
 */
export const abandon = Spec.command(
  "abandon",
  {
    summary: "Give up an in-doubt call (it is recorded as cancelled, never re-sent)",
    description: [
      "An in-doubt call may or may not have launched. abandon records the decision to give it up: the call ends cancelled and is never sent again. If its first answer still arrives, the task it names is recorded and cancelled.",
    ],
    examples: [{ command: "mcp-handles abandon archive-2" }],
  },
  { ...Common.common, servers: Common.servers, key: keyArg, json: Common.json, reveal: Common.reveal },
  (options) =>
    Effect.gen(function* () {
      const session = yield* Common.open(options, { addServers: options.servers, drives: true })
      const record = yield* session.client.abandon(options.key).pipe(Effect.mapError(fromKnown))
      if (options.json) Output.json(Output.Abandon, Row.make(record, session.rowContext(options.reveal)))
      else Output.line(`${record.key}: abandoned; now ${record.status}`)
    }).pipe(Effect.scoped),
)
