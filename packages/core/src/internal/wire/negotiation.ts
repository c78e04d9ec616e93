/**
 * Protocol version negotiation, per endpoint. The client names, in order of preference, the
 * revisions it speaks (`AdapterOptions.protocolVersions`). Until an endpoint has said what it
 * speaks, requests name the first; `server/discover`'s `supportedVersions` settles the version
 * of the endpoint, and so does a `-32022` answer (unsupported protocol version), whose data lists
 * what the server supports: the request is then made once more with the client's most
 * preferred version in that list (the same version again when the server lists the one it
 * refused: one retry either way, never more). A `-32022` answer proves the request was not processed, so
 * making a `tools/call` again launches nothing twice. With no version in common the request
 * fails with `UnsupportedVersion`, which names both lists.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { RpcError } from "../../HandleRecord.js"
import type * as Json from "../../Json.js"
import {
  protocolVersion,
  type RpcErrorAnswer,
  type ServerEndpoint,
  UnsupportedVersion,
  type WireError,
} from "../../Wire.js"
import { protocolVersionMeta } from "./envelope.js"
import type { Rpc } from "./methods.js"

/** JSON-RPC "unsupported protocol version": the answer lists the supported versions. @internal */
export const unsupportedProtocolVersion = -32022

/** @internal */
export interface Negotiation {
  /** `rpc`, in the endpoint's negotiated version, retried once on `-32022`. */
  readonly rpc: Rpc
  /** Settles an endpoint's version from `server/discover`'s `supportedVersions`. */
  readonly discovered: (
    server: ServerEndpoint,
    supported: ReadonlyArray<string>,
  ) => Effect.Effect<string, UnsupportedVersion>
  /** The version requests to `server` name now. */
  readonly versionOf: (server: ServerEndpoint) => string
}

const refusedVersion = (error: WireError): error is RpcErrorAnswer =>
  error._tag === "RpcErrorAnswer" && error.error.code === unsupportedProtocolVersion

const supportedIn = (data: Json.JsonValue | undefined): ReadonlyArray<string> | undefined => {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return undefined
  const supported = (data as Json.JsonObject).supported
  return Array.isArray(supported) && supported.every((version) => typeof version === "string")
    ? (supported as ReadonlyArray<string>)
    : undefined
}

/** @internal */
export const make = (rpc: Rpc, preferred: ReadonlyArray<string> | undefined): Negotiation => {
  const ours = preferred === undefined || preferred.length === 0 ? [protocolVersion] : [...preferred]
  // Keyed by URL: two endpoint names for one URL are one server.
  const negotiated = new Map<string, string>()
  const versionOf = (server: ServerEndpoint) => negotiated.get(server.url) ?? (ours[0] as string)

  const settle = (
    server: ServerEndpoint,
    method: string,
    requested: string,
    supported: ReadonlyArray<string>,
    error: RpcError | undefined,
  ): Effect.Effect<string, UnsupportedVersion> =>
    Effect.suspend(() => {
      const common = ours.find((version) => supported.includes(version))
      if (common !== undefined) {
        negotiated.set(server.url, common)
        return Effect.succeed(common)
      }
      const message = `no protocol version in common: the client speaks ${ours.join(", ")}, the server ${supported.length === 0 ? "none" : supported.join(", ")}`
      return Effect.fail(
        new UnsupportedVersion({
          method,
          requested,
          supported: [...supported],
          error:
            error ??
            new RpcError({
              code: unsupportedProtocolVersion,
              message,
              data: { supported: [...supported], requested },
            }),
        }),
      )
    })

  const send = (
    server: ServerEndpoint,
    method: string,
    params: Json.JsonObject,
    extraMeta: Json.JsonObject | undefined,
    version: string,
    notified: Parameters<Rpc>[4],
  ) => rpc(server, method, params, { ...extraMeta, [protocolVersionMeta]: version }, notified)

  const negotiatedRpc: Rpc = (server, method, params, extraMeta, notified) =>
    Effect.suspend(() => {
      const version = versionOf(server)
      return send(server, method, params, extraMeta, version, notified).pipe(
        Effect.catchIf(refusedVersion, (error) =>
          Effect.gen(function* () {
            const rejected = error.error
            const supported = supportedIn(rejected.data) ?? []
            const next = yield* settle(server, method, version, supported, rejected)
            // Once, even with the version just refused when the server lists it (a replica that
            // had not caught up, or a server testing its clients): the retry is the one the
            // spec asks for, and a second refusal ends it.
            return yield* send(server, method, params, extraMeta, next, notified).pipe(
              Effect.catchIf(refusedVersion, (again) =>
                Effect.fail(
                  new UnsupportedVersion({
                    method,
                    requested: next,
                    supported: [...(supportedIn(again.error.data) ?? [])],
                    error: again.error,
                  }),
                ),
              ),
            )
          }),
        ),
      )
    })

  return {
    rpc: negotiatedRpc,
    discovered: (server, supported) =>
      settle(server, "server/discover", versionOf(server), supported, undefined),
    versionOf,
  }
}
