/**
 * One client process of the durable-call example. `launch` starts calls and waits on them
 * (until it is killed); `resume` is the process after the restart: it reconciles and settles
 * every call. Each prints JSON lines the parent reads.
 */
import { openTaskClient } from "@mcp-handles/core/PromiseClient"
import { SqliteStore } from "@mcp-handles/store-sqlite"

const [mode, url, filename, keysArg] = process.argv.slice(2)
if ((mode !== "launch" && mode !== "resume") || url === undefined || filename === undefined) {
  console.error("usage: client-process launch|resume <server-url> <db-file> [key,key,...]")
  process.exit(2)
}
const keys = (keysArg ?? "").split(",").filter((key) => key !== "")
const say = (line: object) => console.log(JSON.stringify(line))

const client = await openTaskClient({
  store: SqliteStore.layer({ filename }),
  servers: [{ name: "demo", url }],
})

if (mode === "launch") {
  const handles = await Promise.all(
    keys.map(async (key, i) => {
      const handle = await client.callTool("demo", "report", { chapter: i + 1 }, { key })
      // The task id is durable before callTool returns: from here on nothing can lose it.
      say({ event: "recorded", key, status: handle.record.status, hasTaskId: handle.record.taskId !== null })
      return handle
    }),
  )
  say({ event: "all-recorded" })
  for (const handle of handles)
    say({ event: "settled", key: handle.key, outcome: (await handle.outcome())._tag })
} else {
  const report = await client.reconcile()
  say({ event: "reconciled", ...report })
  for (const key of keys) {
    const outcome = await client.settle(key)
    const record = await client.get(key)
    say({ event: "settled", key, outcome: outcome._tag, taskId: record.taskId, launches: record.launches })
  }
}
await client.close()
