/**
 * What the CLI tells a user when something goes wrong: one line, and an exit code. Every typed
 * failure of the core, the stores and the wire is translated here, so no stack trace reaches a
 * user who did not ask for one (`--verbose`).
 */
import * as Schema from "effect/Schema"

/** A failure already phrased for the user. */
export class CliError extends Schema.TaggedError<CliError>()("CliError", {
  message: Schema.String,
  /** 1: the operation failed; 2: the input was wrong (usage, arguments, unknown key). */
  exitCode: Schema.Number,
}) {}

export const usage = (message: string): CliError => new CliError({ message, exitCode: 2 })
export const failed = (message: string): CliError => new CliError({ message, exitCode: 1 })

const hasTag = (error: unknown): error is { readonly _tag: string } =>
  typeof error === "object" && error !== null && typeof (error as { _tag?: unknown })._tag === "string"

const messageOf = (error: unknown): string => {
  if (error instanceof Error && error.message !== "") return error.message
  if (typeof error === "object" && error !== null && "message" in error) return String(error.message)
  return String(error)
}

/**
 * The one line for any failure the commands can meet. Unknown failures fall back to their
 * message: still one line, still no stack.
 */
export const describe = (error: unknown): CliError => {
  if (error instanceof CliError) return error
  if (!hasTag(error)) return failed(messageOf(error))
  const e = error as Record<string, unknown> & { readonly _tag: string }
  switch (e._tag) {
    case "UnknownKey":
      return usage(`no call with key ${JSON.stringify(e.key)} in scope ${JSON.stringify(e.scope)}`)
    case "KeyReused":
      return usage(`key ${JSON.stringify(e.key)} is already used: ${String(e.reason)}`)
    case "NotInDoubt":
      return usage(`${String(e.key)} is not in doubt (it is ${String(e.status)}); nothing to decide`)
    case "CannotReissue":
    case "InstanceIdInUse":
      return usage(messageOf(e))
    case "InvalidJson":
      return usage(`invalid ${String(e.what)}: ${String(e.reason)}`)
    case "InvalidServerUrl":
      return usage(`invalid server URL ${String(e.url)}: ${String(e.reason)}`)
    case "UnknownServer":
      return usage(`the server of this call (${String(e.server)}) is not known here; pass --server URL`)
    case "StoreError":
      return failed(`store error during ${String(e.operation)}: ${String(e.message)}`)
    case "OpenError":
      return failed(`cannot open store: ${messageOf(e)}`)
    case "SqlError":
      return failed(`cannot open store: ${sqlMessage(e)}`)
    default:
      return failed(messageOf(e))
  }
}

/** A driver error's own words ("password authentication failed for user x") beat the wrapper's. */
const sqlMessage = (e: Record<string, unknown>): string => {
  const cause = e.cause
  const inner = cause instanceof Error ? cause.message : undefined
  const code = (cause as { code?: unknown } | undefined)?.code
  const base = String(e.message)
  if (inner === undefined || inner === "") return base
  return typeof code === "string" && code !== "" ? `${base}: ${inner} (${code})` : `${base}: ${inner}`
}
