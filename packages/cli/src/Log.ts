/**
 * Where the library's logs go in the CLI: stderr, one line each, above the status line, so
 * stdout carries nothing but the command's output (`--json` stays parseable).
 *
 * @since 0.2.0
 */
import * as Cause from "effect/Cause"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Screen from "./Screen.js"

const text = (value: unknown): string => {
  if (typeof value === "string") return value
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    return Object.entries(value)
      .map(
        ([k, v]) =>
          `${k}=${typeof v === "string" ? JSON.stringify(v) : v instanceof Error ? JSON.stringify(v.message) : JSON.stringify(v)}`,
      )
      .join(" ")
  }
  return JSON.stringify(value) ?? String(value)
}

const levels: Readonly<Partial<Record<LogLevel.LogLevel["_tag"], string>>> = { Warning: "warning" }

/**
 * `mcp-handles: warning: task request failed; the task stays open key="j1" problem="…"`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const logger = (verbose: boolean): Logger.Logger<unknown, void> =>
  Logger.make(({ logLevel, message, cause }) => {
    const parts = (Array.isArray(message) ? message : [message]).map(text).filter((part) => part !== "")
    const failure = Cause.isEmpty(cause) ? undefined : verbose ? Cause.pretty(cause) : Cause.squash(cause)
    const why =
      failure === undefined
        ? ""
        : typeof failure === "string"
          ? `\n${failure}`
          : ` (${failure instanceof Error ? failure.message : String(failure)})`
    Screen.status.print(
      `mcp-handles: ${levels[logLevel._tag] ?? logLevel.label.toLowerCase()}: ${parts.join(" ")}${why}`,
    )
  })

/**
 * This logger alone (whatever the runtime installed, such as a pretty logger writing to stdout,
 * is removed), at info and up, debug too with \`--verbose\`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (verbose: boolean): Layer.Layer<never> =>
  Layer.merge(
    Layer.locallyScoped(FiberRef.currentLoggers, HashSet.make(logger(verbose))),
    Logger.minimumLogLevel(verbose ? LogLevel.Debug : LogLevel.Info),
  )
