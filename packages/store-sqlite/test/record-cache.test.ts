/**
 * The record cache (internal/record-cache.ts): a row read back as this process wrote it is the
 * written record, not a new decode; any other row, whoever changed it and however, is read as it
 * now is. The contract suite runs with the cache on (default) and off (`recordCacheSize: 0`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import type { NewHandle } from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const T0 = 1_700_000_000_000

const handle = (key: string): NewHandle => ({
  scope: "tenant-a",
  key,
  serverId: "srv-1",
  tool: "slow_compute",
  arguments: { n: 1 },
  argumentsHash: "hash-1",
  owner: "instance-1",
  leaseMs: 30_000,
  now: T0,
})

const working = (record: HandleRecord, n: number, fields: Partial<HandleRecord> = {}): HandleRecord =>
  new HandleRecord({
    ...record,
    status: "working",
    taskId: `task-${record.key}`,
    polls: n,
    nextPollAt: T0 + n,
    ...fields,
  })

const tempFile = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-cache-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
  ),
  (dir) => path.join(dir, "handles.db"),
)

const read = (
  store: { get: (scope: string, key: string) => Effect.Effect<Option.Option<HandleRecord>, unknown> },
  key: string,
) => Effect.map(store.get("tenant-a", key), Option.getOrThrow)

describe("SqliteStore record cache", () => {
  it.scoped("a row read back as written is the written record; with the cache off, a new decode of it", () =>
    Effect.gen(function* () {
      for (const [size, kept] of [
        [undefined, true],
        [0, false],
      ] as const) {
        const store = yield* SqliteStore.make({
          filename: yield* tempFile,
          ...(size === undefined ? {} : { recordCacheSize: size }),
        })
        const { record } = yield* store.insertOrGet(handle("key-1"))
        const written = yield* store.update(working(record, 1))
        const back = yield* read(store, "key-1")
        expect(back).toEqual(written)
        expect(back === written).toBe(kept)
      }
    }),
  )

  it.scoped("a body edited outside the store, to the same length and version, is read as edited", () =>
    Effect.gen(function* () {
      const filename = yield* tempFile
      const store = yield* SqliteStore.make({ filename })
      const { record } = yield* store.insertOrGet(handle("key-1"))
      yield* store.update(working(record, 1))
      const db = new Database(filename)
      try {
        const edited = db
          .prepare(
            `UPDATE handles SET body = replace(body, '"slow_compute"', '"fast_compute"') WHERE key = ?`,
          )
          .run("key-1")
        expect(edited.changes).toBe(1)
      } finally {
        db.close()
      }
      expect((yield* read(store, "key-1")).tool).toBe("fast_compute")
    }),
  )

  it.scoped(
    "a lease renewed, a row claimed, or a row written by another store on the file is read as it now is",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempFile
        const a = yield* SqliteStore.make({ filename })
        const b = yield* SqliteStore.make({ filename })
        const { record } = yield* a.insertOrGet(handle("key-1"))
        const first = yield* a.update(working(record, 1))

        expect(
          yield* a.renewLease({ scope: "tenant-a", key: "key-1", owner: "instance-1", until: T0 + 99_000 }),
        ).toBe(true)
        expect((yield* read(a, "key-1")).leaseExpiresAt).toBe(T0 + 99_000)

        const byB = yield* b.update(working(yield* read(b, "key-1"), 2))
        expect(byB.version).toBe(first.version + 1)
        expect(yield* read(a, "key-1")).toEqual(byB)

        const [claimed] = yield* a.claimDue({
          owner: "instance-2",
          now: T0 + 200_000,
          leaseMs: 30_000,
          limit: 10,
        })
        expect(claimed?.leaseOwner).toBe("instance-2")
        expect(yield* read(b, "key-1")).toEqual(claimed)
      }),
  )

  it.scoped("keeps open rows only, and at most recordCacheSize of them, the oldest write dropped first", () =>
    Effect.gen(function* () {
      const store = yield* SqliteStore.make({ filename: yield* tempFile, recordCacheSize: 1 })
      const one = (yield* store.insertOrGet(handle("key-1"))).record
      const two = (yield* store.insertOrGet(handle("key-2"))).record
      const twoBack = yield* read(store, "key-2")
      const oneBack = yield* read(store, "key-1")
      expect(twoBack).toBe(two)
      expect(oneBack).not.toBe(one)
      expect(oneBack).toEqual(one)

      const done = yield* store.update(working(oneBack, 1, { status: "completed", settledAt: T0 + 5 }))
      const doneBack = yield* read(store, "key-1")
      expect(doneBack).not.toBe(done)
      expect(doneBack).toEqual(done)
    }),
  )
})
