/**
 * `mcp-handles call <server-url> <tool>`: a durable call. The intent is on disk before the
 * request leaves and the task id the moment it arrives; then (unless `--detach`) it follows the
 * call to its outcome.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Json from "@mcp-handles/core/Json"
import type * as Wire from "@mcp-handles/core/Wire"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Auth from "../Auth.js"
import { type CliError, failed, fromKnown, usage } from "../CliError.js"
import * as Common from "../Common.js"
import * as Follow from "../Follow.js"
import * as Input from "../Input.js"
import * as Output from "../Output.js"
import * as Render from "../Render.js"
import * as Row from "../Row.js"
import * as Screen from "../Screen.js"
import * as ServerRegistry from "../ServerRegistry.js"
import * as Spec from "../Spec.js"

const serverUrl = Spec.arg("server-url", {
  description:
    "the MCP server's URL, or NAME=URL to record it under a name of yours; credentials go in --header or --header-env, never in the URL",
  example: "http://127.0.0.1:3000/mcp",
})
const tool = Spec.arg("tool", {
  description: "the tool to call (mcp-handles tools SERVER lists them)",
  example: "slow_compute",
})
const args = Spec.withDefault(
  Spec.text("args", {
    placeholder: "JSON|@FILE",
    description: "the arguments: a JSON object, or @FILE to read it from a file",
    example: `--args '{"seconds":2,"label":"tides"}'`,
  }),
  "{}",
  "{}",
)
const key = Spec.optional(
  Spec.text("key", {
    placeholder: "KEY",
    description:
      "the idempotency key (default: a new UUID); calling again with the same key attaches to the call instead of launching it again",
    example: "--key report-1",
  }),
)
const maxArgsBytes = Spec.withDefault(
  Spec.integer("max-args-bytes", {
    placeholder: "BYTES",
    description:
      "the largest --args accepted, in bytes of JSON; a server may still refuse what it finds too large",
    example: "--max-args-bytes 8388608",
    minimum: 1,
  }),
  Json.defaults.argumentLimits.maxBytes,
  `${Json.defaults.argumentLimits.maxBytes} (1 MiB)`,
)
const detach = Spec.boolean("detach", {
  description: "return once the call is recorded; `mcp-handles resume` follows it later",
  example: "--detach",
})

/**
 * `--args`: a JSON object, inline or from a file.
 *
 * @since 0.1.0
 */
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
 * One line for a request a server did not answer usefully, saying what to check.
 *
 * @since 0.4.0
 */
export const wireFailure = (
  server: Wire.ServerEndpoint,
  method: string,
): ((error: Wire.WireError) => CliError) =>
  Match.type<Wire.WireError>().pipe(
    Match.tagsExhaustive({
      NotSent: (e) => failed(`cannot reach ${server.url}: ${e.reason}`),
      NoAnswer: (e) => failed(`${server.url} did not answer ${method} (${e.reason}); is it an MCP server?`),
      Unauthorized: (e) =>
        failed(
          `${server.url} refused the request (HTTP ${e.status}): check the credentials (--header, --header-env)`,
        ),
      ServerBusy: (e) => failed(`${server.url} is busy (HTTP ${e.status}); try again later`),
      MalformedAnswer: (e) => failed(`${server.url} does not look like an MCP server: ${e.reason}`),
      RpcErrorAnswer: (e) =>
        failed(
          method === "server/discover"
            ? `${server.url} does not speak the MCP 2026-07-28 protocol: server/discover answered ${e.error.code} ${e.error.message}`
            : `${server.url} answered ${method} with ${e.error.code} ${e.error.message}`,
        ),
      UnsupportedVersion: (e) =>
        failed(
          `${server.url} speaks no protocol version this client does (it supports ${e.supported.join(", ") || "none"})`,
        ),
    }),
  )

/**
 * Asks the server who it is before anything is written: an unreachable URL, or one that does
 * not speak MCP, is reported as such instead of leaving a row that can never progress.
 *
 * @since 0.1.0
 */
export const preflight = (wire: Wire.Wire, server: Wire.ServerEndpoint): Effect.Effect<void, CliError> =>
  wire.discover(server).pipe(Effect.asVoid, Effect.mapError(wireFailure(server, "server/discover")))

/**
 * @since 0.1.0
 * @category commands
 */
export const spec = Spec.command(
  "call",
  {
    summary: "Call a tool durably and follow it to its outcome",
    description: [
      "Asks the server who it is first (nothing is written for a server that cannot take the call), writes the intent to the store before tools/call leaves, and the task id the moment it arrives. Then it follows the call with a live status line on stderr and prints the outcome on stdout.",
      "Input requests are answered with --answer KEY=JSON, or by a prompt on a terminal; with neither, call stops following a call that waits on input (exit 3) instead of hanging. Ctrl-C detaches (exit 130): the call stays open for resume, it is never cancelled. This is the only command that creates a store.",
    ],
    examples: [
      {
        command: `mcp-handles call http://127.0.0.1:3000/mcp slow_compute --args '{"seconds":2}' --key report-1`,
      },
      {
        command:
          "mcp-handles call https://mcp.example.com/mcp slow_compute --header-env 'Authorization=MCP_TOKEN' --detach",
        note: "authenticated, returns once recorded",
      },
    ],
    exitCodes: [
      [0, "the call completed"],
      [
        1,
        "it failed, was cancelled or expired, or completed with isError; or the server could not be reached",
      ],
      [2, "bad input: --args, --answer, the URL, a key reused for another call"],
      [3, "it is in doubt, or waits for input nobody here can give"],
    ],
  },
  {
    ...Common.common,
    json: Common.json,
    reveal: Common.reveal,
    ...Auth.options,
    serverUrl,
    tool,
    args,
    key,
    maxArgsBytes,
    detach,
    answer: Input.answer,
    push: Common.push,
  },
  (options) =>
    Effect.gen(function* () {
      const callKey = Option.getOrElse(options.key, () => randomUUID())
      // At once, on a terminal: discovery and the call itself can take a while. (Off a terminal
      // the "recorded" line follows soon enough, and a failure stays one line.)
      if (Screen.liveStderr()) Screen.status.show(`${callKey}: sending…`)
      const callArgs = yield* parseArguments(options.args)
      const answers = yield* Input.parseAnswers(options.answer)
      const headers = yield* Auth.fromOptions(options)
      const server = yield* ServerRegistry.endpointFor(options.serverUrl)
      const input = Input.make(answers)
      // Before the store is opened: a server that cannot take the call leaves nothing behind.
      yield* preflight(yield* HttpWire.make(), { name: server.name, url: server.url, headers: () => headers })
      const session = yield* Common.open(options, {
        mode: "create",
        // As given: NAME=URL records the server under that name.
        addServers: [options.serverUrl],
        input,
        headers,
        drives: true,
        push: options.push,
        maxArgsBytes: options.maxArgsBytes,
      })
      session.authorize([server.id])
      // A direct answer can take a while: the progress its server reports is shown meanwhile (a
      // bar on a terminal, a whole line at each change elsewhere).
      const sending = yield* Effect.fork(
        session.client.get(callKey).pipe(
          Effect.tap((row) =>
            Effect.sync(() => {
              const progress = Render.progress(row, Screen.liveStderr())
              if (progress !== undefined) Screen.status.show(`${callKey}: sending… · ${progress}`)
            }),
          ),
          Effect.ignore,
          Effect.zipLeft(Effect.sleep(Duration.millis(200))),
          Effect.forever,
        ),
      )
      const handle = yield* session.client
        .callTool(server.name, options.tool, callArgs, { key: callKey })
        .pipe(
          Effect.ensuring(Fiber.interrupt(sending)),
          Effect.mapError((error) =>
            // Too large: say how to send it anyway.
            error._tag === "InvalidJson" &&
            error.what === "arguments" &&
            /exceeds the limit/.test(error.reason)
              ? usage(`--args: ${error.reason} (raise it with --max-args-bytes)`)
              : fromKnown(error),
          ),
        )
      const record = handle.record
      const verb = handle.launched ? "recorded" : "attached to the existing call"
      Screen.status.clear()
      Screen.status.print(
        `${handle.key}: ${verb}; ${record.status}${record.taskId === null ? "" : `, task ${Render.taskId(record.taskId, options.reveal)}`}`,
      )
      if (options.detach) {
        if (options.json) {
          Output.json(
            Output.Call,
            Follow.toOutput(Row.make(record, session.rowContext(options.reveal)), undefined),
          )
        } else Output.line(handle.key)
        return
      }
      const followed = yield* Follow.follow(session, handle.key, input).pipe(Effect.mapError(fromKnown))
      if (options.json) {
        const row = yield* session.client.get(handle.key).pipe(Effect.mapError(fromKnown))
        Output.json(Output.Call, Follow.toOutput(Row.make(row, session.rowContext(options.reveal)), followed))
      } else Output.line(Follow.line(followed))
      yield* Common.exitWith(Follow.exitCode(followed))
    }).pipe(Effect.ensuring(Effect.sync(Screen.status.clear)), Effect.scoped),
)
