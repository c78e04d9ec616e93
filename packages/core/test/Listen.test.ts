import { describe, expect, it } from "@effect/vitest"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import type * as Wire from "@mcp-handles/core/Wire"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"

const server: Wire.ServerEndpoint = { name: "s", url: "http://listen.test/mcp" }

const working = (taskId: string) => ({
  taskId,
  status: "working",
  createdAt: "2026-07-28T10:00:00Z",
  lastUpdatedAt: "2026-07-28T10:00:01Z",
  ttlMs: 60_000,
  pollIntervalMs: 1_000,
})

const frame = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`

interface Seen {
  headers: Headers | undefined
  body: { id: number; method: string; params: { notifications: { taskIds: Array<string> } } } | undefined
}

/**
 * A wire whose fetch answers `subscriptions/listen` with an event stream: `script` gets the
 * request id and returns the frames to send (a string is sent as is), then `end` says how the
 * stream ends.
 */
const wireWith = (
  script: (id: number) => ReadonlyArray<unknown>,
  end: "close" | "cut",
  seen: Seen,
): Effect.Effect<Wire.Wire> =>
  HttpWire.make({
    fetch: async (input, init) => {
      const request = new Request(input, init)
      seen.headers = request.headers
      seen.body = (await request.json()) as Seen["body"]
      const id = seen.body?.id ?? 0
      const encoder = new TextEncoder()
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => {
          for (const item of script(id))
            controller.enqueue(encoder.encode(typeof item === "string" ? item : frame(item)))
          if (end === "close") controller.close()
          else controller.error(new TypeError("terminated"))
        },
      })
      return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } })
    },
  })

const listen = (wire: Wire.Wire, taskIds: ReadonlyArray<string>) =>
  Effect.either(Stream.runCollect((wire.listen as NonNullable<Wire.Wire["listen"]>)(server, taskIds))).pipe(
    Effect.map(Either.map(Chunk.toReadonlyArray)),
  )

describe("HttpWire.listen (subscriptions/listen)", () => {
  it.effect(
    "reads the acknowledgement and each task's state, refuses hostile ones, ends with the answer",
    () =>
      Effect.gen(function* () {
        const seen: Seen = { headers: undefined, body: undefined }
        const wire = yield* wireWith(
          (id) => [
            {
              jsonrpc: "2.0",
              method: "notifications/subscriptions/acknowledged",
              params: { notifications: { taskIds: ["t1", "t2"] } },
            },
            { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "ignored" } },
            { jsonrpc: "2.0", method: "notifications/tasks", params: working("t1") },
            // A hostile key inside a result: refused like a poll answer, the task id kept.
            `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t2","status":"completed","createdAt":"2026-07-28T10:00:00Z","lastUpdatedAt":"2026-07-28T10:00:02Z","ttlMs":60000,"result":{"content":[],"__proto__":{"x":1}}}}\n\n`,
            { jsonrpc: "2.0", id, result: { resultType: "complete" } },
            // Nothing after the answer is read.
            { jsonrpc: "2.0", method: "notifications/tasks", params: working("t1") },
          ],
          "close",
          seen,
        )
        const events = yield* listen(wire, ["t1", "t2"])
        expect(Either.isRight(events)).toBe(true)
        const list = Either.getOrThrow(events)
        expect(list.map((event) => event._tag)).toEqual(["Acknowledged", "Task", "Malformed"])
        expect(list[0]).toEqual({ _tag: "Acknowledged", taskIds: ["t1", "t2"] })
        const task = list[1]
        expect(task?._tag === "Task" && task.task.status).toBe("working")
        expect(task?._tag === "Task" && task.task.pollIntervalMs).toBe(1_000)
        expect(list[2]?._tag === "Malformed" && list[2].taskId).toBe("t2")
        // The request: routing headers and the task ids asked for.
        expect(seen.headers?.get("mcp-method")).toBe("subscriptions/listen")
        expect(seen.headers?.get("mcp-protocol-version")).toBe("2026-07-28")
        expect(seen.headers?.get("accept")).toContain("text/event-stream")
        expect(seen.body?.method).toBe("subscriptions/listen")
        expect(seen.body?.params.notifications.taskIds).toEqual(["t1", "t2"])
      }),
  )

  it.effect("a stream that is cut, or that closes without its answer, fails with NoAnswer", () =>
    Effect.gen(function* () {
      const seen: Seen = { headers: undefined, body: undefined }
      const ack = {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { taskIds: ["t1"] } },
      }
      for (const end of ["cut", "close"] as const) {
        const wire = yield* wireWith(() => [ack], end, seen)
        const result = yield* listen(wire, ["t1"])
        expect(Either.isLeft(result) && result.left._tag).toBe("NoAnswer")
      }
    }),
  )

  it.effect("a refusal is the request's classified error", () =>
    Effect.gen(function* () {
      const wire = yield* HttpWire.make({
        fetch: async (input, init) => {
          const body = (await new Request(input, init).json()) as { id: number }
          return Response.json(
            { jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "Method not found" } },
            { status: 404 },
          )
        },
      })
      const result = yield* listen(wire, ["t1"])
      expect(Either.isLeft(result) && result.left._tag === "RpcErrorAnswer" && result.left.error.code).toBe(
        -32601,
      )
    }),
  )
})
