/**
 * The servers that stored rows point at, kept in the store itself (its `servers` table: name,
 * URL, identity, first and last seen), so every process on a store, a fleet on PostgreSQL
 * included, sees the same list. A row names its server by an identity whose name part is the
 * server's name (see `ServerIdentity`): the CLI finds a row's server by that identity, else by
 * the name, so rows an application wrote are resumed by name, at the URL last recorded for it.
 *
 * `call`, `--server [NAME=]URL` and `servers --set` record servers; an application's client
 * records its own when it starts. Names and URLs only: credentials never go in (URLs carrying
 * credentials or secret-looking query parameters are refused, see `Auth.checkUrl`).
 *
 * Earlier versions kept the list in a JSON file beside a SQLite store (`tasks.db.servers.json`,
 * or `$MCP_HANDLES_SERVERS`): `importLegacy` reads such a file once into the store, then
 * renames it to `….imported`.
 *
 * @since 0.1.0
 */
import { existsSync, readFileSync, renameSync } from "node:fs"
import { resolve } from "node:path"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as ServerIdentity from "@mcp-handles/core/ServerIdentity"
import type * as Wire from "@mcp-handles/core/Wire"
import * as Effect from "effect/Effect"
import * as Auth from "./Auth.js"
import { type CliError, failed, fromKnown } from "./CliError.js"
import type { StoreSpec } from "./StoreSpec.js"

/**
 * A server as the store keeps it.
 *
 * @since 0.1.0
 * @category models
 */
export type KnownServer = HandleStore.ServerRecord

/**
 * A server as given on the command line: `ServerIdentity.of(endpoint)` is `id`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Endpoint {
  readonly id: string
  readonly name: string
  readonly url: string
}

/**
 * Where earlier versions kept the list; read once by `importLegacy`.
 *
 * @since 0.1.0
 * @category constants
 */
export const environmentVariable = "MCP_HANDLES_SERVERS"

/**
 * The legacy file of a store: `$MCP_HANDLES_SERVERS`, else beside a SQLite file
 * (`tasks.db.servers.json`); none for PostgreSQL, whose old file lived in whatever directory the
 * CLI ran in and belongs to no one store.
 *
 * @since 0.3.0
 * @category constructors
 */
export const legacyFileFor = (spec: StoreSpec): string | undefined => {
  const fromEnv = process.env[environmentVariable]
  if (fromEnv !== undefined && fromEnv !== "") return resolve(fromEnv)
  return spec._tag === "Sqlite" ? `${spec.filename}.servers.json` : undefined
}

/**
 * A readable, stable name for a URL: its host and port, plus the path when it is not the usual
 * `/mcp`. It is part of the identity, so it must never depend on anything but the URL.
 *
 * @since 0.1.0
 * @category constructors
 */
export const nameFor = (url: string): string => {
  try {
    const parsed = new URL(url)
    const path = parsed.pathname.replace(/\/+$/, "")
    return path === "" || path === "/mcp" ? parsed.host : `${parsed.host}${path}`
  } catch {
    return url
  }
}

/**
 * The endpoint the CLI uses for `URL`, or for `NAME=URL`: an application that configured a server
 * under its own name wrote rows under that name, and only the same name finds them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const endpointFor = (raw: string): Effect.Effect<Endpoint, CliError> =>
  Effect.gen(function* () {
    const named = /^([^=\s]+)=(https?:\/\/.+)$/i.exec(raw)
    const url = named?.[2] ?? raw
    yield* Auth.checkUrl(url)
    const normalised = yield* ServerIdentity.normaliseUrl(url)
    const name = named?.[1] ?? nameFor(normalised)
    const id = yield* ServerIdentity.of({ name, url: normalised })
    return { id, name, url: normalised }
  }).pipe(Effect.mapError(fromKnown))

/**
 * Every server the store knows, by name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (store: HandleStore.HandleStore): Effect.Effect<ReadonlyArray<KnownServer>, CliError> =>
  Effect.mapError(store.listServers, fromKnown)

/**
 * Records servers in the store (a known name gets the URL given), then returns every server.
 *
 * @since 0.1.0
 * @category constructors
 */
export const remember = (
  store: HandleStore.HandleStore,
  servers: ReadonlyArray<Endpoint>,
): Effect.Effect<ReadonlyArray<KnownServer>, CliError> =>
  Effect.gen(function* () {
    const now = yield* store.now
    yield* Effect.forEach(servers, (s) => store.recordServer({ name: s.name, url: s.url, id: s.id, now }), {
      discard: true,
    })
    return yield* store.listServers
  }).pipe(Effect.mapError(fromKnown))

/**
 * Reads a legacy server file into the store once: names the store does not know yet are
 * recorded (entries that do not parse as a server are left out), then the file is renamed to
 * `….imported` so it is not read again. Nothing happens when there is no file.
 *
 * @since 0.3.0
 * @category constructors
 */
export const importLegacy = (
  store: HandleStore.HandleStore,
  file: string | undefined,
): Effect.Effect<number, CliError> =>
  Effect.gen(function* () {
    if (file === undefined || !existsSync(file)) return 0
    const entries = yield* Effect.try({
      try: () => {
        const parsed = JSON.parse(readFileSync(file, "utf8")) as { servers?: unknown }
        if (!Array.isArray(parsed.servers)) throw new Error("no servers array")
        return parsed.servers.flatMap((s: unknown) =>
          typeof s === "object" && s !== null && typeof (s as { name?: unknown }).name === "string"
            ? typeof (s as { url?: unknown }).url === "string"
              ? [`${(s as { name: string }).name}=${(s as { url: string }).url}`]
              : []
            : [],
        )
      },
      catch: (error) =>
        failed(
          `cannot read the old server list ${file}: ${error instanceof Error ? error.message : String(error)}`,
        ),
    })
    const known = new Set((yield* load(store)).map((s) => s.name))
    const valid = yield* Effect.forEach(entries, (entry) => Effect.option(endpointFor(entry)))
    const fresh = valid.flatMap((e) => (e._tag === "Some" && !known.has(e.value.name) ? [e.value] : []))
    yield* remember(store, fresh)
    yield* Effect.try({
      try: () => renameSync(file, `${file}.imported`),
      catch: (error) =>
        failed(
          `imported the old server list ${file} into the store, but cannot rename it: ${error instanceof Error ? error.message : String(error)}`,
        ),
    })
    return fresh.length
  })

/**
 * The endpoints a client is configured with: every known server, by its name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const endpoints = (servers: ReadonlyArray<KnownServer>): ReadonlyArray<Wire.ServerEndpoint> =>
  servers.map((server) => ({ name: server.name, url: server.url }))

/**
 * The server a row points at: by its identity, else by its name (the server was moved to another
 * URL under the same name since the row was written).
 *
 * @since 0.3.0
 * @category constructors
 */
export const serverOf = (serverId: string, servers: ReadonlyArray<KnownServer>): KnownServer | undefined =>
  servers.find((s) => s.id === serverId) ?? servers.find((s) => s.name === ServerIdentity.nameOf(serverId))

/**
 * The short name shown for a row's server: the name part of its identity.
 *
 * @since 0.1.0
 * @category constructors
 */
export const displayName = (serverId: string, _servers?: ReadonlyArray<KnownServer>): string =>
  ServerIdentity.nameOf(serverId)
