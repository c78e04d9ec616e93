/**
 * Where the library's logs go in the CLI: stderr, one line each, above the status line, so
 * stdout carries nothing but the command's output (`--json` stays parseable).
 *
 * @since 0.2.0
 */
import * as Cause from "effect/Cause"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
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

/** The input keys a library log line is about (its `inputKey` or `inputKeys` annotation). */
const inputKeysOf = (parts: ReadonlyArray<unknown>): ReadonlyArray<string> =>
  parts.flatMap((part) => {
    if (typeof part !== "object" || part === null) return []
    const fields = part as { readonly inputKey?: unknown; readonly inputKeys?: unknown }
    if (typeof fields.inputKey === "string") return [fields.inputKey]
    return Array.isArray(fields.inputKeys) ? fields.inputKeys.filter((k) => typeof k === "string") : []
  })

/**
 * The library's advice names its own API (`answer(key, inputKey, response)`), for code; a shell
 * user does the same with a command, so the CLI names the command instead.
 */
const forShell = (line: string, parts: ReadonlyArray<unknown>): string => {
  const keys = inputKeysOf(parts)
  const flags = (keys.length === 0 ? ["KEY"] : keys).map((key) => `--answer ${key}=JSON`).join(" ")
  return line
    .replaceAll(
      "no onInputRequired handler here answers it",
      "nothing here answers it (no --answer for it, no terminal to ask on)",
    )
    .replaceAll(
      "answer(key, inputKey, response)",
      `\`mcp-handles resume ${flags}\` (or run resume on a terminal)`,
    )
}

/**
 * `mcp-handles: warning: task request failed; the task stays open key="j1" problem="…"`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const logger = (verbose: boolean): Logger.Logger<unknown, void> =>
  Logger.make(({ logLevel, message, cause, annotations }) => {
    // The CLI says what to do about these calls itself, with its commands (see Render.outcomeLine).
    if (Option.isSome(HashMap.get(annotations, "notice"))) return
    const raw: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    const parts = raw.map(text).filter((part) => part !== "")
    const failure = Cause.isEmpty(cause) ? undefined : verbose ? Cause.pretty(cause) : Cause.squash(cause)
    const why =
      failure === undefined
        ? ""
        : typeof failure === "string"
          ? `\n${failure}`
          : ` (${failure instanceof Error ? failure.message : String(failure)})`
    Screen.status.print(
      forShell(
        `mcp-handles: ${levels[logLevel._tag] ?? logLevel.label.toLowerCase()}: ${parts.join(" ")}${why}`,
        raw,
      ),
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
