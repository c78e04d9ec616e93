import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Polling from "@mcp-handles/core/Polling"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import { MemoryStore } from "@mcp-handles/store-memory"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"

// A store whose every operation takes real time, as a disk or a network does.
const slowed = (store: HandleStore.HandleStore, ms: number): HandleStore.HandleStore =>
  Object.fromEntries(
    Object.entries(store).map(([op, fn]) => [
      op,
      // `now` is the store's clock, not an operation: passed through as it is.
      typeof fn !== "function"
        ? fn
        : (...args: Array<unknown>) =>
            Effect.delay(
              (fn as (...a: Array<unknown>) => Effect.Effect<unknown>)(...args),
              Duration.millis(ms),
            ),
    ]),
  ) as unknown as HandleStore.HandleStore

describe("reconcile", () => {
  it.live(
    "ends on a backlog larger than one poll interval's worth of work (no re-claiming what it rescheduled)",
    () =>
      Effect.gen(function* () {
        const memory = yield* MemoryStore.make
        const now = Date.now()
        for (let i = 0; i < 400; i++) {
          const { record } = yield* memory.insertOrGet({
            scope: "default",
            key: `k${i}`,
            serverId: "srv",
            tool: "t",
            arguments: {},
            argumentsHash: "h",
            owner: "dead",
            leaseMs: 0,
            now: now - 60_000,
          })
          yield* memory.update(
            new HandleRecord.HandleRecord({
              ...record,
              status: "working",
              taskId: `task-${i}`,
              snapshot: HandleRecord.TaskSnapshot.make({
                pollIntervalMs: 250,
                ttlMs: null,
                createdAt: now - 60_000,
                lastUpdatedAt: now - 60_000,
                receivedAt: now - 60_000,
              }),
              nextPollAt: now - 30_000,
              leaseOwner: null,
              leaseExpiresAt: null,
            }),
          )
        }
        const report = yield* Effect.flatMap(TaskClient.TaskClient, (client) => client.reconcile).pipe(
          Effect.provide(
            TaskClient.layer({
              servers: [{ name: "srv", url: "http://unused.test/mcp" }],
              background: false,
            }).pipe(
              Layer.provide(
                Layer.mergeAll(
                  Layer.succeed(HandleStore.HandleStore, slowed(memory, 2)),
                  HttpWire.layer({ fetch: () => Promise.reject(new Error("no polls expected")) }),
                  Polling.layer(),
                ),
              ),
            ),
          ),
          Effect.timeout("60 seconds"),
        )
        // Each row was acted on once: 400 rows, not thousands of re-claims.
        expect(report.resumed).toBe(400)
      }),
    90_000,
  )
})

describe("background reconciler", () => {
  it.effect("keeps going after the store fails a sweep", () =>
    Effect.gen(function* () {
      const memory = yield* MemoryStore.make
      let failures = 3
      const flaky: HandleStore.HandleStore = {
        ...memory,
        claimDue: (options) =>
          failures-- > 0
            ? Effect.fail(new HandleStore.StoreError({ operation: "claimDue", message: "database is down" }))
            : memory.claimDue(options),
      }
      // A call whose dispatcher died: the reconciler must find it and mark it in doubt.
      yield* memory.insertOrGet({
        scope: "default",
        key: "orphan-candidate",
        serverId: "srv",
        tool: "t",
        arguments: {},
        argumentsHash: "h",
        owner: "dead",
        leaseMs: 0,
        now: 0,
      })
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Layer.build(
            TaskClient.layer({
              servers: [{ name: "srv", url: "http://unused.test/mcp" }],
              background: { tickMs: 100 },
            }).pipe(
              Layer.provide(
                Layer.mergeAll(
                  Layer.succeed(HandleStore.HandleStore, flaky),
                  HttpWire.layer({ fetch: () => Promise.reject(new Error("no requests expected")) }),
                  Polling.layer(),
                ),
              ),
            ),
          )
          yield* TestClock.adjust("1 second")
        }),
      )
      expect(failures).toBeLessThan(0)
      const row = yield* memory.get("default", "orphan-candidate")
      expect(row._tag === "Some" && row.value.status).toBe("in_doubt")
    }),
  )
})
