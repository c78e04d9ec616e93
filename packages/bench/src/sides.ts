/**
 * The two requesters the end-to-end benchmarks drive against the same fake server: mcp-handles
 * (durable, SQLite store) and the official `@modelcontextprotocol/ext-tasks` requester
 * (non-durable). Each side runs `n` concurrent tool calls and waits for all of them to settle.
 */
import { setMaxListeners } from "node:events"
import * as path from "node:path"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Polling from "@mcp-handles/core/Polling"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import { NodeRequest } from "@mcp-handles/platform-node"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import {
  type ApplicationInputRequest,
  createTaskSessionFromClient,
  type ResolvedInputExchangeContext,
} from "@modelcontextprotocol/ext-tasks/client"
import { JsonValueCodec } from "@modelcontextprotocol/ext-tasks/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"

export interface Call {
  readonly tool: string
  readonly arguments: Record<string, unknown>
}

/** Counts of store operations (and lost compare-and-sets) seen through `countingStore`. */
export const storeCounts = { begin: 0, update: 0, conflicts: 0, get: 0, claimDue: 0, claimed: 0 }

/** Wraps a store layer so that the benchmark can report what the client asked of it. */
const countingStore = <E>(layer: Layer.Layer<HandleStore.HandleStore, E>) =>
  Layer.effect(
    HandleStore.HandleStore,
    Effect.map(HandleStore.HandleStore, (store) =>
      HandleStore.HandleStore.of({
        ...store,
        insertOrGet: (h) =>
          Effect.suspend(() => {
            storeCounts.begin++
            return store.insertOrGet(h)
          }),
        get: (s, k) =>
          Effect.suspend(() => {
            storeCounts.get++
            return store.get(s, k)
          }),
        update: (r, o) =>
          Effect.suspend(() => {
            storeCounts.update++
            return Effect.tapErrorTag(store.update(r, o), "VersionConflict", () =>
              Effect.sync(() => storeCounts.conflicts++),
            )
          }),
        claimDue: (o) =>
          Effect.suspend(() => {
            storeCounts.claimDue++
            return Effect.tap(store.claimDue(o), (rows) =>
              Effect.sync(() => (storeCounts.claimed += rows.length)),
            )
          }),
      }),
    ),
  ).pipe(Layer.provide(layer))

export interface Side {
  readonly name: string
  /** Runs the calls concurrently; resolves once every one has settled (throws if any did not complete). */
  run(calls: ReadonlyArray<Call>): Promise<void>
  close(): Promise<void>
}

const PROTOCOL_VERSION = "2026-07-28"

/**
 * mcp-handles: the TaskClient over HttpWire with a SQLite store (`synchronous` FULL by default).
 * Server intervals are honoured down to `minIntervalMs` (the default floor is 250 ms; the
 * benchmark workloads use shorter intervals, so the floor is lowered to match ext-tasks' 10 ms).
 */
export const mcpHandlesSide = async (options: {
  readonly url: string
  readonly dir: string
  readonly synchronous?: SqliteStore.Synchronous
  readonly minIntervalMs?: number
  readonly name?: string
  readonly background?: TaskClient.Options["background"]
}): Promise<Side> => {
  const layer = TaskClient.layer({
    servers: [{ name: "fake", url: options.url }],
    instanceId: "bench",
    background: options.background,
    // Both sides poll, as ext-tasks does: B7 weighs push against polling.
    push: false,
  }).pipe(
    Layer.provide(
      Layer.mergeAll(
        countingStore(
          SqliteStore.layer({
            filename: path.join(options.dir, `handles-${Date.now()}.db`),
            synchronous: options.synchronous ?? "FULL",
          }),
        ),
        HttpWire.layer({ request: NodeRequest.make() }),
        Polling.layer({ minIntervalMs: options.minIntervalMs ?? 10 }),
      ),
    ),
  )
  const runtime = ManagedRuntime.make(layer)
  const client = await runtime.runPromise(TaskClient.TaskClient)
  let sequence = 0
  return {
    name: options.name ?? "mcp-handles (SQLite, synchronous=FULL)",
    run: async (calls) => {
      const exit = await runtime.runPromiseExit(
        Effect.forEach(
          calls,
          (call) =>
            Effect.gen(function* () {
              const handle = yield* client.callTool("fake", call.tool, call.arguments, {
                key: `call-${process.pid}-${sequence++}`,
              })
              const outcome = yield* handle.outcome
              if (outcome._tag !== "Completed") {
                return yield* Effect.die(new Error(`call ended ${outcome._tag}`))
              }
            }),
          { concurrency: "unbounded", discard: true },
        ),
      )
      if (Exit.isFailure(exit)) throw new Error(`mcp-handles side failed: ${String(exit.cause)}`)
    },
    close: () => runtime.dispose(),
  }
}

/**
 * The official requester. It speaks 2026-07-28 through a host-supplied `rawDispatch`: one plain
 * HTTP POST per request, with the routing headers the protocol requires (`MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name`) and the JSON-RPC `jsonrpc`/`id` added.
 */
export const extTasksSession = async (options: {
  readonly url: string
  /** Called with the method of every request the requester sends (B8 counts its polls). */
  readonly onRequest?: (method: string) => void
  /** Answers a task's input requests; when given, the requester declares elicitation. */
  readonly onInputRequest?: (
    request: ApplicationInputRequest,
    context: ResolvedInputExchangeContext,
  ) => unknown
  /** The name the requester gives in its client info (default `ext-tasks-bench`). */
  readonly clientName?: string
}) => {
  // ext-tasks links every call's abort signal to the session's: with hundreds of calls in flight
  // Node warns about a possible listener leak on new EventTargets. Raise the default bound.
  setMaxListeners(100_000)
  const onInput = options.onInputRequest
  const clientInfo = { name: options.clientName ?? "ext-tasks-bench", version: "0.1.0" }
  const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: PROTOCOL_VERSION } } })
  await client.connect(new StreamableHTTPClientTransport(new URL(options.url)))
  let id = 0
  const rawDispatch = async (request: unknown, dispatchOptions?: { readonly signal?: AbortSignal }) => {
    const { method, params } = request as { method: string; params?: Record<string, unknown> }
    options.onRequest?.(method)
    const name =
      method === "tools/call"
        ? params?.name
        : method.startsWith("tasks/") && method !== "tasks/list"
          ? params?.taskId
          : undefined
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL_VERSION,
      "mcp-method": method,
    }
    if (typeof name === "string") headers["mcp-name"] = name
    const response = await fetch(options.url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, ...(params === undefined ? {} : { params }) }),
      ...(dispatchOptions?.signal === undefined ? {} : { signal: dispatchOptions.signal }),
    })
    const message = (await response.json()) as { result?: unknown; error?: unknown }
    if (message.error !== undefined) return { kind: "error", error: message.error } as never
    return { kind: "result", result: message.result } as never
  }
  const session = createTaskSessionFromClient(client, {
    endpointId: "fake",
    rawDispatch,
    v2RequestFraming: {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo,
      clientCapabilities: onInput === undefined ? {} : { elicitation: {} },
    },
    ...(onInput === undefined
      ? {}
      : { onInputRequest: async (request, context) => onInput(request, context) as never }),
  })
  return {
    session,
    close: async () => {
      await session.close()
      await client.close()
    },
  }
}

/**
 * The official requester, driven as DESIGN.md describes: it speaks 2026-07-28 through a
 * host-supplied `rawDispatch` (see `extTasksSession`).
 */
export const extTasksSide = async (options: { readonly url: string }): Promise<Side> => {
  const { session, close } = await extTasksSession(options)
  return {
    name: "@modelcontextprotocol/ext-tasks 0.2.2 (in memory)",
    run: async (calls) => {
      await Promise.all(
        calls.map(async (call) => {
          // Any JSON, undecoded: the cheapest codec ext-tasks has (the fake server now sends the
          // `resultType` its default codec checks), so the baseline is the leanest requester.
          const execution = await session.callTool(call.tool, call.arguments as never, {
            resultCodec: JsonValueCodec,
          })
          const { outcome } = await execution.settle()
          if (outcome.status !== "completed")
            throw new Error(`ext-tasks call ended ${outcome.status}`, {
              cause: outcome.status === "failed" ? outcome.error : undefined,
            })
        }),
      )
    },
    close,
  }
}
