/**
 * `mcp-handles call <server-url> <tool>`: a durable call. The intent is on disk before the
 * request leaves and the task id the moment it arrives; then (unless `--detach`) it follows the
 * call to its outcome.
 */
import { readFileSync } from "node:fs"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import type * as Wire from "@mcp-handles/core/Wire"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type CliError, describe, failed, usage } from "../CliError.js"
import * as Common from "../Common.js"
import { follow, followedJson, followedLine } from "../Follow.js"
import * as Input from "../Input.js"
import * as Render from "../Render.js"
import * as ServerRegistry from "../ServerRegistry.js"

const serverUrl = Args.text({ name: "server-url" }).pipe(Args.withDescription("the MCP server's URL"))
const tool = Args.text({ name: "tool" }).pipe(Args.withDescription("the tool to call"))
const args = Options.text("args").pipe(
  Options.withDescription("the arguments: a JSON object, or @FILE to read it from a file"),
  Options.withDefault("{}"),
)
const key = Options.text("key").pipe(
  Options.withDescription("the idempotency key (default: a new UUID); calling again with it attaches"),
  Options.optional,
)
const detach = Options.boolean("detach").pipe(
  Options.withDescription("return once the call is recorded; `mcp-handles resume` follows it later"),
)
const answer = Options.text("answer").pipe(
  Options.withDescription("the JSON response to give to input requests (e.g. elicitation)"),
  Options.optional,
)

export const parseArguments = (raw: string): Effect.Effect<unknown, CliError> =>
  Effect.gen(function* () {
    let text = raw
    if (raw.startsWith("@")) {
      const file = raw.slice(1)
      text = yield* Effect.try({
        try: () => readFileSync(file, "utf8"),
        catch: (error) => usage(`--args: cannot read ${file}: ${(error as Error).message}`),
      })
    }
    const parsed = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (error) => usage(`--args: not JSON (${(error as Error).message})`),
    })
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return yield* usage('--args: must be a JSON object, like \'{"topic":"tides"}\'')
    }
    return parsed
  })

/**
 * Asks the server who it is before anything is written: an unreachable URL, or one that does
 * not speak MCP, is reported as such instead of leaving a row that can never progress.
 */
export const preflight = (
  wire: Wire.Wire,
  server: ServerRegistry.KnownServer,
): Effect.Effect<void, CliError> =>
  wire.discover({ name: server.name, url: server.url }).pipe(
    Effect.asVoid,
    Effect.catchAll((error) => {
      switch (error._tag) {
        case "NotSent":
          return Effect.fail(failed(`cannot reach ${server.url}: ${error.reason}`))
        case "NoAnswer":
          return Effect.fail(
            failed(`${server.url} did not answer server/discover (${error.reason}); is it an MCP server?`),
          )
        case "Unauthorized":
          return Effect.fail(
            failed(`${server.url} refused the request (HTTP ${error.status}): check credentials`),
          )
        case "ServerBusy":
          return Effect.fail(failed(`${server.url} is busy (HTTP ${error.status}); try again later`))
        case "MalformedAnswer":
          return Effect.fail(failed(`${server.url} does not look like an MCP server: ${error.reason}`))
        case "RpcErrorAnswer":
          return Effect.fail(
            failed(
              `${server.url} does not speak the MCP 2026-07-28 protocol: server/discover answered ${error.error.code} ${error.error.message}`,
            ),
          )
      }
    }),
  )

export const command = Command.make(
  "call",
  { ...Common.common, json: Common.json, reveal: Common.reveal, serverUrl, tool, args, key, detach, answer },
  (options) =>
    Effect.gen(function* () {
      const callArgs = yield* parseArguments(options.args)
      const answerValue = yield* Input.parseAnswer(options.answer)
      const server = yield* ServerRegistry.endpointFor(options.serverUrl)
      const onInputRequired = Input.handler(answerValue)
      // Before the store is opened: a server that cannot take the call leaves nothing behind.
      yield* preflight(yield* HttpWire.make(), server)
      const session = yield* Common.open(options, {
        addServers: [server.url],
        ...(onInputRequired === undefined ? {} : { onInputRequired }),
      })
      const handle = yield* session.client
        .callTool(
          server.name,
          options.tool,
          callArgs,
          Option.match(options.key, { onNone: () => ({}), onSome: (k) => ({ key: k }) }),
        )
        .pipe(Effect.mapError(describe))
      const record = handle.record
      const verb = handle.launched ? "recorded" : "attached to the existing call"
      process.stderr.write(
        `${handle.key}: ${verb}; ${record.status}${record.taskId === null ? "" : `, task ${Render.taskId(record.taskId, options.reveal)}`}\n`,
      )
      if (options.detach) {
        if (options.json) console.log(JSON.stringify(Render.recordJson(record, options.reveal, server.name)))
        else console.log(handle.key)
        return
      }
      const outcome = yield* follow(session, handle.key, onInputRequired !== undefined).pipe(
        Effect.mapError(describe),
      )
      if (options.json) {
        const row = yield* session.client.get(handle.key).pipe(Effect.mapError(describe))
        console.log(
          JSON.stringify({
            ...followedJson(outcome),
            taskId: row.taskId === null ? null : Render.taskId(row.taskId, options.reveal),
          }),
        )
      } else console.log(followedLine(outcome))
      yield* Common.exitWith(Render.outcomeExitCode(outcome))
    }).pipe(Effect.scoped),
).pipe(Command.withDescription("Call a tool durably and follow it to its outcome"))
