/**
 * B9's application, one process of it: it is handed the calls its user is still waiting for
 * (new ones and those no earlier process delivered), makes sure each gets done, and writes each
 * outcome it hands the user to `delivered.jsonl`. The harness kills it with SIGKILL at random
 * moments and starts the next one. One program, three clients, each with its own persistence:
 *
 * - `mcp-handles`: the Promise facade on SQLite. A call is `callTool` with the call's key (a
 *   call an earlier process started attaches to its row); one left in doubt is reissued, which
 *   the server (it deduplicates on the key) answers with the task it created the first time.
 * - `ext-tasks`: the official requester with its documented persistence. `handoff` saves the
 *   task's reference (here to `references.jsonl`), `resumeTask` drives it, in this process and
 *   in the next; a call with no saved reference is called again.
 * - `naive`: the SDK's plain `Client.callTool`, waiting for the answer; nothing is saved. Not
 *   declaring the Tasks extension, it gets the answer held while the work runs.
 *
 * usage: b9-app <kind> <server-url> <dir> <calls as JSON> <stay|finish>
 * (`stay`: once everything is delivered, wait to be killed; `finish`: exit 0)
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { openTaskClient, type PromiseTaskClient } from "@mcp-handles/core/PromiseClient"
import type { SerializedTaskReference } from "@mcp-handles/core/TaskReference"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { JsonValueCodec } from "@modelcontextprotocol/ext-tasks/core"
import type { Asked, Call, Delivered, Kind } from "./b9-count.js"
import { extTasksSession } from "./sides.js"

/** How long the user takes to answer a question: a kill can land while they type. */
const ANSWER_MS = 50
const PROTOCOL_VERSION = "2026-07-28"

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const [kind, url, dir, callsJson, mode] = process.argv.slice(2) as [Kind, string, string, string, string]
const calls = JSON.parse(callsJson ?? "[]") as ReadonlyArray<Call>

// appendFileSync is one write(2): a SIGKILL leaves the line whole or absent, and the kernel keeps
// it (the machine does not crash, only the process).
const deliver = (line: Delivered) => appendFileSync(join(dir, "delivered.jsonl"), `${JSON.stringify(line)}\n`)
const ask = async (key: string, question: string) => {
  const line: Asked = { key, question, at: Date.now() }
  appendFileSync(join(dir, "asked.jsonl"), `${JSON.stringify(line)}\n`)
  await sleep(ANSWER_MS)
}
const answer = { action: "accept", content: { name: "Ada" } } as const

/** Tries `run` until it returns: an app whose call failed for a reason not the task's tries again. */
const untilDone = async (run: () => Promise<void>) => {
  for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
    try {
      return await run()
    } catch (error) {
      process.stderr.write(`retrying after: ${String(error)}\n`)
      await sleep(wait)
    }
  }
}

interface App {
  readonly recover?: () => Promise<void>
  readonly run: (call: Call) => Promise<void>
}

const mcpHandles = async (): Promise<App> => {
  const client: PromiseTaskClient = await openTaskClient({
    store: SqliteStore.layer({ filename: join(dir, "handles.db") }),
    servers: [{ name: "fake", url }],
    instanceId: "b9",
    leaseMs: 5_000,
    background: { tickMs: 100 },
    onInputRequired: async (request) => {
      await ask(request.key, request.inputKey)
      return answer
    },
    polling: { minIntervalMs: 50, retryInitialMs: 100, retryMaxMs: 1_000 },
  })
  return {
    // What an earlier process left is driven again before the calls are (they attach to it).
    recover: async () => {
      await client.reconcile()
    },
    run: async (call) => {
      let handle = await client.callTool("fake", call.tool, { key: call.key, n: call.n }, { key: call.key })
      for (;;) {
        const outcome = await handle.outcome()
        if (outcome._tag !== "InDoubt") {
          const record = await client.get(call.key)
          return deliver({ key: call.key, status: outcome._tag.toLowerCase(), taskId: record.taskId })
        }
        // The server deduplicates on the key: the re-send gets the task the first one created.
        appendFileSync(join(dir, "reissued.jsonl"), `${JSON.stringify({ key: call.key })}\n`)
        handle = await client.reissue(call.key)
      }
    },
  }
}

const referencesFile = () => join(dir, "references.jsonl")

const extTasks = async (): Promise<App> => {
  const keyOfTask = new Map<string, string>()
  const { session } = await extTasksSession({
    url,
    clientName: "b9-ext-tasks",
    onInputRequest: async (request, context) => {
      const key = context.taskId === undefined ? "?" : (keyOfTask.get(context.taskId) ?? "?")
      await ask(key, context.inputId ?? JSON.stringify(request.params))
      return answer
    },
  })
  const saved = new Map<string, SerializedTaskReference>()
  if (existsSync(referencesFile())) {
    for (const line of readFileSync(referencesFile(), "utf8").split("\n")) {
      if (line === "") continue
      const { key, reference } = JSON.parse(line) as { key: string; reference: SerializedTaskReference }
      saved.set(key, reference)
    }
  }
  return {
    run: async (call) => {
      let reference = saved.get(call.key)
      if (reference === undefined) {
        const execution = await session.callTool(
          call.tool,
          { key: call.key, n: call.n },
          { resultCodec: JsonValueCodec },
        )
        if (execution.kind === "immediate") {
          const { outcome } = await execution.settle()
          return deliver({ key: call.key, status: outcome.status, taskId: null })
        }
        keyOfTask.set(execution.handle.taskId, call.key)
        await execution.handoff((r) => {
          appendFileSync(referencesFile(), `${JSON.stringify({ key: call.key, reference: r })}\n`)
          reference = r as SerializedTaskReference
        })
        // The handed-off execution lets go of the task once its local run has ended: before
        // that, `resumeTask` refuses it (TaskRecoveryOwnershipError).
        await execution.result().catch(() => undefined)
        saved.set(call.key, reference as unknown as SerializedTaskReference)
      }
      const held = reference as SerializedTaskReference
      keyOfTask.set(held.taskId, call.key)
      const resumed = await session.resumeTask(held as Parameters<typeof session.resumeTask>[0], {
        resultCodec: JsonValueCodec,
      })
      const { outcome } = await resumed.settle()
      // Taken at its word: ext-tasks also ends an execution failed when a poll's answer is lost
      // (its `reason` then names no server error); B9 counts that, it does not second-guess it.
      deliver({
        key: call.key,
        status: outcome.status,
        taskId: held.taskId,
        ...(outcome.status === "failed" ? { reason: outcome.error.message } : {}),
      })
    },
  }
}

const naive = async (): Promise<App> => {
  const client = new Client(
    { name: "b9-naive", version: "0.1.0" },
    { versionNegotiation: { mode: { pin: PROTOCOL_VERSION } } },
  )
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return {
    run: async (call) => {
      const result = await client.callTool(
        { name: call.tool, arguments: { key: call.key, n: call.n } },
        // Longer than any tool's work: the default would cut long held answers itself.
        { timeout: 120_000 },
      )
      deliver({ key: call.key, status: result.isError === true ? "failed" : "completed", taskId: null })
    },
  }
}

const main = async () => {
  // The harness holds our stdin open: its end means the harness is gone (SIGKILL included).
  process.stdin.on("end", () => process.exit(1))
  process.stdin.resume()
  const app =
    kind === "mcp-handles" ? await mcpHandles() : kind === "ext-tasks" ? await extTasks() : await naive()
  // The harness times its kill from here: each client is killed as long after its start-up.
  process.stdout.write("ready\n")
  await app.recover?.()
  await Promise.all(calls.map((call) => untilDone(() => app.run(call))))
  process.stdout.write("delivered\n")
  if (mode === "finish") process.exit(0)
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
