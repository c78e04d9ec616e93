import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { StoreError } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Writer from "../src/internal/writer.js"

/** A connection that records every statement, and can be told to fail some of them. */
const fakeConnection = (failOn: (text: string) => boolean = () => false) => {
  const log: Array<string> = []
  const execute = (text: string) =>
    Effect.suspend(() => {
      log.push(text)
      return failOn(text)
        ? Effect.fail(new SqlError({ message: `injected failure of ${text}` }))
        : Effect.succeed([] as ReadonlyArray<unknown>)
    })
  const connection = {
    execute,
    executeRaw: execute,
    executeValues: execute,
    executeUnprepared: execute,
    executeStream: () => {
      throw new Error("not used")
    },
  } as unknown as Connection
  return { log, connection }
}

const writerOn = (connection: Connection, maxBatchSize = 1024) =>
  Writer.make({ reserve: Effect.succeed(connection), maxBatchSize })

/** A write that records itself, and records when its caller resumed. */
const write = (writer: Writer.Writer, log: Array<string>, name: string) =>
  writer
    .submit(name, (connection) => connection.executeRaw(name, []))
    .pipe(Effect.tap(() => Effect.sync(() => log.push(`resumed ${name}`))))

describe("group commit", () => {
  it.scoped("concurrent writes share one transaction, and callers resume after its commit", () =>
    Effect.gen(function* () {
      const { log, connection } = fakeConnection()
      const writer = yield* writerOn(connection)
      yield* Effect.all(
        Array.from({ length: 200 }, (_, i) => write(writer, log, `w${i}`)),
        { concurrency: "unbounded" },
      )
      const begins = log.filter((line) => line === "BEGIN IMMEDIATE").length
      expect(begins).toBeLessThanOrEqual(2)
      for (let i = 0; i < 200; i++) {
        const at = log.indexOf(`w${i}`)
        const resumed = log.indexOf(`resumed w${i}`)
        const commit = log.indexOf("COMMIT", at)
        expect(at).toBeGreaterThan(-1)
        expect(commit).toBeGreaterThan(at)
        expect(resumed).toBeGreaterThan(commit)
      }
    }),
  )

  it.scoped("respects the batch size", () =>
    Effect.gen(function* () {
      const { log, connection } = fakeConnection()
      const writer = yield* writerOn(connection, 10)
      yield* Effect.all(
        Array.from({ length: 100 }, (_, i) => write(writer, log, `w${i}`)),
        { concurrency: "unbounded" },
      )
      const sizes: Array<number> = []
      for (const line of log) {
        if (line === "BEGIN IMMEDIATE") sizes.push(0)
        else if (/^w\d+$/.test(line)) sizes[sizes.length - 1] = (sizes[sizes.length - 1] ?? 0) + 1
      }
      expect(sizes.length).toBeGreaterThanOrEqual(10)
      for (const size of sizes) expect(size).toBeLessThanOrEqual(10)
    }),
  )

  it.scoped("a write's own failure fails only that write", () =>
    Effect.gen(function* () {
      const { log, connection } = fakeConnection()
      const writer = yield* writerOn(connection)
      const outcomes = yield* Effect.all(
        Array.from({ length: 20 }, (_, i) =>
          Effect.either(
            i === 7
              ? writer.submit("conflict", () =>
                  Effect.fail(new StoreError({ operation: "x", message: "lost the CAS" })),
                )
              : write(writer, log, `w${i}`),
          ),
        ),
        { concurrency: "unbounded" },
      )
      expect(outcomes.filter(Either.isLeft)).toHaveLength(1)
      expect(Either.isLeft(outcomes[7] ?? Either.right(0))).toBe(true)
      expect(log.filter((line) => line === "ROLLBACK")).toHaveLength(0)
    }),
  )

  it.scoped("a failing statement rolls back, fails only its write, and the rest commit without it", () =>
    Effect.gen(function* () {
      const { log, connection } = fakeConnection((text) => text === "bad")
      const writer = yield* writerOn(connection)
      const outcomes = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) => Effect.either(write(writer, log, i === 4 ? "bad" : `w${i}`))),
        { concurrency: "unbounded" },
      )
      const failed = outcomes.flatMap((o, i) => (Either.isLeft(o) ? [i] : []))
      expect(failed).toEqual([4])
      const left = outcomes[4]
      expect(left && Either.isLeft(left) && left.left).toBeInstanceOf(StoreError)
      expect(log).toContain("ROLLBACK")
      // Every good write is in a transaction that committed; the bad one in none.
      const committed: Array<string> = []
      let open: Array<string> = []
      for (const line of log) {
        if (line === "BEGIN IMMEDIATE") open = []
        else if (line === "COMMIT") committed.push(...open)
        else open.push(line)
      }
      expect(committed).not.toContain("bad")
      for (const i of [0, 1, 2, 3, 5, 6, 7, 8, 9]) expect(committed).toContain(`w${i}`)
    }),
  )

  it.scoped("a failed commit fails every write of the batch", () =>
    Effect.gen(function* () {
      const { log, connection } = fakeConnection((text) => text === "COMMIT")
      const writer = yield* writerOn(connection)
      const outcomes = yield* Effect.all(
        Array.from({ length: 5 }, (_, i) => Effect.either(write(writer, log, `w${i}`))),
        { concurrency: "unbounded" },
      )
      for (const o of outcomes) expect(Either.isLeft(o) && o.left).toBeInstanceOf(StoreError)
      expect(log.filter((line) => line.startsWith("resumed"))).toHaveLength(0)
    }),
  )

  it.effect("writes after close fail with a StoreError instead of hanging", () =>
    Effect.gen(function* () {
      const { connection } = fakeConnection()
      const writer = yield* Effect.scoped(writerOn(connection))
      const outcome = yield* Effect.either(writer.submit("late", () => Effect.void))
      expect(Either.isLeft(outcome) && outcome.left).toBeInstanceOf(StoreError)
    }),
  )
})
