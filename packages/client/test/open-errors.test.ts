/**
 * Every store that cannot be opened rejects `openTaskClient` with one line meant for people: a
 * typed `OpenError` naming the store, where it is and why it cannot be opened, never a password,
 * never the driver's wrapper alone.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { openTaskClient } from "../src/index.js"

const rejection = async (store: Parameters<typeof openTaskClient>[0]["store"]) => {
  const error = await openTaskClient({ store, servers: [] }).then(
    async (client) => {
      await client.close()
      return undefined
    },
    (error: unknown) => error as Error & { readonly _tag?: string; readonly reason?: string },
  )
  expect(error?._tag).toBe("OpenError")
  expect(error?.message).not.toContain("\n")
  return error as Error & { readonly _tag: string; readonly reason: string }
}

const quick = { retry: { budget: "200ms" }, connectTimeout: "5s" } as const

/** better-sqlite3, this package's dependency, whose types only the SQLite store's package has. */
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  filename: string,
) => { readonly exec: (sql: string) => void; readonly close: () => void }

describe("a store that cannot be opened", () => {
  const base = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-open-errors-"))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it("PostgreSQL, nothing listening: the host, port and database, and the refusal", async () => {
    const error = await rejection({
      kind: "postgres",
      url: "postgres://postgres:pw-s3cret@127.0.0.1:5999/test",
      ...quick,
    })
    expect(error.message).toBe(
      "cannot open the PostgreSQL store at 127.0.0.1:5999/test: connection refused (ECONNREFUSED)",
    )
    expect(error.reason).toBe("cannot-open")
  })

  it("PostgreSQL, a database that does not exist", async () => {
    const url = new URL(base)
    url.pathname = "/mh_no_such_database"
    const error = await rejection({ kind: "postgres", url: url.toString(), ...quick })
    expect(error.message).toMatch(
      new RegExp(
        `^cannot open the PostgreSQL store at ${url.hostname}:${url.port || 5432}/mh_no_such_database: database "mh_no_such_database" does not exist \\(3D000\\)$`,
      ),
    )
  })

  it("PostgreSQL, credentials it refuses: the cause, never the password", async () => {
    const url = new URL(base)
    url.username = "mcp_handles_no_such_role"
    url.password = "pw-s3cret"
    const error = await rejection({ kind: "postgres", url: url.toString(), ...quick })
    expect(error.message).toMatch(
      /^cannot open the PostgreSQL store at [^ ]+: (password authentication failed for user|role) "mcp_handles_no_such_role"/,
    )
    expect(error.message).not.toContain("pw-s3cret")
    expect(JSON.stringify(error)).not.toContain("pw-s3cret")
  })

  it("SQLite, a directory it cannot write", async () => {
    // Root may write anywhere a mode allows nothing: sysfs refuses new files even to root.
    const where = process.getuid?.() === 0 ? "/sys" : path.join(dir, "read-only")
    if (where !== "/sys") fs.mkdirSync(where, { mode: 0o500 })
    const filename = path.join(where, "mcp-handles-tasks.db")
    const error = await rejection({ kind: "sqlite", filename })
    expect(error.message).toMatch(
      new RegExp(`^cannot open the SQLite store at ${filename}: .*(EACCES|EROFS|EPERM)`),
    )
  })

  it("SQLite, a file that is not a database", async () => {
    const filename = path.join(dir, "garbage.db")
    fs.writeFileSync(filename, "this is not a database, only text long enough to be read as one".repeat(20))
    const error = await rejection({ kind: "sqlite", filename })
    expect(error.message).toMatch(
      new RegExp(`^cannot open the SQLite store at ${filename}: .*not a SQLite database`),
    )
  })

  it("SQLite, a database another process keeps locked", async () => {
    const filename = path.join(dir, "locked.db")
    const blocker = new Database(filename)
    try {
      blocker.exec("CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)")
      const error = await rejection({ kind: "sqlite", filename, busyTimeout: "100ms" })
      expect(error.message).toMatch(new RegExp(`^cannot open the SQLite store at ${filename}: .*locked`))
    } finally {
      blocker.close()
    }
  })
})
