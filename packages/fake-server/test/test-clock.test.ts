import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import * as FakeServer from "../src/FakeServer.js"
import type * as ServerClock from "../src/ServerClock.js"
import { request } from "./helpers.js"

/** The server reads time from the Effect clock of the running test: TestClock drives it. */
const effectClock = Effect.map(
  Effect.clock,
  (clock): ServerClock.ServerClock => ({ now: () => clock.unsafeCurrentTimeMillis() }),
)

const send = (
  server: ReturnType<typeof FakeServer.unsafeMake>,
  method: string,
  params: Record<string, unknown>,
) => Effect.promise(async () => (await (await server.handler(request(method, params))).json()).result)

describe("driven by Effect's TestClock", () => {
  it.effect("a task's life follows simulated time exactly, with no real waiting", () =>
    Effect.gen(function* () {
      const clock = yield* effectClock
      const server = FakeServer.unsafeMake(
        {
          tools: [
            {
              name: "week_long",
              durationMs: Duration.toMillis(Duration.days(7)),
              ttlMs: Duration.toMillis(Duration.days(30)),
              pollIntervalMs: [
                { afterMs: 0, pollIntervalMs: 1000 },
                { afterMs: Duration.toMillis(Duration.days(1)), pollIntervalMs: 60_000 },
              ],
            },
          ],
        },
        { clock, notifyEveryMs: 0 },
      )
      const created = yield* send(server, "tools/call", { name: "week_long" })
      expect(created.createdAt).toBe(new Date(0).toISOString())

      yield* TestClock.adjust(Duration.days(2))
      const midway = yield* send(server, "tasks/get", { taskId: created.taskId })
      expect(midway).toMatchObject({ status: "working", pollIntervalMs: 60_000 })

      yield* TestClock.adjust(Duration.days(5))
      const done = yield* send(server, "tasks/get", { taskId: created.taskId })
      expect(done).toMatchObject({
        status: "completed",
        lastUpdatedAt: new Date(Duration.toMillis(Duration.days(7))).toISOString(),
      })
      expect(server.ledger.task(created.taskId)?.polls).toEqual([
        Duration.toMillis(Duration.days(2)),
        Duration.toMillis(Duration.days(7)),
      ])
    }),
  )
})
