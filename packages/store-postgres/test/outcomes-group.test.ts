/**
 * Outcome delivery on PostgreSQL (issue 15, item 1): two clients of one consumer group read the
 * same store at once; every outcome goes to exactly one of them.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Polling from "@mcp-handles/core/Polling"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

const CALLS = 60

/** A client that only reads outcomes (no reconciler: nothing to drive). */
const client = (instanceId: string) =>
  Effect.flatMap(
    Layer.build(
      TaskClient.layer({
        servers: [{ name: "srv", url: "http://127.0.0.1:9/mcp" }],
        instanceId,
        background: false,
        recordServers: false,
      }).pipe(Layer.provide(Layer.mergeAll(HttpWire.layer(), Polling.layer()))),
    ),
    (context) => Effect.succeed(Context.get(context, TaskClient.TaskClient)),
  )

describe("outcomes on PostgreSQL", () => {
  it.live(
    "two members of one consumer share the outcomes: each delivered to exactly one",
    () =>
      Effect.gen(function* () {
        const store = yield* HandleStore.HandleStore
        const now = yield* store.now
        for (let i = 0; i < CALLS; i++) {
          const { record } = yield* store.insertOrGet({
            scope: "default",
            key: `k${String(i).padStart(3, "0")}`,
            serverId: "srv",
            tool: "t",
            arguments: {},
            argumentsHash: "h",
            owner: "seeder",
            leaseMs: 0,
            now: now - 1_000 + i,
          })
          yield* store.update(
            new HandleRecord.HandleRecord({
              ...record,
              status: "completed",
              result: { content: [] },
              settledAt: now,
            }),
          )
        }
        const [a, b] = yield* Effect.all([client("m1"), client("m2")])
        const options = { consumer: "app", pollInterval: "20 millis", batchSize: 4 } as const
        const read = (c: TaskClient.TaskClient) =>
          // Each acknowledges what it got; together they must see every call.
          c.outcomes(options).pipe(Stream.tap((d) => d.ack))
        const both = yield* Stream.merge(
          Stream.map(read(a), (d) => ["m1", d] as const),
          Stream.map(read(b), (d) => ["m2", d] as const),
        ).pipe(Stream.take(CALLS), Stream.runCollect, Effect.timeout("60 seconds"))
        const keys = Chunk.toArray(both).map(([, d]) => d.key)
        expect(new Set(keys).size).toBe(CALLS)
        expect(Chunk.toArray(both).every(([, d]) => d.deliveries === 1)).toBe(true)
        // Acknowledged by the group: a member starting later gets nothing.
        const late = yield* client("m3")
        const more = yield* late
          .outcomes({ ...options, pollInterval: "10 millis" })
          .pipe(Stream.interruptWhen(Effect.sleep("300 millis")), Stream.runCollect)
        expect(Chunk.size(more)).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(TestDatabase.layerStore())),
    60_000,
  )
})
