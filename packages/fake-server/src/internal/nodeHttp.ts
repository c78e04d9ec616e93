import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { FakeServer } from "../FakeServer.js"

/**
 * Serve a fake server over node:http. A `drop` fault destroys the socket without writing a byte;
 * a client that goes away aborts the request's signal (ending listen streams).
 */
export const listen = async (
  server: FakeServer,
  options: { readonly port?: number; readonly host?: string; readonly path?: string } = {},
): Promise<{ readonly url: string; readonly http: Server; close(): Promise<void> }> => {
  const host = options.host ?? "127.0.0.1"
  const http = createServer((req, res) => {
    void respond(server, req, res, host)
  })
  // Node closes an idle keep-alive socket after 5 s; a client reusing it at that moment sees the
  // connection close before any answer, which for `tools/call` rightly means "in doubt". Real
  // deployments keep idle sockets longer than their clients do (load balancers use 60 s or more):
  // so does this server, so that only the faults it is told to inject look like faults.
  http.keepAliveTimeout = 65_000
  http.headersTimeout = 66_000
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject)
    http.listen(options.port ?? 0, host, () => resolve())
  })
  const { port } = http.address() as AddressInfo
  const url = `http://${host}:${port}${options.path ?? "/mcp"}`
  return {
    url,
    http,
    close: () =>
      new Promise<void>((resolve) => {
        server.close()
        http.close(() => resolve())
        http.closeAllConnections()
      }),
  }
}

const respond = async (server: FakeServer, req: IncomingMessage, res: ServerResponse, host: string) => {
  const abort = new AbortController()
  res.on("close", () => abort.abort())
  try {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue
      headers.set(name, Array.isArray(value) ? value.join(", ") : value)
    }
    const hasBody = req.method !== "GET" && req.method !== "HEAD"
    const request = new Request(`http://${req.headers.host ?? host}${req.url ?? "/"}`, {
      method: req.method ?? "GET",
      headers,
      signal: abort.signal,
      ...(hasBody ? { body: Buffer.concat(chunks) } : {}),
    })
    const served = await server.serve(request)
    if (served.kind === "drop") {
      // The connection dies before a single byte of the answer: what a crash or a proxy cut looks like.
      req.socket.destroy()
      return
    }
    const response = served.response
    const outHeaders: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      outHeaders[name] = value
    })
    res.writeHead(response.status, outHeaders)
    if (response.body === null) {
      res.end()
      return
    }
    const reader = response.body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (!res.write(value))
        await new Promise((resolve) => res.once("drain", resolve))
        // Streams (listen) must reach the client frame by frame.
      ;(res as ServerResponse & { flush?: () => void }).flush?.()
    }
    res.end()
  } catch {
    // A body that errors (or any failure) cuts the connection rather than faking a clean end.
    req.socket.destroy()
  }
}
