/**
 * One live process per instance id on a database file: a second live process is refused with
 * InstanceIdInUse; a holder killed with SIGKILL lets go at once; a second client of one process is
 * refused too; a holder is told apart by a token of its process, not by its pid alone.
 */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { HandleStore } from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import Database from "better-sqlite3"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import { pidSpace, staleAfterMs } from "../src/internal/instance-lock.js"
import { handle } from "./stores.js"

const here = path.dirname(fileURLToPath(import.meta.url))

const holdInstance = (filename: string, instanceId: string) =>
  Effect.async<ChildProcess>((resume) => {
    const child = spawnGroup(
      process.execPath,
      [path.join(here, "fixtures", "hold-instance.mjs"), filename, instanceId],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    )
    child.stdout?.once("data", () => resume(Effect.succeed(child)))
    child.once("error", (error) => resume(Effect.die(error)))
  })

const exited = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

describe("instance lock", () => {
  it.live(
    "a live process's id is refused, and freed at once when that process is killed",
    () =>
      Effect.gen(function* () {
        const filename = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-lock-")), "tasks.db")
        const store = yield* Layer.build(SqliteStore.layer({ filename })).pipe(
          Effect.map(Context.get(HandleStore)),
        )
        const child = yield* holdInstance(filename, "worker-1")
        const refused = yield* Effect.either(Effect.scoped(store.lockInstance("worker-1")))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("InstanceIdInUse")
        if (Either.isLeft(refused)) expect(refused.left.message).toContain(`process ${child.pid}`)
        // Another id is free meanwhile.
        yield* Effect.scoped(store.lockInstance("worker-2"))
        killGroup(child, "SIGKILL")
        yield* exited(child)
        // No waiting for a lease or a heartbeat to run out: the holder is gone, the id is free.
        yield* Effect.scoped(store.lockInstance("worker-1"))
      }).pipe(Effect.scoped),
    30_000,
  )

  it.live("a second client of this process is refused; the id is free once the first lets go", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-lock-"))
      const filename = path.join(dir, "tasks.db")
      // Two store layers over one file: they still see each other's hold.
      const open = () =>
        Layer.build(SqliteStore.layer({ filename })).pipe(Effect.map(Context.get(HandleStore)))
      const store = yield* open()
      const other = yield* open()
      const first = yield* Scope.make()
      yield* Scope.extend(store.lockInstance("shared"), first)
      const refused = yield* Effect.either(Effect.scoped(other.lockInstance("shared")))
      expect(Either.isLeft(refused) && refused.left._tag).toBe("InstanceIdInUse")
      if (Either.isLeft(refused)) expect(refused.left.message).toContain("another client in this process")
      // The refusal took nothing from the first client: its hold stands.
      expect(holders(filename)).toEqual([{ instance_id: "shared", pid: process.pid }])
      yield* Scope.close(first, Exit.void)
      expect(holders(filename)).toEqual([])
      yield* Effect.scoped(other.lockInstance("shared"))
    }).pipe(Effect.scoped),
  )

  it.live("a lock row left by an earlier process that had this pid is stale; another host's is not", () =>
    Effect.gen(function* () {
      const filename = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-lock-")), "tasks.db")
      const store = yield* Layer.build(SqliteStore.layer({ filename })).pipe(
        Effect.map(Context.get(HandleStore)),
      )
      const now = Date.now()
      // Same pid, another token, this host: the process that wrote it is gone (this one has its pid).
      seed(filename, { id: "reused", token: "earlier", pid: process.pid, host: os.hostname(), at: now })
      yield* Effect.scoped(store.lockInstance("reused"))
      // Same pid on another host sharing the volume: a live process there, not this one.
      seed(filename, { id: "remote", token: "theirs", pid: process.pid, host: "elsewhere", at: now })
      const refused = yield* Effect.either(Effect.scoped(store.lockInstance("remote")))
      expect(Either.isLeft(refused) && refused.left._tag).toBe("InstanceIdInUse")
      if (Either.isLeft(refused))
        expect(refused.left.message).toContain(`process ${process.pid} on elsewhere`)
      // Once its heartbeat stopped long enough ago, that host's process counts as gone.
      seed(filename, {
        id: "remote",
        token: "theirs",
        pid: process.pid,
        host: "elsewhere",
        at: now - staleAfterMs,
      })
      yield* Effect.scoped(store.lockInstance("remote"))
    }).pipe(Effect.scoped),
  )

  it.live(
    "a holder on this host name whose pid this process cannot see (another pid namespace) is live while it beats",
    () =>
      Effect.gen(function* () {
        const filename = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-lock-")), "tasks.db")
        const store = yield* Layer.build(SqliteStore.layer({ filename })).pipe(
          Effect.map(Context.get(HandleStore)),
        )
        const now = Date.now()
        // A container sharing this host name but not this pid namespace: its pid means nothing here.
        const unseen = pidNotHere()
        for (const [id, space] of [
          ["container", "another-boot/pid:[4026531999]"],
          // Written by a release that did not record its pid namespace: the heartbeat decides.
          ["unrecorded", null],
        ] as const) {
          seed(filename, { id, token: "theirs", pid: unseen, host: os.hostname(), at: now, pidSpace: space })
          const refused = yield* Effect.either(Effect.scoped(store.lockInstance(id)))
          expect(Either.isLeft(refused) && refused.left._tag, id).toBe("InstanceIdInUse")
          // Once its heartbeat stopped long enough ago, it counts as gone.
          seed(filename, {
            id,
            token: "theirs",
            pid: unseen,
            host: os.hostname(),
            at: now - staleAfterMs,
            pidSpace: space,
          })
          yield* Effect.scoped(store.lockInstance(id))
        }
        // In this pid namespace the pid still decides at once.
        seed(filename, { id: "here", token: "theirs", pid: unseen, host: os.hostname(), at: now })
        yield* Effect.scoped(store.lockInstance("here"))
      }).pipe(Effect.scoped),
  )

  it.scoped(
    "a holder whose heartbeat cannot be written says so, and stops writing before another process may take its id",
    () =>
      Effect.gen(function* () {
        const filename = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-lock-")), "tasks.db")
        const store = yield* SqliteStore.make({ filename, busyTimeout: "0 millis" })
        const logged: Array<string> = []
        const logger = Logger.make(({ message }) => {
          logged.push(String(Array.isArray(message) ? message.join(" ") : message))
        })
        yield* store
          .lockInstance("beating")
          .pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        yield* store.insertOrGet(handle("before"))
        // Another connection holds the write lock: every heartbeat fails (SQLITE_BUSY).
        const blocker = new Database(filename)
        blocker.exec("BEGIN IMMEDIATE")
        yield* TestClock.adjust(staleAfterMs)
        blocker.exec("ROLLBACK")
        blocker.close()
        expect(logged.join("\n")).toContain("heartbeat")
        // By now another process would see its heartbeat as stale and take the id: this one has stopped.
        const after = yield* Effect.either(store.insertOrGet(handle("after")))
        expect(Either.isLeft(after) && after.left.message).toMatch(
          /instance lock of "beating" was lost.*heartbeat/,
        )
      }),
  )
})

/** The lock rows of a database file, read on a connection of their own. */
const holders = (filename: string) => {
  const db = new Database(filename, { readonly: true })
  try {
    return db.prepare("SELECT instance_id, pid FROM instances ORDER BY instance_id").all()
  } finally {
    db.close()
  }
}

/**
 * Writes a lock row as another process would have; its pid namespace is this process's unless
 * given (`null`: a row that names none).
 */
const seed = (
  filename: string,
  row: { id: string; token: string; pid: number; host: string; at: number; pidSpace?: string | null },
) => {
  const db = new Database(filename, { timeout: 5_000 })
  try {
    db.prepare(`INSERT INTO instances (instance_id, token, pid, host, heartbeat_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (instance_id) DO UPDATE SET token = excluded.token, pid = excluded.pid,
      host = excluded.host, heartbeat_at = excluded.heartbeat_at`).run(
      row.id,
      row.token,
      row.pid,
      row.host,
      row.at,
    )
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('instances')").all()
    if (columns.some((column) => column.name === "pid_space")) {
      const space = row.pidSpace === undefined ? pidSpace : row.pidSpace
      db.prepare("UPDATE instances SET pid_space = ? WHERE instance_id = ?").run(space, row.id)
    }
  } finally {
    db.close()
  }
}

/** A pid no process of this pid namespace has. */
const pidNotHere = (): number => {
  for (let pid = 4_000_000; ; pid++) {
    try {
      process.kill(pid, 0)
    } catch (error) {
      if ((error as { code?: unknown }).code === "ESRCH") return pid
    }
  }
}
