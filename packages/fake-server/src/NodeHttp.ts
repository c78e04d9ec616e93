/**
 * Serves a fake server over `node:http` (what the binary does): a `drop` fault destroys the
 * socket without writing a byte, and a client that goes away ends its listen streams. Node only;
 * the rest of the package is web-standard.
 *
 * @since 0.2.0
 */
import type { Server } from "node:http"
import type { FakeServer } from "./FakeServer.js"
import * as internal from "./internal/nodeHttp.js"

/**
 * A fake server listening on a port.
 *
 * @since 0.2.0
 * @category models
 */
export interface Listening {
  /** The MCP endpoint, `http://{host}:{port}{path}`. */
  readonly url: string
  readonly http: Server
  /** Closes the server's streams and timers, then the listener and its connections. */
  close(): Promise<void>
}

/**
 * Listens on `host` (default 127.0.0.1) and `port` (default 0: a free one); `path` is the MCP
 * endpoint in the returned URL (default `/mcp`; every path outside the control prefix serves MCP).
 *
 * @since 0.2.0
 * @category constructors
 */
export const listen = (
  server: FakeServer,
  options: { readonly port?: number; readonly host?: string; readonly path?: string } = {},
): Promise<Listening> => internal.listen(server, options)
