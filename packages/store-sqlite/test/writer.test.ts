import { describe, expect, it } from "@effect/vitest"
import { StoreError } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Writer from "../src/internal/writer.js"

/** A transactor and writes that record every statement, and can be told to fail some of them. */
const fakeDatabase = (failOn: (text: string) => boolean = () => false) => {
  const log: Array<string> = []
  const exec = (text: string) => {
    log.push(text)
    if (failOn(text)) throw new Error(`injected failure of ${text}`)
  }
  const transactor: Writer.Transactor = {
    begin: () => exec("BEGIN IMMEDIATE"),
    commit: () => exec("COMMIT"),
    rollback: () => exec("ROLLBACK"),
  }
  return { log, transactor, exec }
}

type Fake = ReturnType<typeof fakeDatabase>

const writerOn = (fake: Fake, maxBatchSize = 1024, commitDelayMs = 0) =>
  Writer.make({ transactor: fake.transactor, maxBatchSize, commitDelayMs })

/** A write that records itself, and records when its caller resumed. */
const write = (writer: Writer.Writer, fake: Fake, name: string, routine = false) =>
  writer
    .submit(
      name,
      () => {
        fake.exec(name)
        return Either.void
      },
      { routine },
    )
    .pipe(Effect.tap(() => Effect.sync(() => fake.log.push(`resumed ${name}`))))

describe("group commit", () => {
  it.scoped("concurrent writes share one transaction, and callers resume after its commit", () =>
    Effect.gen(function* () {
      const fake = fakeDatabase()
      const { log } = fake
      const writer = yield* writerOn(fake)
      yield* Effect.all(
        Array.from({ length: 200 }, (_, i) => write(writer, fake, `w${i}`)),
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
      const fake = fakeDatabase()
      const { log } = fake
      const writer = yield* writerOn(fake, 10)
      yield* Effect.all(
        Array.from({ length: 100 }, (_, i) => write(writer, fake, `w${i}`)),
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
      const fake = fakeDatabase()
      const { log } = fake
      const writer = yield* writerOn(fake)
      const outcomes = yield* Effect.all(
        Array.from({ length: 20 }, (_, i) =>
          Effect.either(
            i === 7
              ? writer.submit("conflict", () =>
                  Either.left(new StoreError({ operation: "x", message: "lost the CAS" })),
                )
              : write(writer, fake, `w${i}`),
          ),
        ),
        { concurrency: "unbounded" },
      )
      expect(outcomes.filter(Either.isLeft)).toHaveLength(1)
      expect(outcomes[7]?._tag).toBe("Left")
      expect(log.filter((line) => line === "ROLLBACK")).toHaveLength(0)
    }),
  )

  it.scoped("a failing statement rolls back, fails only its write, and the rest commit without it", () =>
    Effect.gen(function* () {
      const fake = fakeDatabase((text) => text === "bad")
      const { log } = fake
      const writer = yield* writerOn(fake)
      const outcomes = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) => Effect.either(write(writer, fake, i === 4 ? "bad" : `w${i}`))),
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
      const fake = fakeDatabase((text) => text === "COMMIT")
      const { log } = fake
      const writer = yield* writerOn(fake)
      const outcomes = yield* Effect.all(
        Array.from({ length: 5 }, (_, i) => Effect.either(write(writer, fake, `w${i}`))),
        { concurrency: "unbounded" },
      )
      for (const o of outcomes) expect(Either.isLeft(o) && o.left).toBeInstanceOf(StoreError)
      expect(log.filter((line) => line.startsWith("resumed"))).toHaveLength(0)
    }),
  )

  it.effect(
    "writes submitted before close are committed; an interrupted caller's queued write is dropped",
    () =>
      Effect.gen(function* () {
        const fake = fakeDatabase()
        const outcomes = yield* Effect.scoped(
          Effect.gen(function* () {
            const writer = yield* writerOn(fake)
            const kept = yield* Effect.fork(write(writer, fake, "kept"))
            const dropped = yield* Effect.fork(write(writer, fake, "dropped"))
            yield* Effect.yieldNow()
            yield* Fiber.interrupt(dropped)
            return kept
          }),
        ).pipe(Effect.flatMap(Fiber.join))
        expect(outcomes).toBeUndefined()
        expect(fake.log).toEqual(["BEGIN IMMEDIATE", "kept", "COMMIT", "resumed kept"])
      }),
  )

  it.effect("writes after close fail with a StoreError instead of hanging", () =>
    Effect.gen(function* () {
      const writer = yield* Effect.scoped(writerOn(fakeDatabase()))
      const outcome = yield* Effect.either(writer.submit("late", () => Either.void))
      expect(Either.isLeft(outcome) && outcome.left).toBeInstanceOf(StoreError)
    }),
  )
})

// The commit delay is a real timer (the store's writes are real I/O): these tests run on the
// live clock, with delays far from what a slow machine could reach by accident.
describe("routine writes", () => {
  it.scopedLive("wait for the commit delay, and commit with the next other write at once", () =>
    Effect.gen(function* () {
      const fake = fakeDatabase()
      const writer = yield* writerOn(fake, 1024, 60_000)
      const first = yield* Effect.fork(write(writer, fake, "r1", true))
      const second = yield* Effect.fork(write(writer, fake, "r2", true))
      yield* Effect.sleep("20 millis")
      expect(fake.log, "nothing is written while the delay runs").toEqual([])
      yield* write(writer, fake, "other")
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      expect(fake.log.slice(0, 5)).toEqual(["BEGIN IMMEDIATE", "r1", "r2", "other", "COMMIT"])
      expect(fake.log.slice(5).sort()).toEqual(["resumed other", "resumed r1", "resumed r2"])
    }),
  )

  it.scopedLive("a lone routine write commits once its delay has run out", () =>
    Effect.gen(function* () {
      const fake = fakeDatabase()
      const writer = yield* writerOn(fake, 1024, 30)
      const started = performance.now()
      yield* write(writer, fake, "r", true)
      // Timers never fire early by more than the clock's rounding.
      expect(performance.now() - started).toBeGreaterThanOrEqual(29)
      expect(fake.log).toEqual(["BEGIN IMMEDIATE", "r", "COMMIT", "resumed r"])
    }),
  )

  it.scopedLive("without a delay, a routine write commits at the next turn like any other", () =>
    Effect.gen(function* () {
      const fake = fakeDatabase()
      const writer = yield* writerOn(fake, 1024, 0)
      yield* Effect.all([write(writer, fake, "r", true), write(writer, fake, "w")], {
        concurrency: "unbounded",
      })
      expect(fake.log.slice(0, 4)).toEqual(["BEGIN IMMEDIATE", "r", "w", "COMMIT"])
    }),
  )

  it.live("closing the writer commits a waiting routine write at once", () =>
    Effect.gen(function* () {
      const fake = fakeDatabase()
      const waiting = yield* Effect.scoped(
        Effect.gen(function* () {
          const writer = yield* writerOn(fake, 1024, 60_000)
          const routine = yield* Effect.fork(write(writer, fake, "r", true))
          yield* Effect.yieldNow()
          return routine
        }),
      )
      yield* Fiber.join(waiting)
      expect(fake.log).toEqual(["BEGIN IMMEDIATE", "r", "COMMIT", "resumed r"])
    }),
  )
})
