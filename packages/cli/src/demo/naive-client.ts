/**
 * The demo's naive client: the same wire, but task ids live only in this process's memory (as
 * in a client that keeps its handles in a Map, or the official requester). It launches the same
 * batch and polls; killed, it takes every task id with it. Restarted, it has nothing to resume.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Wire from "@mcp-handles/core/Wire"
import * as Effect from "effect/Effect"
import * as Log from "../Log.js"
import { calls } from "./batch.js"

const [mode, url] = process.argv.slice(2)
const say = (line: Record<string, unknown>) => Effect.sync(() => console.log(JSON.stringify(line)))

/** The naive client's whole memory: gone with the process. */
const handles = new Map<string, string>()

const program = Effect.gen(function* () {
  if (mode === "resume") {
    yield* say({ event: "reconciled", handles: handles.size })
    return
  }
  const wire = yield* Wire.Wire
  const server: Wire.ServerEndpoint = { name: "demo", url: url ?? "" }
  yield* Effect.forEach(
    calls,
    (call) =>
      Effect.gen(function* () {
        const answer = yield* wire.callTool(server, {
          name: call.tool,
          arguments: call.args,
          idempotencyKey: `naive-${call.key}`,
        })
        if (answer._tag === "Task") handles.set(call.key, answer.task.taskId)
        yield* say({ event: "recorded", key: call.key })
        const taskId = handles.get(call.key)
        if (taskId === undefined) return
        for (;;) {
          yield* Effect.sleep("500 millis")
          const task = yield* wire.getTask(server, taskId)
          if (task.status === "completed" || task.status === "failed" || task.status === "cancelled") return
        }
      }).pipe(Effect.ignore),
    { concurrency: "unbounded", discard: true },
  )
})

// Logs go to stderr: stdout is the JSON-lines channel to the demo.
NodeRuntime.runMain(
  program.pipe(
    Effect.provide(HttpWire.layer({ clientCapabilities: { elicitation: {} } })),
    Effect.provide(Log.layer(false)),
  ),
)
