/**
 * What the CLI tells a user when something goes wrong: one line, and an exit code. The typed
 * failures of the client, the stores and the identity rules are translated in one place,
 * `fromKnown`, one case per error class; the compiler checks that every class of the union has
 * its case. No stack trace reaches a user who did not ask for one (`--verbose`).
 *
 * @since 0.1.0
 */
import type * as ClientError from "@mcp-handles/core/ClientError"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import type * as Json from "@mcp-handles/core/Json"
import type * as ServerIdentity from "@mcp-handles/core/ServerIdentity"
import type * as Wire from "@mcp-handles/core/Wire"
import type { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Match from "effect/Match"
import * as Schema from "effect/Schema"

/**
 * The exit statuses, as docs/cli.md documents them.
 *
 * @since 0.2.0
 * @category constants
 */
export const exitCodes = {
  /** Done; a followed call completed without a tool error. */
  ok: 0,
  /** The operation failed, or a followed call ended failed, cancelled, expired or with `isError`. */
  failed: 1,
  /** Bad input: usage, an unknown option, bad `--args`, an unknown key, a key reused. */
  usage: 2,
  /** A call does not rest yet and needs someone: in doubt, waiting for input, skipped. */
  attention: 3,
  /** Interrupted (Ctrl-C): open calls were handed off, never cancelled. */
  interrupted: 130,
} as const

/**
 * A failure already phrased for the user.
 *
 * @since 0.1.0
 * @category errors
 */
export class CliError extends Schema.TaggedError<CliError>()("CliError", {
  message: Schema.String,
  exitCode: Schema.Number,
}) {}

/**
 * Bad input (exit 2).
 *
 * @since 0.1.0
 * @category constructors
 */
export const usage = (message: string): CliError => new CliError({ message, exitCode: exitCodes.usage })

/**
 * The operation failed (exit 1).
 *
 * @since 0.1.0
 * @category constructors
 */
export const failed = (message: string): CliError => new CliError({ message, exitCode: exitCodes.failed })

/**
 * Every typed failure a command can meet from the client and the stores it opens.
 *
 * @since 0.2.0
 * @category models
 */
export type Known =
  | ClientError.UnknownKey
  | ClientError.UnknownServer
  | ClientError.KeyReused
  | ClientError.InvalidKey
  | ClientError.NotInDoubt
  | ClientError.CannotReissue
  | ClientError.InputRequired
  | ClientError.InvalidAnswer
  | ClientError.CannotAnswer
  | HandleStore.StoreError
  | HandleStore.InstanceIdInUse
  | Json.InvalidJson
  | ServerIdentity.InvalidServerUrl
  | Wire.InvalidToolDefinition
  | SqliteStore.OpenError
  | CliError

/**
 * The one line for each known failure.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromKnown: (error: Known) => CliError = Match.type<Known>().pipe(
  Match.tagsExhaustive({
    CliError: (e) => e,
    UnknownKey: (e) => usage(`no call with key ${JSON.stringify(e.key)} in scope ${JSON.stringify(e.scope)}`),
    KeyReused: (e) => usage(`key ${JSON.stringify(e.key)} is already used: ${e.reason}`),
    InvalidKey: (e) => usage(`invalid ${e.what}: ${e.reason}`),
    NotInDoubt: (e) => usage(`${e.key} is not in doubt (it is ${e.status}); nothing to decide`),
    CannotReissue: (e) => usage(e.message),
    InvalidAnswer: (e) => usage(e.message),
    CannotAnswer: (e) => usage(e.message),
    // The call goes on; it needs someone to answer it.
    // The library's message names its `answer(...)`, for code; a shell user answers with resume.
    InputRequired: (e) => {
      const refused = e.requests.flatMap((r) =>
        r.problems === undefined ? [] : [`${r.inputKey}: ${r.problems.join("; ")}`],
      )
      const flags = e.requests.map((r) => `--answer ${r.inputKey}=JSON`).join(" ")
      return new CliError({
        message: `${e.key} waits for input (${e.requests.map((r) => r.inputKey).join(", ")})${
          refused.length === 0 ? "" : `: the answer given does not fit (${refused.join("; ")})`
        }; answer with \`mcp-handles resume ${flags}\` or run resume on a terminal`,
        exitCode: exitCodes.attention,
      })
    },
    // Most often an application running under the default id: the CLI must not drive its calls
    // beside it, but may act under an id of its own.
    InstanceIdInUse: (e) =>
      usage(
        `instance id ${JSON.stringify(e.instanceId)} is held by ${e.holder}, a live client driving its calls; pass --instance NAME (an id no live process uses) to act beside it, or wait until it stops`,
      ),
    InvalidJson: (e) => usage(`invalid ${e.what}: ${e.reason}`),
    InvalidServerUrl: (e) => usage(`invalid server URL ${e.url}: ${e.reason}`),
    // The server's mistake, not the user's: nothing was recorded or sent.
    InvalidToolDefinition: (e) => failed(`${e.message}; it was not called`),
    // The identity's name part is what `--server NAME=URL` and `servers --set` take.
    UnknownServer: (e) => {
      const name = e.server.replace(/:[0-9a-f]{16}$/, "")
      return usage(
        `the store knows no URL for the server of this call (${name}); add it with mcp-handles servers --set ${name}=URL, or pass --server ${name}=URL`,
      )
    },
    StoreError: (e) =>
      // A refusal raised inside a store decorator of the CLI's own (`Common.refuseSealed`).
      e.cause instanceof CliError ? e.cause : failed(`store error during ${e.operation}: ${e.message}`),
    OpenError: (e) => failed(`cannot open store ${e.location}: ${e.problem ?? e.message}`),
  }),
)
