import type { ChildProcess } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { StoreError } from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import { latestVersion } from "../src/internal/migrations.js"
import { handle, T0, withStore } from "./stores.js"

const here = path.dirname(fileURLToPath(import.meta.url))

let dir = ""
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-open-"))
})
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

const openError = (filename: string) =>
  Effect.flip(withStore(filename, () => Effect.void)).pipe(
    Effect.map((error) => {
      expect(error).toBeInstanceOf(SqliteStore.OpenError)
      return error
    }),
  )

/** The bytes of the file and whether any SQLite side file exists. */
const snapshot = (filename: string) => ({
  hash: createHash("sha256").update(fs.readFileSync(filename)).digest("hex"),
  sideFiles: ["-wal", "-shm", "-journal"].filter((suffix) => fs.existsSync(filename + suffix)),
})

describe("opening", () => {
  it.effect("creates the database and its -wal/-shm files with mode 0600, whatever the umask", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      const previous = process.umask(0)
      try {
        yield* withStore(filename, (store) =>
          Effect.gen(function* () {
            yield* store.insertOrGet(handle("a"))
            for (const file of [filename, `${filename}-wal`, `${filename}-shm`]) {
              expect((fs.statSync(file).mode & 0o777).toString(8)).toBe("600")
            }
          }),
        )
      } finally {
        process.umask(previous)
      }
    }),
  )

  it.effect("keeps what it wrote across a reopen, and migrates only once", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(filename, (store) => store.insertOrGet(handle("a")))
      const again = yield* withStore(filename, (store) => store.insertOrGet(handle("a")))
      expect(again.created).toBe(false)
      const db = new Database(filename, { readonly: true })
      const rows = db.prepare("SELECT migration_id FROM mcp_handles_migrations").all()
      const mode = db.pragma("journal_mode", { simple: true })
      db.close()
      expect(rows).toEqual(
        Array.from({ length: SqliteStore.schemaVersion }, (_, i) => ({ migration_id: i + 1 })),
      )
      expect(mode).toBe("wal")
    }),
  )

  it.effect("a database of schema version 1 is upgraded in place, its rows kept", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(filename, (store) => store.insertOrGet(handle("a")))
      // Turn the file back into what version 1 wrote.
      const old = new Database(filename)
      // Whatever later migrations added goes too: their triggers, and tables other than the two
      // version 1 had.
      const later = old
        .prepare(
          "SELECT type, name FROM sqlite_master WHERE type = 'trigger' OR (type = 'table' AND name NOT IN ('handles', 'mcp_handles_migrations') AND name NOT LIKE 'sqlite_%')",
        )
        .all() as ReadonlyArray<{ readonly type: string; readonly name: string }>
      for (const { type, name } of later) old.exec(`DROP ${type.toUpperCase()} "${name}"`)
      old.exec(`DROP INDEX handles_intents;
        DROP INDEX handles_due_any;
        DROP INDEX handles_task_id;
        ALTER TABLE handles DROP COLUMN task_id;
        ALTER TABLE handles DROP COLUMN poll_interval_ms;
        ALTER TABLE handles DROP COLUMN cancel_unsent;
        DROP INDEX handles_all;
        DROP INDEX handles_server_status;
        CREATE INDEX handles_due ON handles (next_poll_at) WHERE status IN ('pending', 'working', 'input_required');
        DELETE FROM mcp_handles_migrations WHERE migration_id > 1;`)
      old.close()
      const found = yield* withStore(filename, (store) => store.get("s", "a"))
      expect(Option.isSome(found)).toBe(true)
      const db = new Database(filename, { readonly: true })
      const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all()
      const versions = db.prepare("SELECT migration_id FROM mcp_handles_migrations ORDER BY 1").all()
      db.close()
      expect(indexes.map((row) => (row as { name: string }).name)).toContain("handles_due_any")
      expect(indexes.map((row) => (row as { name: string }).name)).toContain("handles_task_id")
      expect(indexes.map((row) => (row as { name: string }).name)).toContain("handles_all")
      expect(versions).toEqual(Array.from({ length: latestVersion }, (_, i) => ({ migration_id: i + 1 })))
    }),
  )

  it.effect("uses the partial due index for claimDue and the list index for list", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(filename, (store) => store.insertOrGet(handle("a")))
      const db = new Database(filename, { readonly: true })
      const plan = (text: string) =>
        db
          .prepare(`EXPLAIN QUERY PLAN ${text}`)
          .all()
          .map((row) => (row as { detail: string }).detail)
          .join("\n")
      // claimDue's query: every row with a due time, of the instance's servers.
      const due = plan(`SELECT * FROM handles WHERE next_poll_at <= 1 AND status <> 'in_doubt'
        AND (lease_owner IS NULL OR lease_owner = 'x' OR lease_expires_at <= 1)
        AND (1 = 0 OR server_id IN (SELECT value FROM json_each('["a:0123456789abcdef"]'))
          OR (CASE WHEN length(server_id) > 17 AND substr(server_id, -17, 1) = ':'
            THEN substr(server_id, 1, length(server_id) - 17) ELSE server_id END) IN (SELECT value FROM json_each('[]')))
        ORDER BY next_poll_at, created_at, scope, key LIMIT 10`)
      const list = plan("SELECT * FROM handles WHERE scope = 's' ORDER BY created_at, key LIMIT 10")
      // Every scope's rows, as the ui lists them (issue 33): in index order, not sorted whole.
      const everyScope = plan(
        "SELECT * FROM handles WHERE (created_at, key, scope) > (1, 'k', 's') ORDER BY created_at, key, scope LIMIT 10",
      )
      // list --stuck and the ui's stuck view: the scheduled rows by the due index, not a walk of
      // a scope's whole history.
      const scheduled = plan(`SELECT * FROM handles INDEXED BY handles_due_any
        WHERE scope = 's' AND next_poll_at IS NOT NULL ORDER BY created_at, key LIMIT 10`)
      db.close()
      expect(scheduled).toContain("handles_due_any")
      expect(due).toContain("handles_due_any")
      // The index gives claimDue's whole order: no sort of rows that share a due time.
      expect(due).not.toContain("TEMP B-TREE")
      expect(list).toContain("handles_list")
      expect(everyScope).toContain("handles_all")
      expect(everyScope).not.toContain("TEMP B-TREE")
    }),
  )

  it.effect("a corrupt row is a StoreError naming it, never a half-decoded record", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(filename, (store) => store.insertOrGet(handle("a")))
      const db = new Database(filename)
      db.prepare("UPDATE handles SET body = '{\"tool\": 42}', next_poll_at = 0").run()
      db.close()
      yield* withStore(filename, (store) =>
        Effect.gen(function* () {
          const read = yield* Effect.flip(store.get("s", "a"))
          expect(read).toBeInstanceOf(StoreError)
          expect(read.message).toContain('"a"')
          const claim = yield* Effect.flip(store.claimDue({ owner: "me", now: T0, leaseMs: 1, limit: 5 }))
          expect(claim).toBeInstanceOf(StoreError)
          // The failed claim leased nothing.
          const db = new Database(filename, { readonly: true })
          const row = db.prepare("SELECT lease_owner, version FROM handles").get()
          db.close()
          expect(row).toEqual({ lease_owner: "me", version: 1 })
        }),
      )
    }),
  )

  it.effect("many concurrent writers: every acknowledged write is there after a reopen", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(filename, (store) =>
        Effect.all(
          Array.from({ length: 300 }, (_, i) =>
            Effect.flatMap(store.insertOrGet(handle(`k${i}`)), ({ record }) =>
              store.update(
                new (Object.getPrototypeOf(record).constructor)({ ...record, taskId: `task-${i}` }, true),
              ),
            ),
          ),
          { concurrency: "unbounded" },
        ),
      )
      yield* withStore(filename, (store) =>
        Effect.gen(function* () {
          for (let i = 0; i < 300; i++) {
            const record = Option.getOrThrow(yield* store.get("s", `k${i}`))
            expect(record.taskId).toBe(`task-${i}`)
            expect(record.version).toBe(2)
          }
        }),
      )
    }),
  )
})

/** Starts a process that holds the database's write lock for `ms`; resolves once it holds it. */
const holdLock = (filename: string, ms: number) =>
  Effect.async<ChildProcess>((resume) => {
    const child = spawnGroup(
      process.execPath,
      [path.join(here, "fixtures", "hold-lock.mjs"), filename, String(ms)],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    )
    child.stdout?.once("data", () => resume(Effect.succeed(child)))
    child.once("error", (error) => resume(Effect.die(error)))
  })

const exited = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

describe("another process holding the write lock", () => {
  it.live("a write waits for it up to the busy timeout", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(filename, (store) =>
        Effect.gen(function* () {
          const child = yield* holdLock(filename, 300)
          const started = Date.now()
          const { created } = yield* store.insertOrGet(handle("waited"))
          expect(created).toBe(true)
          expect(Date.now() - started).toBeGreaterThanOrEqual(200)
          yield* exited(child)
        }),
      )
    }),
  )

  it.live("past the busy timeout the write fails with a StoreError, and is not written", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(
        filename,
        (store) =>
          Effect.gen(function* () {
            const child = yield* holdLock(filename, 1000)
            const error = yield* Effect.flip(store.insertOrGet(handle("late")))
            expect(error).toBeInstanceOf(StoreError)
            expect(error.message).toContain("locked")
            yield* exited(child)
            expect(Option.isNone(yield* store.get("s", "late"))).toBe(true)
          }),
        { busyTimeout: "50 millis" },
      )
    }),
  )
})

describe("bad input is a typed error and writes nothing", () => {
  it.effect("a directory that does not exist", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "missing", "handles.db")
      const error = yield* openError(filename)
      expect(error.reason).toBe("cannot-create")
      expect(error.message).toContain("does not exist")
      expect(fs.existsSync(path.dirname(filename))).toBe(false)
    }),
  )

  it.effect("a path under a regular file", () =>
    Effect.gen(function* () {
      fs.writeFileSync(path.join(dir, "file"), "x")
      const error = yield* openError(path.join(dir, "file", "handles.db"))
      expect(error.reason).toBe("cannot-create")
      expect(error.message).toContain("not a directory")
      expect(fs.readFileSync(path.join(dir, "file"), "utf8")).toBe("x")
    }),
  )

  it.effect("a path that is a directory", () =>
    Effect.gen(function* () {
      const error = yield* openError(dir)
      expect(error.reason).toBe("cannot-create")
      expect(error.message).toContain("not a regular file")
      expect(fs.readdirSync(dir)).toEqual([])
    }),
  )

  it.effect("no path at all", () =>
    Effect.gen(function* () {
      for (const filename of ["", ":memory:"]) {
        const error = yield* openError(filename)
        expect(error.reason).toBe("cannot-create")
      }
    }),
  )

  it.effect("a file that is not a SQLite database", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "notes.txt")
      fs.writeFileSync(filename, "these are my notes, not a database\n".repeat(200))
      const before = snapshot(filename)
      const error = yield* openError(filename)
      expect(error.reason).toBe("not-a-database")
      expect(error.message).toContain("not a SQLite database")
      expect(snapshot(filename)).toEqual(before)
      expect(before.sideFiles).toEqual([])
    }),
  )

  it.effect("a file with a SQLite header and garbage after it", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "broken.db")
      fs.writeFileSync(
        filename,
        Buffer.concat([Buffer.from("SQLite format 3\0", "latin1"), Buffer.alloc(4096, 7)]),
      )
      const before = snapshot(filename)
      const error = yield* openError(filename)
      expect(error.reason).toBe("not-a-database")
      expect(snapshot(filename)).toEqual(before)
    }),
  )

  it.effect("a database written by a newer schema version", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(filename, (store) => store.insertOrGet(handle("a")))
      const db = new Database(filename)
      db.prepare("INSERT INTO mcp_handles_migrations (migration_id, name) VALUES (?, 'from_the_future')").run(
        SqliteStore.schemaVersion + 1,
      )
      db.close()
      const before = snapshot(filename)
      expect(before.sideFiles).toEqual([])
      const error = yield* openError(filename)
      expect(error.reason).toBe("newer-schema")
      expect(error.message).toContain(`schema version ${SqliteStore.schemaVersion + 1}`)
      expect(error.message).toContain("upgrade @mcp-handles/store-sqlite")
      expect(snapshot(filename)).toEqual(before)
    }),
  )

  it.effect("a SQLite database that belongs to another application", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "theirs.db")
      const db = new Database(filename)
      db.pragma("application_id = 42")
      db.exec("CREATE TABLE mine (x)")
      db.close()
      const before = snapshot(filename)
      const error = yield* openError(filename)
      expect(error.reason).toBe("foreign-database")
      expect(snapshot(filename)).toEqual(before)
    }),
  )

  it.effect("a record holding a non-finite number is refused and not written", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(filename, (store) =>
        Effect.gen(function* () {
          const { record } = yield* store.insertOrGet(handle("a"))
          const bad = new (Object.getPrototypeOf(record).constructor)(
            { ...record, attempts: Number.NaN },
            true,
          )
          const outcome = yield* Effect.either(store.update(bad))
          expect(Either.isLeft(outcome) && outcome.left).toBeInstanceOf(StoreError)
          expect(Option.getOrThrow(yield* store.get("s", "a")).version).toBe(1)
        }),
      )
    }),
  )
})
