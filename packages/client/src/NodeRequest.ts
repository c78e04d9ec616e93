/**
 * The wire's requests over `node:http` / `node:https`: `@mcp-handles/platform-node`'s
 * `NodeRequest`, under the client's own names and types (its declarations name no core type).
 *
 * @since 0.6.0
 */
import { NodeRequest } from "@mcp-handles/platform-node"
import type { HttpRequest } from "./OpenOptions.js"

/**
 * What `nodeRequest` takes.
 *
 * @since 0.6.0
 * @category models
 */
export interface NodeRequestOptions {
  /** Sockets per origin at most (default: unlimited, as fetch has). */
  readonly maxSockets?: number | undefined
}

/**
 * A request function for the wire (`http.request` of `open`'s options) over `node:http` and
 * `node:https`: the same semantics as fetch for what the wire reads (status, headers, the body as
 * UTF-8 text up to the size limit, errors with their codes, aborting), on keep-alive connections
 * pooled per origin. The client's default unless `http.fetch` is given.
 *
 * @since 0.6.0
 * @category constructors
 */
export const nodeRequest = (options: NodeRequestOptions = {}): HttpRequest => NodeRequest.make(options)
