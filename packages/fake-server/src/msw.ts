import { type HttpHandler, HttpResponse, http } from "msw"
import type { FakeServerConfig } from "./config.js"
import { type FakeServer, type FakeServerOptions, makeFakeServer } from "./server.js"

export interface FakeServerHandlersOptions {
  /** Origin (and optional path) the fake server answers under, e.g. `http://fake-mcp.test`. */
  readonly url: string
}

/**
 * msw request handlers that route every request under `url` to a fake server. A `drop` fault
 * becomes `HttpResponse.error()`: `fetch` rejects with a network error, as with a cut connection.
 */
export const fakeServerHandlers = (server: FakeServer, options: FakeServerHandlersOptions): HttpHandler[] => {
  const base = options.url.replace(/\/+$/, "")
  const pattern = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:[/?#].*)?$`)
  return [
    http.all(pattern, async ({ request }) => {
      const served = await server.serve(request)
      return served.kind === "drop" ? HttpResponse.error() : served.response
    }),
  ]
}

/** A fake server and its msw handlers in one call. */
export const makeFakeServerHandlers = (
  config: FakeServerConfig,
  options: FakeServerHandlersOptions & FakeServerOptions,
): { readonly server: FakeServer; readonly handlers: HttpHandler[] } => {
  const server = makeFakeServer(config, options)
  return { server, handlers: fakeServerHandlers(server, options) }
}
