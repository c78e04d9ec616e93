#!/usr/bin/env node
/**
 * The wire alone, per `tasks/get` against the fake server (its own process): CPU time, and under
 * callgrind the instructions of the timed calls only (counting is toggled on around them).
 *
 *   sdk         the SDK-transport exchange (the wire's path before the lean exchange)
 *   lean-fetch  the lean exchange over fetch (HttpWire's default in core)
 *   lean-node   the lean exchange over the client's nodeRequest
 *   raw-fetch   one fetch with the same headers, body read as text (a floor for fetch)
 *   wire-fetch  HttpWire.getTask, default request (fetch): exchange, classify, decode
 *   wire-node   HttpWire.getTask with request: nodeRequest()
 *
 * Run from packages/bench after the build: `node scripts/wire-calls.mjs MODE WARM N`, or
 * `WIRE_CALLS_CALLGRIND=1 valgrind --tool=callgrind --instr-atstart=no
 * --callgrind-out-file=/dev/null node scripts/wire-calls.mjs MODE 200 400` and divide the
 * "Collected" count by N.
 */
import { execFileSync } from "node:child_process"
import * as os from "node:os"
import { nodeRequest } from "@mcp-handles/client"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Effect from "effect/Effect"
import { exchange, makeRecorder } from "../../core/dist/internal/wire/exchange.js"
import { leanExchange, overFetch } from "../../core/dist/internal/wire/lean.js"
import { startFakeServer } from "../dist/common.js"

const [mode, warmArg, nArg] = process.argv.slice(2)
const warm = Number(warmArg)
const n = Number(nArg)
const server = await startFakeServer(
  { tools: [{ name: "job", shape: "task", durationMs: 3_600_000 }] },
  { dir: os.tmpdir() },
)
const endpoint = { name: "fake", url: server.url }
const setup = await Effect.runPromise(HttpWire.make({}))
const launched = await Effect.runPromise(
  setup.callTool(endpoint, { name: "job", arguments: {}, idempotencyKey: "k" }),
)
const taskId = launched.task.taskId
let id = 0
const message = () => ({
  jsonrpc: "2.0",
  id: ++id,
  method: "tasks/get",
  params: {
    taskId,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
    },
  },
})
const input = () => ({
  url: server.url,
  message: message(),
  headers: {},
  fetch: globalThis.fetch,
  maxAnswerBytes: 16 << 20,
  timeoutMs: 30_000,
})
const overFetchRequest = overFetch(globalThis.fetch)
const node = nodeRequest()
const wireFetch = await Effect.runPromise(HttpWire.make({}))
const wireNode = await Effect.runPromise(HttpWire.make({ request: node }))
const calls = {
  sdk: () => new Promise((resolve) => exchange(input(), makeRecorder(), resolve)),
  "lean-fetch": () =>
    new Promise((resolve) => leanExchange(input(), overFetchRequest, makeRecorder(), resolve)),
  "lean-node": () => new Promise((resolve) => leanExchange(input(), node, makeRecorder(), resolve)),
  "wire-fetch": () => Effect.runPromise(wireFetch.getTask(endpoint, taskId)),
  "wire-node": () => Effect.runPromise(wireNode.getTask(endpoint, taskId)),
  "raw-fetch": async () => {
    const response = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tasks/get",
        "mcp-name": taskId,
      },
      body: JSON.stringify(message()),
    })
    await response.text()
  },
}
const once = calls[mode]
if (once === undefined) throw new Error(`MODE is one of ${Object.keys(calls).join(", ")}`)
const counting = (on) => {
  if (process.env.WIRE_CALLS_CALLGRIND === "1")
    execFileSync("callgrind_control", ["--instr", on ? "on" : "off", String(process.pid)], {
      stdio: "ignore",
    })
}
for (let i = 0; i < warm; i++) await once()
counting(true)
const started = process.cpuUsage()
for (let i = 0; i < n; i++) await once()
const used = process.cpuUsage(started)
counting(false)
console.log(JSON.stringify({ mode, n, cpuUsPerCall: n === 0 ? 0 : (used.user + used.system) / n }))
await server.stop()
process.exit(0)
