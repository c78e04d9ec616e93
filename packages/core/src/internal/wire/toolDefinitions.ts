/**
 * Each endpoint's tool definitions, as far as `tools/call` needs them: which arguments are
 * mirrored into `Mcp-Param-*` headers, and which tools are invalid to call (see paramHeaders.ts).
 * Learnt from `tools/list` (every listing refreshes it; the client checks a tool, and so lists
 * its endpoint's tools, before its first call), and forgotten when the server says its tools
 * changed: `notifications/tools/list_changed` on a `subscriptions/listen` stream (the only place a
 * 2026-07-28 server sends it), or a call answered with a header mismatch (`-32020`). They are
 * listed again before the next call is checked.
 * After a listing that fails, calls go out without custom headers until a server that needed
 * them says so (a header mismatch), and the next call lists again.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Json from "../../Json.js"
import type { ServerEndpoint, ToolInfo, WireError } from "../../Wire.js"
import * as ParamHeaders from "./paramHeaders.js"

/** JSON-RPC "header mismatch" (SEP-2243): the request's headers disagree with its body. @internal */
export const headerMismatch = -32020

/** @internal */
export interface ToolDefinitions {
  /** Replaces what is known of the endpoint's tools. */
  readonly remember: (server: ServerEndpoint, tools: ReadonlyArray<ToolInfo>) => void
  readonly forget: (server: ServerEndpoint) => void
  /** The tool's scan as known now, without asking the server. */
  readonly knownScanOf: (server: ServerEndpoint, tool: string) => ParamHeaders.Scan | undefined
  /** The tool's scan; lists the endpoint's tools when they are not known. Undefined if unknown. */
  readonly scanOf: (server: ServerEndpoint, tool: string) => Effect.Effect<ParamHeaders.Scan | undefined>
}

/** @internal */
export const make = (
  list: (server: ServerEndpoint) => Effect.Effect<ReadonlyArray<ToolInfo>, WireError>,
): ToolDefinitions => {
  const known = new Map<string, ReadonlyMap<string, ParamHeaders.Scan>>()
  const remember = (server: ServerEndpoint, tools: ReadonlyArray<ToolInfo>) => {
    known.set(server.url, new Map(tools.map((tool) => [tool.name, ParamHeaders.scan(tool.inputSchema)])))
  }
  return {
    remember,
    knownScanOf: (server, tool) => known.get(server.url)?.get(tool),
    forget: (server) => {
      known.delete(server.url)
    },
    scanOf: (server, tool) =>
      Effect.suspend(() => {
        const tools = known.get(server.url)
        if (tools !== undefined) return Effect.succeed(tools.get(tool))
        return list(server).pipe(
          // Not asked again for every call: until a header mismatch says otherwise, the endpoint
          // is taken to declare no custom headers.
          Effect.orElse(() => Effect.sync(() => remember(server, []))),
          Effect.map(() => known.get(server.url)?.get(tool)),
        )
      }),
  }
}

/** The endpoint with `extra` headers after its own (credentials are looked up as before). @internal */
export const withHeaders = (
  server: ServerEndpoint,
  extra: Readonly<Record<string, string>>,
): ServerEndpoint => {
  if (Object.keys(extra).length === 0) return server
  const own = server.headers
  return {
    ...server,
    headers: () =>
      own === undefined
        ? extra
        : Effect.suspend(() => {
            const headers = own()
            return Effect.isEffect(headers) ? headers : Effect.succeed(headers)
          }).pipe(Effect.map((headers) => ({ ...headers, ...extra }))),
  }
}

/** The `Mcp-Param-*` headers of a call of `tool` with `args`, per what is known of it. @internal */
export const headersOf = (
  scan: ParamHeaders.Scan | undefined,
  args: Json.JsonObject,
): Readonly<Record<string, string>> =>
  scan === undefined || scan._tag === "Invalid" ? {} : ParamHeaders.headers(scan.declarations, args)
