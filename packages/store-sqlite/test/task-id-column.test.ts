/**
 * Migration 10 (issue 29 item 5): the task id moves from an index on the JSON body to a column.
 * A file of version 9 with rows keeps every task id held, and refuses a second holder as before.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { latestVersion } from "../src/internal/migrations.js"
import { handle, withStore } from "./stores.js"

let dir = ""
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-task-id-"))
})
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

/** Begins the call `key` on `serverId` and records `taskId` for it (null: none yet). */
const call = (store: HandleStore, key: string, serverId: string, taskId: string | null) =>
  Effect.gen(function* () {
    const { record } = yield* store.insertOrGet(handle(key, serverId))
    if (taskId !== null) yield* store.update(new HandleRecord({ ...record, status: "working", taskId }))
  })

/** Turns the file back into what version 9 wrote: the task id only in the body, under the v3 index. */
const toVersion9 = (filename: string) => {
  const old = new Database(filename)
  old.exec(`DROP INDEX handles_intents;
    DROP INDEX handles_task_id;
    ALTER TABLE handles DROP COLUMN task_id;
    ALTER TABLE handles DROP COLUMN poll_interval_ms;
    ALTER TABLE handles DROP COLUMN cancel_unsent;
    CREATE UNIQUE INDEX handles_task ON handles (server_id, json_extract(body, '$.taskId'))
      WHERE json_type(body, '$.taskId') = 'text';
    DELETE FROM mcp_handles_migrations WHERE migration_id > 9;`)
  old.close()
}

const held = [
  { key: "a", serverId: "srv", taskId: "task-a" },
  { key: "b", serverId: "srv", taskId: "task-b" },
  { key: "c", serverId: "srv-2", taskId: "task-a" },
  { key: "d", serverId: "srv", taskId: null },
]

describe("migration 10: the task id column", () => {
  it.effect("a version 9 file with rows is migrated: every task id found, a second holder refused", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(filename, (store) =>
        Effect.forEach(held, ({ key, serverId, taskId }) => call(store, key, serverId, taskId)),
      )
      toVersion9(filename)

      const refused = yield* withStore(filename, (store) =>
        Effect.gen(function* () {
          const d = Option.getOrThrow(yield* store.get("s", "d"))
          return yield* Effect.flip(
            store.update(new HandleRecord({ ...d, status: "working", taskId: "task-b" })),
          )
        }),
      )
      expect(refused._tag).toBe("TaskIdTaken")

      const db = new Database(filename, { readonly: true })
      const rows = db
        .prepare("SELECT key, server_id AS serverId, task_id AS taskId FROM handles ORDER BY key")
        .all()
      const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all()
      const versions = db.prepare("SELECT max(migration_id) AS v FROM mcp_handles_migrations").get()
      db.close()
      expect(rows).toEqual(held)
      const names = indexes.map((row) => (row as { name: string }).name)
      expect(names).toContain("handles_task_id")
      expect(names).not.toContain("handles_task")
      expect(versions).toEqual({ v: latestVersion })
    }),
  )

  it.effect("every write keeps the column in step with the body", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "handles.db")
      yield* withStore(filename, (store) =>
        Effect.gen(function* () {
          yield* call(store, "a", "srv", "first")
          const a = Option.getOrThrow(yield* store.get("s", "a"))
          // A routine write that changes the task id too takes the full statement.
          yield* store.update(new HandleRecord({ ...a, taskId: "second" }), { routine: true })
          yield* call(store, "b", "srv", "first")
        }),
      )
      const db = new Database(filename, { readonly: true })
      const rows = db
        .prepare(
          "SELECT key, task_id AS column, json_extract(body, '$.taskId') AS body FROM handles ORDER BY key",
        )
        .all()
      db.close()
      expect(rows).toEqual([
        { key: "a", column: "second", body: "second" },
        { key: "b", column: "first", body: "first" },
      ])
    }),
  )
})
