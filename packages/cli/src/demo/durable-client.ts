/**
 * The demo's durable client process. `launch` records and dispatches the batch and then waits on
 * it (until the demo kills it); `resume` is the process after the restart: it reconciles from
 * the SQLite file, re-issues in-doubt calls (the demo server deduplicates on the key), and
 * settles every call. It speaks to the demo in JSON lines on stdout.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Polling from "@mcp-handles/core/Polling"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Log from "../Log.js"
import { calls, confirmation } from "./batch.js"

const [mode, url, filename] = process.argv.slice(2)
const say = (line: Record<string, unknown>) => Effect.sync(() => console.log(JSON.stringify(line)))

const program = Effect.gen(function* () {
  const client = yield* TaskClient.TaskClient
  if (mode === "launch") {
    yield* Effect.forEach(
      calls,
      (call) =>
        client.callTool("demo", call.tool, call.args, { key: call.key }).pipe(
          // The task id is durable before callTool returns: from here on nothing can lose it.
          Effect.tap((handle) =>
            say({
              event: "recorded",
              key: call.key,
              status: handle.record.status,
              hasTaskId: handle.record.taskId !== null,
            }),
          ),
          Effect.flatMap((handle) => handle.outcome),
          Effect.tap((outcome) => say({ event: "settled", key: call.key, outcome: outcome._tag })),
        ),
      { concurrency: "unbounded", discard: true },
    )
    return
  }
  const report = yield* client.reconcile
  yield* say({ event: "reconciled", ...report })
  const inDoubt = yield* client.list({ statuses: ["in_doubt"], limit: 1000 })
  for (const record of inDoubt.records) {
    yield* client.reissue(record.key)
    yield* say({ event: "reissued", key: record.key })
  }
  yield* Effect.forEach(
    calls,
    (call) =>
      client
        .settle(call.key)
        .pipe(Effect.tap((outcome) => say({ event: "settled", key: call.key, outcome: outcome._tag }))),
    { concurrency: "unbounded", discard: true },
  )
})

const layer = TaskClient.layer({
  servers: [{ name: "demo", url: url ?? "" }],
  onInputRequired: (request) =>
    say({ event: "input", key: request.key, inputKey: request.inputKey }).pipe(Effect.as(confirmation)),
  // Only the explicit reconcile and the calls' own drivers: the demo shows each step.
  background: false,
}).pipe(
  Layer.provide(
    Layer.mergeAll(
      SqliteStore.layer({ filename: filename ?? "" }),
      HttpWire.layer({ clientCapabilities: { elicitation: {} } }),
      Polling.layer(),
    ),
  ),
)

if ((mode !== "launch" && mode !== "resume") || url === undefined || filename === undefined) {
  console.error("usage: durable-client launch|resume <server-url> <db-file>")
  process.exit(2)
}
// Logs go to stderr: stdout is the JSON-lines channel to the demo.
NodeRuntime.runMain(program.pipe(Effect.provide(layer), Effect.provide(Log.layer(false))))
