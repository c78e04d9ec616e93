/**
 * The servers that stored rows point at. A row names its server only by an identity (a hash of a
 * name and the URL, see `ServerIdentity`), so commands that act on stored rows (`resume`,
 * `cancel`, `reissue`, ...) need the URL back. `call` records every server it uses in a small
 * JSON file beside the store; `--server URL` on any command adds one by hand.
 *
 * The file holds names and URLs only: credentials never go in it (URLs carrying credentials or
 * secret-looking query parameters are refused, see `Auth.checkUrl`).
 *
 * @since 0.1.0
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import * as ServerIdentity from "@mcp-handles/core/ServerIdentity"
import type * as Wire from "@mcp-handles/core/Wire"
import * as Effect from "effect/Effect"
import * as Auth from "./Auth.js"
import { type CliError, failed, fromKnown } from "./CliError.js"
import type { StoreSpec } from "./StoreSpec.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface KnownServer {
  /** `ServerIdentity.of(endpoint)`: what rows store as `serverId`. */
  readonly id: string
  readonly name: string
  readonly url: string
}

/**
 * @since 0.1.0
 * @category constants
 */
export const environmentVariable = "MCP_HANDLES_SERVERS"

/**
 * Next to a SQLite file (`tasks.db` → `tasks.db.servers.json`), so that a store and its servers
 * travel together; for PostgreSQL, `./.mcp-handles/servers.json`. `MCP_HANDLES_SERVERS` wins.
 *
 * @since 0.1.0
 * @category constructors
 */
export const pathFor = (spec: StoreSpec): string => {
  const fromEnv = process.env[environmentVariable]
  if (fromEnv !== undefined && fromEnv !== "") return resolve(fromEnv)
  return spec._tag === "Sqlite"
    ? `${spec.filename}.servers.json`
    : resolve(join(".mcp-handles", "servers.json"))
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
 * under its own name wrote rows under that name's identity, and only the same name finds them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const endpointFor = (raw: string): Effect.Effect<KnownServer, CliError> =>
  Effect.gen(function* () {
    const named = /^([A-Za-z0-9_.-]+)=(https?:\/\/.+)$/i.exec(raw)
    const url = named?.[2] ?? raw
    yield* Auth.checkUrl(url)
    const normalised = yield* ServerIdentity.normaliseUrl(url)
    const name = named?.[1] ?? nameFor(normalised)
    const id = yield* ServerIdentity.of({ name, url: normalised })
    return { id, name, url: normalised }
  }).pipe(Effect.mapError(fromKnown))

/**
 * @since 0.1.0
 * @category constructors
 */
export const load = (file: string): Effect.Effect<ReadonlyArray<KnownServer>, CliError> =>
  Effect.try({
    try: () => {
      let text: string
      try {
        text = readFileSync(file, "utf8")
      } catch (error) {
        if ((error as { code?: unknown }).code === "ENOENT") return []
        throw error
      }
      const parsed = JSON.parse(text) as { servers?: unknown }
      if (!Array.isArray(parsed.servers)) throw new Error("no servers array")
      return parsed.servers.filter(
        (s): s is KnownServer =>
          typeof s === "object" &&
          s !== null &&
          typeof s.id === "string" &&
          typeof s.name === "string" &&
          typeof s.url === "string",
      )
    },
    catch: (error) =>
      failed(
        `cannot read the server list ${file}: ${error instanceof Error ? error.message : String(error)}`,
      ),
  })

/**
 * Adds servers to the file (write to a temporary file, then rename: never a torn list).
 *
 * @since 0.1.0
 * @category constructors
 */
export const remember = (
  file: string,
  servers: ReadonlyArray<KnownServer>,
): Effect.Effect<ReadonlyArray<KnownServer>, CliError> =>
  Effect.gen(function* () {
    const known = yield* load(file)
    const fresh = servers.filter((s) => !known.some((k) => k.id === s.id))
    if (fresh.length === 0) return known
    const all = [...known, ...fresh]
    yield* Effect.try({
      try: () => {
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
        const temporary = `${file}.${process.pid}.tmp`
        writeFileSync(temporary, `${JSON.stringify({ servers: all }, null, 2)}\n`, { mode: 0o600 })
        chmodSync(temporary, 0o600)
        renameSync(temporary, file)
      },
      catch: (error) =>
        failed(
          `cannot write the server list ${file}: ${error instanceof Error ? error.message : String(error)}`,
        ),
    })
    return all
  })

/**
 * The endpoints a client is configured with: every known server, by its name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const endpoints = (servers: ReadonlyArray<KnownServer>): ReadonlyArray<Wire.ServerEndpoint> => {
  const seen = new Set<string>()
  const out: Array<Wire.ServerEndpoint> = []
  for (const server of servers) {
    // Two URLs may share a name only in a hand-edited file; the first one wins.
    if (seen.has(server.name)) continue
    seen.add(server.name)
    out.push({ name: server.name, url: server.url })
  }
  return out
}

/**
 * The short name shown for a row's server: the name part of its identity.
 *
 * @since 0.1.0
 * @category constructors
 */
export const displayName = (serverId: string, servers: ReadonlyArray<KnownServer>): string =>
  servers.find((s) => s.id === serverId)?.name ?? serverId.replace(/:[0-9a-f]{16}$/, "")
