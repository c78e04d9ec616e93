/** `mcp-handles show <key>`: everything the store knows about one call. */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import { describe } from "../CliError.js"
import * as Common from "../Common.js"
import * as Render from "../Render.js"

export const keyArg = Args.text({ name: "key" }).pipe(Args.withDescription("the call's idempotency key"))

const time = (ms: number | null) => (ms === null ? "-" : new Date(ms).toISOString())

export const command = Command.make(
  "show",
  { ...Common.common, key: keyArg, json: Common.json, reveal: Common.reveal },
  (options) =>
    Effect.gen(function* () {
      const session = yield* Common.open(options)
      const r = yield* session.client.get(options.key).pipe(Effect.mapError(describe))
      const server = session.servers.find((s) => s.id === r.serverId)
      if (options.json) {
        console.log(
          JSON.stringify(
            { ...Render.recordJson(r, options.reveal, server?.name), serverUrl: server?.url ?? null },
            null,
            2,
          ),
        )
        return
      }
      const lines: Array<[string, string]> = [
        ["key", r.key],
        ["scope", r.scope],
        ["status", r.status],
        ["tool", r.tool],
        [
          "server",
          server === undefined
            ? `${r.serverId} (URL unknown here; pass --server URL to act on it)`
            : `${server.name} ${server.url}`,
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
      if (r.result !== null) lines.push(["result", Render.truncate(Render.resultText(r.result), 500)])
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
      if (r.nextPollAt !== null) lines.push(["next poll", time(r.nextPollAt)])
      if (r.leaseOwner !== null) lines.push(["lease", `${r.leaseOwner} until ${time(r.leaseExpiresAt)}`])
      lines.push(["created", time(r.createdAt)], ["updated", time(r.updatedAt)])
      if (r.settledAt !== null) lines.push(["settled", time(r.settledAt)])
      const width = Math.max(...lines.map(([label]) => label.length))
      for (const [label, value] of lines) console.log(`${label.padEnd(width)}  ${value}`)
    }).pipe(Effect.scoped),
).pipe(Command.withDescription("Show one call: status, task id (redacted), result, input, lease"))
