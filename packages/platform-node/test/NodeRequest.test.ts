/**
 * `NodeRequest.make` under the wire, against a real HTTP server (the fake server over `node:http`):
 * what it sends is answered as fetch's requests are, what it passes on (an event stream) is
 * finished without fetch, and every failure is classified as the same failure on fetch.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import type * as Wire from "@mcp-handles/core/Wire"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import { NodeRequest } from "@mcp-handles/platform-node"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"

/** Fetch, counted: the wire must not need it for what `NodeRequest.make` sends. */
const counted = () => {
  let calls = 0
  const fetch: typeof globalThis.fetch = (url, init) => {
    calls += 1
    return globalThis.fetch(url, init)
  }
  return { fetch, calls: () => calls }
}

const listening = (config: Config.Config) =>
  Effect.acquireRelease(
    Effect.promise(() => NodeHttp.listen(FakeServer.unsafeMake(config))),
    (served) => Effect.promise(() => served.close()),
  )

const launch = (wire: Wire.Wire, server: Wire.ServerEndpoint, name: string, key: string) =>
  Effect.flatMap(wire.callTool(server, { name, arguments: {}, idempotencyKey: key }), (answer) =>
    answer._tag === "Task" ? Effect.succeed(answer.task.taskId) : Effect.die(`not a task: ${answer._tag}`),
  )

describe("NodeRequest", () => {
  it.scoped("sends calls and polls over node:http, never fetch, and they are answered", () =>
    Effect.gen(function* () {
      const served = yield* listening({ tools: [{ name: "job", shape: "task", durationMs: 60_000 }] })
      const server = { name: "fake", url: served.url }
      const fetch = counted()
      const wire = yield* HttpWire.make({ fetch: fetch.fetch, request: NodeRequest.make() })
      const taskId = yield* launch(wire, server, "job", "k1")
      const first = yield* wire.getTask(server, taskId)
      const second = yield* wire.getTask(server, taskId)
      expect([first.status, second.status]).toEqual(["working", "working"])
      expect(fetch.calls()).toBe(0)
    }),
  )

  it.scoped("passes an event stream on, read to its answer and progress without a second request", () =>
    Effect.gen(function* () {
      const served = yield* listening({
        tools: [
          {
            name: "render",
            shape: "direct",
            durationMs: 300,
            progress: { steps: [10, 50, 100], total: 100, intervalMs: 50 },
            outcome: { kind: "result", text: "rendered" },
          },
        ],
      })
      const server = { name: "fake", url: served.url }
      const fetch = counted()
      const wire = yield* HttpWire.make({ fetch: fetch.fetch, request: NodeRequest.make() })
      const notices: Array<number> = []
      const answer = yield* wire.callTool(server, {
        name: "render",
        arguments: {},
        idempotencyKey: "k2",
        onProgress: (notice) => notices.push(notice.progress),
      })
      expect(answer._tag).toBe("Complete")
      expect(notices).toEqual([10, 50, 100])
      expect(fetch.calls()).toBe(0)
    }),
  )

  it.scoped("a request the timeout cuts short is aborted: in doubt, its connection closed", () =>
    Effect.gen(function* () {
      const fake = FakeServer.unsafeMake({
        tools: [{ name: "job", shape: "task", durationMs: 60_000 }],
        faults: [{ when: { method: "tasks/get" }, fault: { kind: "latency", ms: 60_000, phase: "after" } }],
      })
      const served = yield* Effect.acquireRelease(
        Effect.promise(() => NodeHttp.listen(fake)),
        (s) => Effect.promise(() => s.close()),
      )
      const connections = () =>
        new Promise<number>((resolve) => served.http.getConnections((_, count) => resolve(count)))
      const server = { name: "fake", url: served.url }
      const wire = yield* HttpWire.make({ request: NodeRequest.make(), requestTimeout: "5 seconds" })
      const taskId = yield* launch(wire, server, "job", "k3")
      const polling = yield* Effect.fork(Effect.either(wire.getTask(server, taskId)))
      // The poll reached the task, and its answer is held back.
      yield* Effect.promise(() => expect.poll(() => fake.ledger.pollCount(taskId)).toBe(1))
      expect(yield* Effect.promise(connections)).toBe(1)
      yield* TestClock.adjust("5 seconds")
      const result = yield* Fiber.join(polling)
      expect(Either.isLeft(result) && result.left).toMatchObject({
        _tag: "NoAnswer",
        reason: "no answer within 5s",
      })
      yield* Effect.promise(() => expect.poll(connections).toBe(0))
    }),
  )

  it.scoped("an answer over the size limit is refused as on fetch", () =>
    Effect.gen(function* () {
      const served = yield* listening({ tools: [{ name: "job", shape: "task", durationMs: 60_000 }] })
      const server = { name: "fake", url: served.url }
      const setup = yield* HttpWire.make({ request: NodeRequest.make() })
      const taskId = yield* launch(setup, server, "job", "k4")
      const failures = yield* Effect.forEach([{ request: NodeRequest.make() }, {}], (options) =>
        Effect.flatMap(HttpWire.make({ ...options, maxAnswerBytes: 64 }), (wire) =>
          Effect.flip(wire.getTask(server, taskId)),
        ),
      )
      expect(failures[0]).toMatchObject({ _tag: "MalformedAnswer", reason: "answer exceeds 64 bytes" })
      expect(failures[1]).toEqual(failures[0])
    }),
  )

  it.scoped("a connection reset mid-answer, or before any, is classified as on fetch", () =>
    Effect.gen(function* () {
      // Writes the head and half an answer, then resets; or resets at once.
      const raw = http.createServer((request, response) => {
        request.resume()
        request.on("end", () => {
          if (request.url === "/half") {
            response.writeHead(200, { "content-type": "application/json", "content-length": "100" })
            response.write('{"jsonrpc":"2.0","id":1,')
            setTimeout(() => response.socket?.resetAndDestroy(), 20)
          } else {
            request.socket.resetAndDestroy()
          }
        })
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => {
          raw.listen(0, "127.0.0.1", () => resume(Effect.void))
        }),
        () => Effect.promise(() => new Promise<void>((resolve) => raw.close(() => resolve()))),
      )
      const port = (raw.address() as AddressInfo).port
      for (const path of ["/half", "/none"]) {
        const server = { name: "raw", url: `http://127.0.0.1:${port}${path}` }
        const [viaNode, viaFetch] = yield* Effect.forEach([{ request: NodeRequest.make() }, {}], (options) =>
          Effect.flatMap(HttpWire.make(options), (wire) => Effect.flip(wire.getTask(server, "t"))),
        )
        expect(viaNode?._tag).toBe("NoAnswer")
        expect(viaNode?._tag).toBe(viaFetch?._tag)
        const reasonOf = (error: unknown) => String((error as { reason?: string }).reason).split(":")[0]
        expect(reasonOf(viaNode)).toBe(reasonOf(viaFetch))
      }
    }),
  )
})
