import { describe, expect, it } from "@effect/vitest"
import * as EncryptedStore from "@mcp-handles/core/EncryptedStore"
import * as Encryption from "@mcp-handles/core/Encryption"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import { MemoryStore } from "@mcp-handles/store-memory"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const keys = (current: string, ...ids: ReadonlyArray<string>): Encryption.Keys => ({
  current,
  keys: new Map([current, ...ids].map((id) => [id, new Uint8Array(32).fill(id.charCodeAt(id.length - 1))])),
})

/** Writes `n` calls through `store` (sealed by it), each with a task id, a result and an answer. */
const writeCalls = (store: HandleStore.HandleStore, n: number, from = 0) =>
  Effect.forEach(
    Array.from({ length: n }, (_, i) => i + from),
    (i) =>
      Effect.gen(function* () {
        const { record } = yield* store.insertOrGet({
          scope: `scope-${i % 3}`,
          key: `k${i}`,
          serverId: "srv",
          tool: "t",
          arguments: { secret: `arg-${i}` },
          argumentsHash: `h${i}`,
          owner: "me",
          leaseMs: 1000,
          now: i,
        })
        return yield* store.update(
          new HandleRecord.HandleRecord(
            {
              ...record,
              taskId: `task-${i}`,
              status: "completed",
              result: { content: [{ type: "text", text: `result-${i}` }] },
              answers: { q: new HandleRecord.InputAnswer({ response: `answer-${i}`, acknowledged: true }) },
            },
            true,
          ),
        )
      }),
  )

const allRows = (store: HandleStore.HandleStore) =>
  Effect.map(store.list({ limit: 1000 }), (page) => page.records)

describe("EncryptedStore", () => {
  it.effect("rotation: new writes use the newest key; rekey re-seals old rows in resumable batches", () =>
    Effect.gen(function* () {
      const raw = yield* MemoryStore.make
      const k1 = yield* Encryption.make(keys("k1"))
      yield* writeCalls(EncryptedStore.make(raw, k1), 7)
      const k2 = yield* Encryption.make(keys("k2", "k1"))
      const rotated = EncryptedStore.make(raw, k2)
      yield* writeCalls(rotated, 2, 7)
      const before = yield* allRows(raw)
      expect(
        before
          .filter((row) => EncryptedStore.keyIds(row).has("k2"))
          .map((row) => row.key)
          .sort(),
      ).toEqual(["k7", "k8"])

      // A full run in batches of 3, then one resumed from its first cursor (only reads).
      const batches: Array<EncryptedStore.RekeyReport> = []
      yield* EncryptedStore.rekey(raw, k2, {
        batchSize: 3,
        onBatch: (report) => Effect.sync(() => batches.push(report)),
      })
      expect(batches.length).toBe(3)
      expect(batches.at(-1)).toMatchObject({ examined: 9, rekeyed: 7, skipped: 0, cursor: null })
      const resumed = yield* EncryptedStore.rekey(raw, k2, {
        batchSize: 3,
        from: batches[0]?.cursor ?? undefined,
      })
      expect(resumed).toMatchObject({ examined: 6, rekeyed: 0 })

      for (const row of yield* allRows(raw)) expect([...EncryptedStore.keyIds(row)]).toEqual(["k2"])
      // k1 can go now: a process with k2 alone reads every row back.
      const only2 = EncryptedStore.make(raw, yield* Encryption.make(keys("k2")))
      const rows = yield* allRows(only2)
      expect(rows.map((row) => row.taskId).sort()).toEqual(
        Array.from({ length: 9 }, (_, i) => `task-${i}`).sort(),
      )
      const k3 = Option.getOrThrow(yield* only2.get("scope-0", "k3"))
      expect(k3.arguments).toEqual({ secret: "arg-3" })
      expect(k3.result?.content).toEqual([{ type: "text", text: "result-3" }])
      expect(k3.answers.q?.response).toBe("answer-3")
    }),
  )

  it.effect("rekey seals rows written with encryption off; a row under a missing key fails naming it", () =>
    Effect.gen(function* () {
      const raw = yield* MemoryStore.make
      yield* writeCalls(raw, 2)
      const k1 = yield* Encryption.make(keys("k1"))
      expect(yield* EncryptedStore.rekey(raw, k1)).toMatchObject({ examined: 2, rekeyed: 2 })
      const rows = yield* allRows(raw)
      expect(JSON.stringify(rows)).not.toMatch(/task-|arg-|result-|answer-/)
      const stranger = yield* Encryption.make(keys("k9"))
      const error = yield* Effect.flip(EncryptedStore.rekey(raw, stranger))
      expect(error.cause).toBeInstanceOf(Encryption.MissingKey)
      expect(error.message).toContain('"k1"')
    }),
  )

  it.effect("the same task id on two rows is still refused (the unique index sees the sealed id)", () =>
    Effect.gen(function* () {
      const raw = yield* MemoryStore.make
      const store = EncryptedStore.make(raw, yield* Encryption.make(keys("k1")))
      yield* writeCalls(store, 1)
      const { record } = yield* store.insertOrGet({
        scope: "scope-0",
        key: "other",
        serverId: "srv",
        tool: "t",
        arguments: null,
        argumentsHash: "x",
        owner: "me",
        leaseMs: 1000,
        now: 5,
      })
      const taken = yield* Effect.flip(
        store.update(new HandleRecord.HandleRecord({ ...record, taskId: "task-0", status: "working" }, true)),
      )
      expect(taken._tag).toBe("TaskIdTaken")
    }),
  )
})
