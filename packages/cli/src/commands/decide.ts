/**
 * The commands that act on one stored call: `cancel`, `reissue` (an in-doubt call, sent again
 * with the same key) and `abandon` (give up an in-doubt call).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Outcome from "@mcp-handles/core/Outcome"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { describe } from "../CliError.js"
import * as Common from "../Common.js"
import { follow, followedJson, followedLine } from "../Follow.js"
import * as Input from "../Input.js"
import * as Render from "../Render.js"
import { keyArg } from "./show.js"

const printRow = (record: HandleRecord.HandleRecord, reveal: boolean, json: boolean, text: string) => {
  if (json) console.log(JSON.stringify(Render.recordJson(record, reveal)))
  else console.log(text)
}

const wait = Options.integer("wait").pipe(
  Options.withDescription("seconds to keep observing after the cancel was sent (default 10)"),
  Options.withDefault(10),
)

export const cancel = Command.make(
  "cancel",
  { ...Common.common, servers: Common.servers, key: keyArg, wait, json: Common.json, reveal: Common.reveal },
  (options) =>
    Effect.gen(function* () {
      const session = yield* Common.open(options, { addServers: options.servers })
      const before = yield* session.client.get(options.key).pipe(Effect.mapError(describe))
      if (Outcome.fromRecord(before) !== undefined && before.status !== "in_doubt") {
        printRow(
          before,
          options.reveal,
          options.json,
          `${before.key}: already ${before.status}; nothing to cancel`,
        )
        return
      }
      const sent = yield* session.client.cancel(options.key).pipe(Effect.mapError(describe))
      // The server decides: a task may still complete after the cancel. Watch it for a while.
      const settled = yield* session.client
        .settle(options.key)
        .pipe(Effect.mapError(describe), Effect.timeoutOption(Duration.seconds(Math.max(0, options.wait))))
      const now = yield* session.client.get(options.key).pipe(Effect.mapError(describe))
      const text = Option.match(settled, {
        onNone: () =>
          `${now.key}: cancel ${sent.cancel?.sent === true ? "sent" : "recorded (not yet sent)"}; the task is still ${now.status}. \`mcp-handles resume\` keeps following it.`,
        onSome: (outcome) => `${now.key}: ${Render.outcomeLine(outcome)}`,
      })
      printRow(now, options.reveal, options.json, text)
    }).pipe(Effect.scoped),
).pipe(Command.withDescription("Cancel a call: record the intent, send tasks/cancel, observe until it ends"))

const detach = Options.boolean("detach").pipe(Options.withDescription("return once the call is sent again"))

export const reissue = Command.make(
  "reissue",
  {
    ...Common.common,
    servers: Common.servers,
    key: keyArg,
    detach,
    json: Common.json,
    reveal: Common.reveal,
  },
  (options) =>
    Effect.gen(function* () {
      const onInputRequired = Input.handler(Option.none())
      const session = yield* Common.open(options, {
        addServers: options.servers,
        ...(onInputRequired === undefined ? {} : { onInputRequired }),
      })
      const handle = yield* session.client.reissue(options.key).pipe(Effect.mapError(describe))
      process.stderr.write(
        `${handle.key}: sent again with the same key (launch ${handle.record.launches}); ${handle.record.status}\n`,
      )
      if (options.detach) {
        printRow(handle.record, options.reveal, options.json, handle.key)
        return
      }
      const outcome = yield* follow(session, handle.key, onInputRequired !== undefined).pipe(
        Effect.mapError(describe),
      )
      if (options.json) console.log(JSON.stringify(followedJson(outcome)))
      else console.log(followedLine(outcome))
      yield* Common.exitWith(Render.outcomeExitCode(outcome))
    }).pipe(Effect.scoped),
).pipe(Command.withDescription("Send an in-doubt call again, with the same idempotency key"))

export const abandon = Command.make(
  "abandon",
  { ...Common.common, servers: Common.servers, key: keyArg, json: Common.json, reveal: Common.reveal },
  (options) =>
    Effect.gen(function* () {
      const session = yield* Common.open(options, { addServers: options.servers })
      const record = yield* session.client.abandon(options.key).pipe(Effect.mapError(describe))
      printRow(record, options.reveal, options.json, `${record.key}: abandoned; now ${record.status}`)
    }).pipe(Effect.scoped),
).pipe(Command.withDescription("Give up an in-doubt call (it is recorded as cancelled, never re-sent)"))
