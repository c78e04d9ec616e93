import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type * as Cipher from "@mcp-handles/core/Cipher"
import * as EncryptedStore from "@mcp-handles/core/EncryptedStore"
import * as Encryption from "@mcp-handles/core/Encryption"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import { MemoryStore } from "@mcp-handles/store-memory"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scheduler from "effect/Scheduler"

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

/**
 * A cipher that answers synchronously, as `NodeCipher` does (it only copies: the shape of one,
 * no secrecy), so that a test sees the decorator's own effect steps.
 */
const synchronousCipher: Cipher.Cipher = {
  name: "synchronous stand-in",
  key: () =>
    Promise.resolve({
      seal: (_iv, plain) => {
        const sealed = new Uint8Array(plain.length + 16)
        sealed.set(plain)
        return sealed
      },
      open: (_iv, sealed) => sealed.slice(0, -16),
      mac: (data) => {
        const mac = new Uint8Array(32)
        mac.set(data.subarray(0, 32))
        return mac
      },
    }),
}

/** `effect`'s result and how many steps its fiber ran (the scheduler is asked once a step). */
const countingSteps = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.suspend(() => {
    let steps = 0
    const scheduler = Scheduler.make(
      (task, priority) => Scheduler.defaultScheduler.scheduleTask(task, priority),
      () => {
        steps++
        return false
      },
    )
    return Effect.map(Effect.withScheduler(effect, scheduler), (value) => ({ value, steps }))
  })

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

  it.effect("a sealed value copied into another row, or another field, does not open: DecryptFailed", () =>
    Effect.gen(function* () {
      const raw = yield* MemoryStore.make
      const store = EncryptedStore.make(raw, yield* Encryption.make(keys("k1")))
      yield* writeCalls(store, 2)
      const rawRow = (scope: string, key: string) => Effect.map(raw.get(scope, key), Option.getOrThrow)
      const first = yield* rawRow("scope-0", "k0")
      const second = yield* rawRow("scope-1", "k1")
      // Another row's arguments, as someone with write access to the database could copy them.
      yield* raw.update(new HandleRecord.HandleRecord({ ...second, arguments: first.arguments }, true))
      const swapped = yield* Effect.flip(store.get("scope-1", "k1"))
      expect(swapped.cause).toBeInstanceOf(Encryption.DecryptFailed)
      expect(swapped.message).toContain("copied from another row or field")
      // The row's own result envelope put in its arguments field.
      const resultEnvelope = (first.result as unknown as Record<string, unknown>)[EncryptedStore.sealedField]
      yield* raw.update(
        new HandleRecord.HandleRecord(
          { ...first, arguments: { [EncryptedStore.sealedField]: resultEnvelope as string } },
          true,
        ),
      )
      expect((yield* Effect.flip(store.get("scope-0", "k0"))).cause).toBeInstanceOf(Encryption.DecryptFailed)
    }),
  )

  it.effect("values sealed before they were bound to their row (mhe1) still open, and rekey binds them", () =>
    Effect.gen(function* () {
      // Written by the release before this one, under key k1 (32 bytes of 0x31).
      const old = {
        args: "mhe1.k1.fOnP8_dZ-8JYo3eB.MmTl62XVk-VhIYouhPbYH3Ms0MKqVw1onHNj2mtVqqVW0vhd",
        result:
          "mhe1.k1.Sehw3Uus3Duxl5FC.xlu6UHWcky2hRnSKBmzs8CUt6rM3eD2HgCZzYSwH-sCHo5f8IBAx6AUCyg201dzBs4jFSYoKgqmq-dmMomfGCBc",
        answers:
          "mhe1.k1.by2Tygr4I-LrnLzd.7xkkL-llRyXzI-_vUyftOhBSA7GUy745QOBHRV3GPKElBrtZkMvEgDzZTlpEieYghhp-0jYOdDkc3sYqtoxb3fscVg",
        taskId: "mhi1.k1.IO18HqOk6_WViZIXliRs2EYFd7-k2_XIQ5MJgAcayo4.8L793H8fXUhuSGyVAQoGkZ1QCjuJLYKl",
      }
      const raw = yield* MemoryStore.make
      const { record } = yield* raw.insertOrGet({
        scope: "s",
        key: "old",
        serverId: "srv",
        tool: "t",
        arguments: { [EncryptedStore.sealedField]: old.args },
        argumentsHash: "h",
        owner: "me",
        leaseMs: 1000,
        now: 0,
      })
      yield* raw.update(
        new HandleRecord.HandleRecord(
          {
            ...record,
            taskId: old.taskId,
            status: "completed",
            result: { content: [], [EncryptedStore.sealedField]: old.result },
            answers: {
              [EncryptedStore.sealedField]: new HandleRecord.InputAnswer({
                response: old.answers,
                acknowledged: false,
              }),
            },
          },
          true,
        ),
      )
      const k1 = yield* Encryption.make(keys("k1"))
      const store = EncryptedStore.make(raw, k1)
      const expectOpens = Effect.gen(function* () {
        const opened = Option.getOrThrow(yield* store.get("s", "old"))
        expect(opened.taskId).toBe("task-old")
        expect(opened.arguments).toEqual({ secret: "arg-old" })
        expect(opened.result?.content).toEqual([{ type: "text", text: "result-old" }])
        expect(opened.answers.q?.response).toBe("answer-old")
      })
      yield* expectOpens
      expect(yield* EncryptedStore.rekey(raw, k1)).toMatchObject({ examined: 1, rekeyed: 1 })
      const rekeyed = JSON.stringify(yield* allRows(raw))
      expect(rekeyed).not.toContain("mhe1.")
      // The arguments, the result and the answers, bound now; and the arguments' hash, sealed now.
      expect(rekeyed.match(/mhe2\.k1\./g)?.length).toBe(4)
      yield* expectOpens
    }),
  )

  it.effect("a write that leaves a field as it was keeps its envelope; a changed field is sealed again", () =>
    Effect.gen(function* () {
      const raw = yield* MemoryStore.make
      const store = EncryptedStore.make(raw, yield* Encryption.make(keys("k1")))
      const [written] = yield* writeCalls(store, 1)
      const stored = () =>
        Effect.map(raw.get("scope-0", "k0"), (row) => {
          const { arguments: args, result, answers } = Option.getOrThrow(row)
          return JSON.stringify([args, result, answers])
        })
      const before = yield* stored()
      const again = yield* store.update(
        new HandleRecord.HandleRecord({ ...(written as HandleRecord.HandleRecord), updatedAt: 7 }, true),
      )
      expect(yield* stored()).toBe(before)
      // Read back (fresh objects), then written: still the same envelopes.
      const read = Option.getOrThrow(yield* store.get("scope-0", "k0"))
      expect(read.version).toBe(again.version)
      yield* store.update(new HandleRecord.HandleRecord({ ...read, updatedAt: 8 }, true))
      expect(yield* stored()).toBe(before)
      // New arguments (equal in value, another object): sealed afresh, with a new IV.
      yield* store.update(
        new HandleRecord.HandleRecord(
          { ...Option.getOrThrow(yield* store.get("scope-0", "k0")), arguments: { secret: "arg-0" } },
          true,
        ),
      )
      const after = JSON.parse(yield* stored()) as Array<unknown>
      const was = JSON.parse(before) as Array<unknown>
      expect(after[0]).not.toEqual(was[0])
      expect(after.slice(1)).toEqual(was.slice(1))
    }),
  )

  it.effect(
    "the arguments' hash is sealed at rest, bound to its row; rows with it in clear still open and rekey seals them",
    () =>
      Effect.gen(function* () {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-hash-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        // Every byte of the database's files (the WAL too): what a copy of them gives away.
        const fileBytes = () =>
          fs
            .readdirSync(dir)
            .map((name) => fs.readFileSync(path.join(dir, name)).toString("latin1"))
            .join("\n")
        const raw = yield* SqliteStore.make({ filename: path.join(dir, "tasks.db") })
        const k1 = yield* Encryption.make(keys("k1"))
        const store = EncryptedStore.make(raw, k1)
        const hashOf = (key: string) => `sha256-of-the-arguments-of-${key}`
        const begin = (key: string) =>
          store.insertOrGet({
            scope: "s",
            key,
            serverId: "srv",
            tool: "t",
            arguments: { n: 1 },
            argumentsHash: hashOf(key),
            owner: "me",
            leaseMs: 1000,
            now: 0,
          })
        const rawRow = (key: string) => Effect.map(raw.get("s", key), Option.getOrThrow)
        const opened = (key: string) => Effect.map(store.get("s", key), Option.getOrThrow)

        const { record } = yield* begin("new")
        expect(record.argumentsHash).toBe(hashOf("new"))
        const sealedHash = (yield* rawRow("new")).argumentsHash
        expect(sealedHash.startsWith("mhe2.k1.")).toBe(true)
        yield* store.update(
          new HandleRecord.HandleRecord({ ...record, taskId: "task-new", status: "working" }, true),
        )
        // The engine sees it in clear (a key reused with other arguments is told apart by it).
        expect((yield* opened("new")).argumentsHash).toBe(hashOf("new"))
        expect((yield* begin("new")).record.argumentsHash).toBe(hashOf("new"))
        // A later write keeps its envelope: not sealed again on every write.
        expect((yield* rawRow("new")).argumentsHash).toBe(sealedHash)
        expect(fileBytes()).toContain(sealedHash)
        expect(fileBytes()).not.toContain(hashOf("new"))

        // Bound to its row: copied into another row's hash, it does not open there.
        yield* begin("copy")
        yield* raw.update(
          new HandleRecord.HandleRecord({ ...(yield* rawRow("copy")), argumentsHash: sealedHash }, true),
        )
        expect((yield* Effect.flip(store.get("s", "copy"))).cause).toBeInstanceOf(Encryption.DecryptFailed)

        // A row written before the hash was sealed (everything else sealed, the hash in clear).
        yield* begin("old")
        yield* raw.update(
          new HandleRecord.HandleRecord({ ...(yield* rawRow("old")), argumentsHash: hashOf("old") }, true),
        )
        expect((yield* opened("old")).argumentsHash).toBe(hashOf("old"))
        expect(EncryptedStore.needsRekey(yield* rawRow("old"), "k1")).toBe(true)
        expect(EncryptedStore.needsRekey(yield* rawRow("new"), "k1")).toBe(false)
        yield* raw.update(
          new HandleRecord.HandleRecord({ ...(yield* rawRow("copy")), argumentsHash: hashOf("copy") }, true),
        )

        expect(yield* EncryptedStore.rekey(raw, k1)).toMatchObject({ examined: 3, rekeyed: 2, skipped: 0 })
        // Every row as a reader without the key gets it: no hash in clear.
        const atRest = JSON.stringify(yield* Effect.map(raw.list({ limit: 100 }), (page) => page.records))
        for (const key of ["new", "old", "copy"]) expect(atRest).not.toContain(hashOf(key))
        expect((yield* rawRow("old")).argumentsHash.startsWith("mhe2.k1.")).toBe(true)
        expect((yield* opened("old")).argumentsHash).toBe(hashOf("old"))
        expect((yield* opened("new")).argumentsHash).toBe(hashOf("new"))
      }).pipe(Effect.scoped),
  )

  it.effect(
    "a free text quoting the row's task ids is stored without them and read back whole; rekey takes them out of older rows",
    () =>
      Effect.gen(function* () {
        const raw = yield* MemoryStore.make
        const k1 = yield* Encryption.make(keys("k1"))
        const store = EncryptedStore.make(raw, k1)
        const [written] = yield* writeCalls(store, 1)
        const record = written as HandleRecord.HandleRecord
        const quoting = new HandleRecord.HandleRecord(
          {
            ...record,
            status: "failed",
            result: null,
            snapshot: new HandleRecord.TaskSnapshot(
              {
                statusMessage: "working on task-0",
                ttlMs: null,
                createdAt: 0,
                lastUpdatedAt: 0,
                receivedAt: 0,
              },
              true,
            ),
            error: new HandleRecord.RpcError(
              { code: -1, message: "task-0 failed", data: { id: "task-0" } },
              true,
            ),
            lastProblem: "lost task-0 and stray-task-77 ⟪sic⟫",
            progress: new HandleRecord.Progress({ progress: 1, message: "task-0 at 1", at: 0 }, true),
            strayTasks: [
              new HandleRecord.StrayTask({ taskId: "stray-task-77", receivedAt: 0, cancelSent: false }, true),
            ],
          },
          true,
        )
        const stored = yield* store.update(quoting)
        // A write answers the texts as the caller gave them.
        expect([stored.lastProblem, stored.error, stored.snapshot?.statusMessage]).toEqual([
          quoting.lastProblem,
          quoting.error,
          "working on task-0",
        ])
        const rawRow = () => Effect.map(raw.get("scope-0", "k0"), Option.getOrThrow)
        const atRest = JSON.stringify(yield* rawRow())
        expect(atRest).not.toMatch(/task-0|stray-task-77/)
        expect((yield* rawRow()).lastProblem).toBe("lost ⟪task id⟫ and ⟪stray task 1⟫ ⟪⟪sic⟫")
        const read = Option.getOrThrow(yield* store.get("scope-0", "k0"))
        expect([read.snapshot?.statusMessage, read.error, read.lastProblem, read.progress?.message]).toEqual([
          "working on task-0",
          quoting.error,
          quoting.lastProblem,
          "task-0 at 1",
        ])
        // A row sealed before its texts' ids were taken out: the ids sealed, the texts in clear.
        yield* raw.update(
          new HandleRecord.HandleRecord({ ...(yield* rawRow()), lastProblem: "lost task-0" }, true),
        )
        expect(yield* EncryptedStore.rekey(raw, k1)).toMatchObject({ examined: 1, rekeyed: 1 })
        expect((yield* rawRow()).lastProblem).toBe("lost ⟪task id⟫")
        expect(Option.getOrThrow(yield* store.get("scope-0", "k0")).lastProblem).toBe("lost task-0")
        // Done once: the next run only reads it.
        expect(yield* EncryptedStore.rekey(raw, k1)).toMatchObject({ examined: 1, rekeyed: 0 })
      }),
  )

  it.effect("with a synchronous cipher, a write seals all of its record's values in one effect step", () =>
    Effect.gen(function* () {
      const raw = yield* MemoryStore.make
      const store = EncryptedStore.make(raw, yield* Encryption.make(keys("k1"), synchronousCipher))
      const [written] = yield* writeCalls(store, 1)
      const record = written as HandleRecord.HandleRecord
      // Nothing to seal: every value is the one written before (its envelope is reused).
      const unchanged = yield* countingSteps(
        store.update(new HandleRecord.HandleRecord({ ...record, updatedAt: 7 }, true)),
      )
      // Every secret new: a task id, the arguments, the result, the input requests, the answers,
      // the session and a stray task id, seven values in all.
      const everything = yield* countingSteps(
        store.update(
          new HandleRecord.HandleRecord(
            {
              ...unchanged.value,
              taskId: "task-new",
              arguments: { secret: "new" },
              result: { content: [{ type: "text", text: "new" }] },
              inputRequests: { q2: { method: "elicitation/create" } },
              answers: { q2: new HandleRecord.InputAnswer({ response: "new", acknowledged: false }, true) },
              snapshot: new HandleRecord.TaskSnapshot(
                { ttlMs: null, createdAt: 0, lastUpdatedAt: 0, receivedAt: 0, session: "session-new" },
                true,
              ),
              strayTasks: [
                new HandleRecord.StrayTask({ taskId: "stray-new", receivedAt: 0, cancelSent: false }, true),
              ],
            },
            true,
          ),
        ),
      )
      expect(everything.steps).toBe(unchanged.steps)
      // All of them sealed at rest, and read back in clear.
      const atRest = JSON.stringify(Option.getOrThrow(yield* raw.get("scope-0", "k0")))
      expect(atRest).not.toMatch(/task-new|"secret"|session-new|stray-new|elicitation/)
      const read = Option.getOrThrow(yield* store.get("scope-0", "k0"))
      expect([read.taskId, read.arguments, read.snapshot?.session, read.strayTasks[0]?.taskId]).toEqual([
        "task-new",
        { secret: "new" },
        "session-new",
        "stray-new",
      ])
      expect(read.answers.q2?.response).toBe("new")
    }),
  )
})
