/**
 * One port over two protocol generations. An endpoint's generation is learnt from its first
 * answer and remembered: a 2026-07-28 request (`server/discover`, `tools/list`, `tools/call`)
 * that is answered means 2026-07-28; one refused the way a 2025-11-25 server refuses it (see
 * `refusedAsLegacy`) is followed by `initialize` with 2025-11-25, whose success means
 * 2025-11-25 and the request is made again in that generation. A refused request was not
 * processed, so making it again launches nothing twice. Nothing is sent that the endpoint's own
 * generation would not send: a 2026-07-28 server sees exactly the requests it always did.
 *
 * Requests about an existing task never detect: the row says which generation created the task
 * (`TaskOrigin.generation`; absent means 2026-07-28, the rows written before there were two).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { RpcError } from "../../HandleRecord.js"
import type { ServerEndpoint, TaskOrigin, WireError } from "../../Wire.js"
import { RpcErrorAnswer, Wire } from "../../Wire.js"
import * as V2025 from "./protocol2025.js"

type Generation = "2026-07-28" | typeof V2025.protocolVersion

/**
 * How servers of the 2025-11-25 generation refuse a 2026-07-28 request: "unsupported protocol
 * version" (-32022, or the negotiation's `UnsupportedVersion` it turns into), "method not found"
 * for `server/discover`, or the official SDK 1.x's HTTP 400 with -32000 about the missing session
 * or the protocol version header.
 */
const refusedAsLegacy = (method: string, error: WireError): boolean => {
  // A version negotiation that found no version in common names the refusal on its own.
  if (error._tag === "UnsupportedVersion") return true
  if (error._tag !== "RpcErrorAnswer") return false
  const { code, message } = error.error
  return (
    code === -32022 ||
    (code === -32601 && method === "server/discover") ||
    (code === -32000 && /session|protocol version/i.test(message))
  )
}

/** @internal */
export const make = (modern: Wire, legacy: Wire): Wire => {
  const known = new Map<string, Generation>()
  const remember = (server: ServerEndpoint, generation: Generation) =>
    Effect.sync(() => known.set(server.url, generation))

  /** Runs `request` in the endpoint's generation, learning it on the first answer. */
  const routed = <A>(
    server: ServerEndpoint,
    method: string,
    request: (wire: Wire) => Effect.Effect<A, WireError>,
  ): Effect.Effect<A, WireError> =>
    Effect.suspend(() => {
      const generation = known.get(server.url)
      if (generation !== undefined) return request(generation === "2026-07-28" ? modern : legacy)
      return request(modern).pipe(
        Effect.tap(() => remember(server, "2026-07-28")),
        Effect.catchIf(
          (error) => refusedAsLegacy(method, error),
          (refused) =>
            legacy.discover(server).pipe(
              Effect.matchEffect({
                // Not a 2025-11-25 server either: the first answer stands.
                onFailure: () => Effect.fail(refused),
                onSuccess: () => Effect.zipRight(remember(server, V2025.protocolVersion), request(legacy)),
              }),
            ),
        ),
      )
    })

  const of = (origin: TaskOrigin | undefined) =>
    origin?.generation === V2025.protocolVersion ? legacy : modern

  return Wire.of({
    discover: (server) => routed(server, "server/discover", (wire) => wire.discover(server)),
    listTools: (server) => routed(server, "tools/list", (wire) => wire.listTools(server)),
    callTool: (server, request) => routed(server, "tools/call", (wire) => wire.callTool(server, request)),
    getTask: (server, taskId, origin) => of(origin).getTask(server, taskId, origin),
    updateTask: (server, taskId, responses, origin) =>
      of(origin).updateTask(server, taskId, responses, origin),
    cancelTask: (server, taskId, origin) => of(origin).cancelTask(server, taskId, origin),
    // subscriptions/listen is a 2026-07-28 method: an endpoint known to speak 2025-11-25 has none.
    listen:
      modern.listen === undefined
        ? undefined
        : (server, taskIds) =>
            known.get(server.url) === V2025.protocolVersion
              ? Stream.fail(
                  new RpcErrorAnswer({
                    method: "subscriptions/listen",
                    error: new RpcError({
                      code: -32601,
                      message: "2025-11-25 servers have no subscriptions/listen",
                    }),
                  }),
                )
              : (modern.listen?.(server, taskIds) ?? Stream.empty),
    // x-mcp-header (SEP-2243) is a 2026-07-28 rule: an endpoint known to speak 2025-11-25 has
    // nothing to check.
    checkTool: (server, tool) =>
      known.get(server.url) === V2025.protocolVersion || modern.checkTool === undefined
        ? Effect.void
        : modern.checkTool(server, tool),
  })
}
