/**
 * msw request handlers that route every request under a URL to a fake server. Only this module
 * imports msw (an optional peer dependency).
 *
 * @since 0.1.0
 */
import { type HttpHandler, HttpResponse, http } from "msw"
import type { Config } from "./Config.js"
import * as FakeServer from "./FakeServer.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Origin (and optional path) the fake server answers under, e.g. `http://fake-mcp.test`. */
  readonly url: string
}

/**
 * Handlers for an existing server. A `drop` fault becomes `HttpResponse.error()`: `fetch` rejects
 * with a network error, as with a cut connection.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromServer = (server: FakeServer.FakeServer, options: Options): HttpHandler[] => {
  const base = options.url.replace(/\/+$/, "")
  const pattern = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:[/?#].*)?$`)
  return [
    http.all(pattern, async ({ request }) => {
      const served = await server.serve(request)
      return served.kind === "drop" ? HttpResponse.error() : served.response
    }),
  ]
}

/**
 * A fake server and its msw handlers in one call.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMake = (
  config: Config,
  options: Options & FakeServer.Options,
): { readonly server: FakeServer.FakeServer; readonly handlers: HttpHandler[] } => {
  const server = FakeServer.unsafeMake(config, options)
  return { server, handlers: fromServer(server, options) }
}
