/**
 * The client process of the real-process chaos run: a plain application on the Promise facade
 * and the SQLite store. It reconciles what an earlier (killed) process left, starts its own
 * calls, cancels some, and settles everything, printing one JSON line per milestone. The parent
 * kills it with SIGKILL at random moments.
 *
 * usage: child <server-url> <db-file> <calls as JSON: [{ key, tool, n, cancel }]> [push]
 * (`push`: the client listens with `subscriptions/listen`, polling as the safety net)
 */
import { openTaskClient } from "@mcp-handles/core/PromiseClient"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Output from "./internal/output.js"

interface Call {
  readonly key: string
  readonly tool: string
  readonly n: number
  readonly cancel: boolean
}

const [url, filename, callsJson, mode] = process.argv.slice(2)
if (url === undefined || filename === undefined) {
  Output.complain("usage: child <server-url> <db-file> <calls-json>")
  process.exit(2)
}
const calls = JSON.parse(callsJson ?? "[]") as ReadonlyArray<Call>
const say = (line: object) => Output.say(JSON.stringify(line))

const client = await openTaskClient({
  store: SqliteStore.layer({ filename }),
  servers: [{ name: "fake", url }],
  instanceId: "local",
  leaseMs: 5_000,
  background: { tickMs: 100 },
  onInputRequired: async () => ({ action: "accept", content: { name: "Ada" } }),
  polling: { minIntervalMs: 50, retryInitialMs: 100, retryMaxMs: 1_000 },
  push: mode === "push" ? { maxBackoffMs: 1_000 } : false,
})
say({ event: "started" })
const report = await client.reconcile()
say({ event: "reconciled", ...report })
await Promise.all(
  calls.map(async (call) => {
    try {
      const handle = await client.callTool("fake", call.tool, { n: call.n }, { key: call.key })
      if (call.cancel) await client.cancel(handle.key)
    } catch (error) {
      say({ event: "call-failed", key: call.key, error: String(error) })
    }
  }),
)
say({ event: "called" })
const open = await client.list({ limit: 1000 })
await Promise.all(open.records.map((record) => client.settle(record.key).catch(() => undefined)))
say({ event: "settled" })
await client.close()
