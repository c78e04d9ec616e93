import type * as FakeServer from "../src/FakeServer.js"

export const tasksExtension = "io.modelcontextprotocol/tasks"
export const withTasks = { extensions: { [tasksExtension]: {} } }
export const urlBase = "http://fake-mcp.test/mcp"

const NAME_FIELD: Record<string, string> = {
  "tools/call": "name",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
}

export interface RpcOptions {
  readonly capabilities?: Record<string, unknown>
  /** Replace or remove (`null`) standard headers. */
  readonly headers?: Record<string, string | null>
  readonly key?: string
  readonly id?: number | string
  readonly meta?: Record<string, unknown> | null
}

let nextId = 1

/** Build a conforming 2026-07-28 request: `_meta` envelope and SEP-2243 routing headers. */
export const request = (
  method: string,
  params: Record<string, unknown> = {},
  options: RpcOptions = {},
): Request => {
  const meta =
    options.meta === null
      ? undefined
      : {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? withTasks,
          "io.modelcontextprotocol/clientInfo": { name: "test", version: "1.0.0" },
          ...(options.key === undefined ? {} : { "io.github.mcp-handles/key": options.key }),
          ...options.meta,
        }
  const body = {
    jsonrpc: "2.0",
    id: options.id ?? nextId++,
    method,
    params: meta === undefined ? params : { ...params, _meta: meta },
  }
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  }
  const field = NAME_FIELD[method]
  if (field !== undefined && typeof params[field] === "string") headers["mcp-name"] = params[field] as string
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    delete headers[name.toLowerCase()]
    if (value !== null) headers[name.toLowerCase()] = value
  }
  return new Request(urlBase, { method: "POST", headers, body: JSON.stringify(body) })
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON shapes
export type AnyJson = any

export interface RpcReply {
  readonly status: number
  readonly headers: Headers
  readonly body: AnyJson
}

export const rpc = async (
  server: FakeServer.FakeServer,
  method: string,
  params: Record<string, unknown> = {},
  options: RpcOptions = {},
): Promise<RpcReply> => {
  const response = await server.handler(request(method, params, options))
  const text = await response.text()
  return {
    status: response.status,
    headers: response.headers,
    body:
      text === ""
        ? undefined
        : response.headers.get("content-type")?.includes("json")
          ? JSON.parse(text)
          : text,
  }
}

/** The `result` of a successful call (throws with the error otherwise). */
export const call = async (
  server: FakeServer.FakeServer,
  method: string,
  params: Record<string, unknown> = {},
  options: RpcOptions = {},
): Promise<AnyJson> => {
  const reply = await rpc(server, method, params, options)
  if (reply.body?.result === undefined) throw new Error(`${method} failed: ${JSON.stringify(reply.body)}`)
  return reply.body.result
}

export const errorOf = async (
  server: FakeServer.FakeServer,
  method: string,
  params: Record<string, unknown> = {},
  options: RpcOptions = {},
): Promise<{ status: number; code: number; message: string; data: AnyJson }> => {
  const reply = await rpc(server, method, params, options)
  if (reply.body?.error === undefined)
    throw new Error(`${method} did not fail: ${JSON.stringify(reply.body)}`)
  return { status: reply.status, ...reply.body.error }
}

/** Lets the server's promise work (body reads, wake-ups) run. */
export const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/** A promise whose settling can be looked at without awaiting it. */
export const track = <A>(
  promise: Promise<A>,
): { readonly settled: () => boolean; readonly promise: Promise<A> } => {
  let settled = false
  const watched = promise.finally(() => {
    settled = true
  })
  // Looked at, not only awaited: a rejection is the test's to assert, not an unhandled one.
  watched.catch(() => {})
  return { settled: () => settled, promise: watched }
}

/**
 * Awaits an answer the server holds for `ms` on `clock`: still held 1 ms before (it throws when
 * the answer came sooner), there once the clock reaches `ms`.
 */
export const answeredAfter = async <A>(
  clock: { advance(ms: number): void },
  ms: number,
  pending: Promise<A>,
): Promise<A> => {
  const answer = track(pending)
  await flush()
  clock.advance(ms - 1)
  await flush()
  if (answer.settled()) throw new Error(`answered before ${ms} ms had passed`)
  clock.advance(1)
  return answer.promise
}
