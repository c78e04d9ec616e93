/**
 * How rows, outcomes and tables look as text. Task ids are bearer credentials: every view here
 * redacts them unless the user passed `--reveal`, and so does everything the CLI writes
 * (`guard`): the task ids this process met (`known`, fed by the store it opened) are shortened
 * in every line on stdout and stderr, whichever command, printer or log wrote it.
 *
 * @since 0.1.0
 */
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as Outcome from "@mcp-handles/core/Outcome"
import * as Redaction from "@mcp-handles/core/Redaction"
import * as Troubleshooting from "./Troubleshooting.js"

/**
 * The core's rule: enough to tell two ids apart, never enough to use one.
 *
 * @since 0.1.0
 * @category rendering
 */
export const redact = Redaction.taskId

/**
 * The task ids this process met: every record of the store it opened (see `Common.open`), every
 * row it showed.
 *
 * @since 0.4.0
 * @category redacting
 */
export const known: Redaction.Known = Redaction.make()

const guarded = new WeakSet<NodeJS.WriteStream>()

/**
 * Makes every string written to `stream` go through `known` first, unless `reveal`: the one
 * place all the CLI's output passes, so no printer, log line or error message can forget it.
 *
 * @since 0.4.0
 * @category redacting
 */
export const guard = (stream: NodeJS.WriteStream, reveal: boolean): void => {
  if (reveal || guarded.has(stream)) return
  guarded.add(stream)
  const write = stream.write.bind(stream) as (...args: ReadonlyArray<unknown>) => boolean
  stream.write = ((chunk: unknown, ...rest: ReadonlyArray<unknown>) =>
    write(typeof chunk === "string" ? known.text(chunk) : chunk, ...rest)) as typeof stream.write
}

/**
 * `text` as shown: its task ids shortened (those `known` holds, legacy adopted keys), unless
 * `reveal`. Text cut short (`truncate`) is cut after this, never before: a cut id would no
 * longer be recognised, and would show all but its last characters.
 *
 * @since 0.7.0
 * @category redacting
 */
export const shown = (text: string, reveal: boolean): string => (reveal ? text : known.text(text))

/**
 * @since 0.1.0
 * @category rendering
 */
export const taskId = (id: string | null, reveal: boolean): string => {
  if (id === null) return "-"
  known.add(id)
  return reveal ? id : redact(id)
}

/**
 * Columns padded to their widest cell; the last column is never padded.
 *
 * @since 0.1.0
 * @category rendering
 */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

/**
 * "4s", "3m", "2h", "5d": how long ago, for a table.
 *
 * @since 0.1.0
 * @category rendering
 */
export const age = (then: number, now: number): string => {
  const s = Math.max(0, Math.round((now - then) / 1000))
  if (s < 120) return `${s}s`
  if (s < 7200) return `${Math.round(s / 60)}m`
  if (s < 172_800) return `${Math.round(s / 3600)}h`
  return `${Math.round(s / 86_400)}d`
}

/**
 * @since 0.1.0
 * @category rendering
 */
export const elapsed = (ms: number): string => `${(ms / 1000).toFixed(1)}s`

/**
 * @since 0.1.0
 * @category rendering
 */
export const truncate = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`

/**
 * What a row's last word is: the server's status message, or the last problem we met.
 *
 * @since 0.1.0
 * @category rendering
 */
export const note = (record: HandleRecord.HandleRecord): string =>
  record.status === "input_required" && record.inputRequests !== null
    ? `waiting for input: ${Object.keys(record.inputRequests).join(", ")}`
    : (record.lastProblem ?? record.snapshot?.statusMessage ?? record.error?.message ?? "")

/**
 * How far a call's work is, when the server said: a bar on a terminal (`[####------] 40%`), the
 * whole figures elsewhere (`progress 40/100`), the server's progress message after either.
 *
 * @since 0.4.0
 * @category rendering
 */
export const progress = (record: HandleRecord.HandleRecord, bar: boolean): string | undefined => {
  const p = record.progress
  if (p === null) return undefined
  const message = p.message === undefined ? "" : ` ${p.message}`
  if (p.total === undefined || p.total <= 0) return `progress ${p.progress}${message}`
  if (!bar) return `progress ${p.progress}/${p.total}${message}`
  const ratio = Math.min(1, Math.max(0, p.progress / p.total))
  const filled = Math.round(ratio * 20)
  return `[${"#".repeat(filled)}${"-".repeat(20 - filled)}] ${Math.round(ratio * 100)}%${message}`
}

/**
 * A row's status as people read it: a completed call whose tool reported an error says so.
 *
 * @since 0.4.0
 * @category rendering
 */
export const status = (record: HandleRecord.HandleRecord): string =>
  record.status === "completed" && record.result?.isError === true ? "completed (tool error)" : record.status

/**
 * The text blocks of a tool result, or its JSON when it has none.
 *
 * @since 0.1.0
 * @category rendering
 */
export const resultText = (result: Readonly<Record<string, unknown>>): string => {
  const content = result.content
  if (Array.isArray(content)) {
    const texts = content
      .filter((c): c is { type: "text"; text: string } => c?.type === "text" && typeof c.text === "string")
      .map((c) => c.text)
    if (texts.length > 0) return texts.join("\n")
  }
  return JSON.stringify(result.structuredContent ?? result)
}

/**
 * One line per outcome, e.g. `completed: chapter 1 written`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const outcomeLine = (outcome: Outcome.Outcome): string => {
  switch (outcome._tag) {
    case "Completed":
      return `${outcome.isError ? "completed (tool error)" : "completed"}: ${resultText(outcome.result)}`
    case "Failed":
      // -32602 is most often a tool the server does not have, or arguments it refuses.
      return `failed: ${outcome.error.message} (JSON-RPC ${outcome.error.code})${
        outcome.error.code === -32602
          ? `; mcp-handles tools SERVER-URL lists the server's tools (see ${Troubleshooting.unknownTool})`
          : ""
      }`
    case "Cancelled":
      return `cancelled${outcome.reason === null ? "" : `: ${outcome.reason}`}`
    case "Expired":
      return `expired${outcome.reason === null ? "" : `: ${outcome.reason}`}`
    case "InDoubt":
      return `in doubt${outcome.reason === null ? "" : `: ${outcome.reason}`}; decide with \`mcp-handles reissue ${outcome.key}\` (send it again) or \`mcp-handles abandon ${outcome.key}\` (see ${Troubleshooting.inDoubt})`
  }
}
