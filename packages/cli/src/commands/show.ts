/**
 * `mcp-handles show <key>`: everything the store knows about one call.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { fromKnown } from "../CliError.js"
import * as Common from "../Common.js"
import * as Output from "../Output.js"
import * as Render from "../Render.js"
import * as Row from "../Row.js"
import * as Spec from "../Spec.js"

/**
 * @since 0.1.0
 * @category options
 */
export const keyArg = Spec.arg("key", {
  description: "the call's idempotency key (see mcp-handles list)",
  example: "report-2",
})

const time = (ms: number | null) => (ms === null ? "-" : new Date(ms).toISOString())

/**
 * @since 0.1.0
 * @category commands
 */
export const spec = Spec.command(
  "show",
  {
    summary: "Show one call: status, task id (redacted), result, input, lease",
    description: [
      "Everything the store knows about one call, without talking to its server: its status and the server's last word, the task id (redacted unless --reveal), arguments, result or error, input requested and answered, the cancel intent, the lease and the poll schedule, and its history (each status change: when, from and to, what caused it, which instance).",
    ],
    examples: [
      { command: "mcp-handles show report-2" },
      { command: "mcp-handles show report-2 --json --reveal" },
    ],
  },
  { ...Common.common, key: keyArg, json: Common.json, reveal: Common.reveal },
  (options) =>
    Effect.gen(function* () {
      const session = yield* Common.open(options)
      const r = yield* session.client.get(options.key).pipe(Effect.mapError(fromKnown))
      const row = Row.make(r, session.rowContext(options.reveal))
      const history = r.history.map((entry) => ({
        at: time(entry.at),
        from: entry.from,
        to: entry.to,
        cause: entry.cause,
        instance: entry.instance,
      }))
      if (options.json) {
        Output.json(Output.Show, { ...row, history })
        return
      }
      const lines: Array<[string, string]> = [
        ["key", r.key],
        ["scope", r.scope],
        ["status", Render.status(r)],
        ["tool", r.tool],
        [
          "server",
          row.serverUrl === null
            ? `${row.server} (URL unknown here; pass --server ${row.server}=URL to act on it)`
            : `${row.server} ${row.serverUrl}`,
        ],
        ["task id", Render.taskId(r.taskId, options.reveal)],
        ["arguments", r.arguments === null ? `(hash only) ${r.argumentsHash}` : JSON.stringify(r.arguments)],
      ]
      if (r.snapshot !== null) {
        lines.push(["status message", r.snapshot.statusMessage ?? "-"])
        lines.push([
          "poll interval",
          r.snapshot.pollIntervalMs === undefined ? "-" : `${r.snapshot.pollIntervalMs} ms`,
        ])
        lines.push(["ttl", r.snapshot.ttlMs === null ? "unlimited" : `${r.snapshot.ttlMs} ms`])
      }
      if (r.result !== null)
        lines.push([
          "result",
          Render.truncate(Render.shown(Render.resultText(r.result), options.reveal), 500),
        ])
      if (r.error !== null) lines.push(["error", `${r.error.code} ${r.error.message}`])
      if (r.inputRequests !== null) lines.push(["input requested", Object.keys(r.inputRequests).join(", ")])
      if (Object.keys(r.answers).length > 0) {
        lines.push([
          "answered",
          Object.entries(r.answers)
            .map(([k, a]) => `${k}${a.acknowledged ? "" : " (not yet acknowledged)"}`)
            .join(", "),
        ])
      }
      if (r.cancel !== null)
        lines.push([
          "cancel",
          `requested ${time(r.cancel.requestedAt)}${r.cancel.sent ? ", sent" : ", not sent yet"}`,
        ])
      lines.push(["launches", String(r.launches)])
      if (r.lastProblem !== null) lines.push(["last problem", r.lastProblem])
      if (row.lastPolledAt !== null) lines.push(["last poll", row.lastPolledAt])
      if (r.nextPollAt !== null) lines.push(["next poll", time(r.nextPollAt)])
      if (r.leaseOwner !== null) lines.push(["lease", `${r.leaseOwner} until ${time(r.leaseExpiresAt)}`])
      if (row.stuck !== null) lines.push(["stuck", row.stuck])
      lines.push(["created", time(r.createdAt)], ["updated", time(r.updatedAt)])
      if (r.settledAt !== null) lines.push(["settled", time(r.settledAt)])
      // One line per status change, oldest first.
      history.forEach((entry, i) => {
        const change = entry.from === null ? entry.to : `${entry.from} -> ${entry.to}`
        lines.push([
          i === 0 ? "history" : "",
          `${entry.at}  ${change}  (${entry.cause}, ${entry.instance ?? "-"})`,
        ])
      })
      const width = Math.max(...lines.map(([label]) => label.length))
      const text = lines.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join("\n")
      // The row's ids were added as the row was made: its lines are shown with them shortened.
      Output.line(Render.shown(text, options.reveal))
    }).pipe(Effect.scoped),
)
