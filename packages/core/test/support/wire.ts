/**
 * Test helpers for the wire: an msw server that records every JSON-RPC request it sees (so the
 * envelope and routing headers can be checked on all of them), answer builders, and real
 * `node:http` servers for the failures msw cannot produce (a socket closed after the request was
 * read, a port nobody listens on, an answer that never comes).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { HttpResponse, http as mswHttp } from "msw"
import { setupServer } from "msw/node"

/** The fetch of the runtime, captured before msw patches `globalThis.fetch`. */
export const realFetch: typeof globalThis.fetch = globalThis.fetch

export const endpointUrl = "http://mcp.test/mcp"

export interface Recorded {
  readonly headers: Headers
  readonly body: {
    readonly jsonrpc: string
    readonly id: number
    readonly method: string
    readonly params: Record<string, unknown> & { readonly _meta: Record<string, unknown> }
  }
}

export type Respond = (request: Recorded) => Response | Promise<Response>

let respond: Respond = () => HttpResponse.json({ error: "no responder set" }, { status: 500 })
export const recorded: Array<Recorded> = []

export const mswServer = setupServer(
  mswHttp.post(endpointUrl, async ({ request }) => {
    const entry: Recorded = { headers: request.headers, body: (await request.json()) as Recorded["body"] }
    recorded.push(entry)
    return respond(entry)
  }),
)

/** Sets how the msw endpoint answers, for the current test. */
export const answerWith = (next: Respond): void => {
  respond = next
}

export const resetRecorder = (): void => {
  recorded.length = 0
  respond = () => HttpResponse.json({ error: "no responder set" }, { status: 500 })
}

/** A JSON-RPC success answer for the request. */
export const result = (request: Recorded, value: unknown, init?: ResponseInit): Response =>
  HttpResponse.json({ jsonrpc: "2.0", id: request.body.id, result: value } as never, init)

/** A JSON-RPC error answer for the request. */
export const rpcError = (request: Recorded, code: number, message: string, status = 200): Response =>
  HttpResponse.json({ jsonrpc: "2.0", id: request.body.id, error: { code, message } }, { status })

/** Raw text with a content type. */
export const raw = (text: string, contentType = "application/json", status = 200): Response =>
  new HttpResponse(text, { status, headers: { "content-type": contentType } })

/** An event-stream answer made of the given `data` payloads (each one event). */
export const sse = (events: ReadonlyArray<string>): Response =>
  new HttpResponse(events.map((data) => `event: message\ndata: ${data}\n\n`).join(""), {
    headers: { "content-type": "text/event-stream" },
  })

export const createdAt = "2026-07-28T10:30:00Z"
export const createdAtMs = Date.parse(createdAt)

export const taskFields = (taskId = "task-1", overrides: Record<string, unknown> = {}) => ({
  taskId,
  status: "working",
  createdAt,
  lastUpdatedAt: "2026-07-28T10:31:00.500Z",
  ttlMs: 60_000,
  pollIntervalMs: 5_000,
  ...overrides,
})

// ---------------------------------------------------------------------------------------------
// Real sockets
// ---------------------------------------------------------------------------------------------

export interface RealServer {
  readonly url: string
  /** Request bodies the server read completely. */
  readonly received: Array<string>
  readonly close: () => Promise<void>
}

/**
 * A real HTTP server on 127.0.0.1. `onRequest` gets the whole body and the request/response;
 * sockets are destroyed on close, so a hanging answer does not keep the test alive.
 */
export const listen = (
  onRequest: (body: string, request: http.IncomingMessage, response: http.ServerResponse) => void,
): Promise<RealServer> =>
  new Promise((resolve) => {
    const received: Array<string> = []
    const sockets = new Set<import("node:net").Socket>()
    const server = http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8")
        received.push(body)
        onRequest(body, request, response)
      })
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}/mcp`,
        received,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          }),
      })
    })
  })

/** A URL on a port that was just free: connecting is refused. */
export const closedPortUrl = async (): Promise<string> => {
  const server = await listen(() => {})
  await server.close()
  return server.url
}
