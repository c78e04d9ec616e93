import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import * as TransportWire from "../src/TransportWire.js"
import type { CallToolRequest, ServerEndpoint } from "../src/Wire.js"
import { createdAtMs, taskFields } from "./support/wire.js"

type Request = { readonly id: number; readonly method: string; readonly params: Record<string, unknown> }

const server: ServerEndpoint = { name: "stdio", url: "stdio://fake" }
const call: CallToolRequest = { name: "slow", arguments: {}, idempotencyKey: "k1" }

/** A linked in-memory pair; `serve` answers each request the wire sends (or not, when it returns undefined). */
const pair = (serve: (request: Request, peer: Transport) => unknown) => {
  const seen: Array<Request> = []
  let opened = 0
  const factory = () => {
    opened += 1
    const [client, peer] = InMemoryTransport.createLinkedPair()
    peer.onmessage = (message) => {
      const request = message as unknown as Request
      seen.push(request)
      const answer = serve(request, peer)
      if (answer !== undefined) void peer.send(answer as JSONRPCMessage)
    }
    void peer.start()
    return client
  }
  return { factory, seen, opened: () => opened }
}

describe("TransportWire", () => {
  it.scoped("tools/call over a connection: envelope sent, task decoded", () =>
    Effect.gen(function* () {
      const fake = pair((request) => ({
        jsonrpc: "2.0",
        id: request.id,
        result: { resultType: "task", ...taskFields("s1") },
      }))
      const wire = yield* TransportWire.make({ transport: fake.factory })
      const answer = yield* wire.callTool(server, call)
      expect(answer._tag === "Task" && answer.task.createdAt).toBe(createdAtMs)
      const meta = fake.seen[0]?.params._meta as Record<string, unknown>
      expect(meta["io.modelcontextprotocol/protocolVersion"]).toBe("2026-07-28")
      expect(meta["io.github.mcp-handles/key"]).toBe("k1")
      expect(meta["io.modelcontextprotocol/clientCapabilities"]).toEqual({
        extensions: { "io.modelcontextprotocol/tasks": {} },
      })
      // Concurrent requests are correlated by id.
      const tasks = yield* Effect.all(
        ["a", "b", "c"].map((id) => wire.getTask(server, id)),
        { concurrency: "unbounded" },
      ).pipe(Effect.either)
      expect(tasks._tag).toBe("Left") // the fake answers every request with task "s1": a different task
    }),
  )

  it.scoped("a JSON-RPC error, and a malformed answer", () =>
    Effect.gen(function* () {
      const fake = pair((request) =>
        request.method === "tasks/get"
          ? { jsonrpc: "2.0", id: request.id, error: { code: -32602, message: "gone" } }
          : { jsonrpc: "2.0", id: request.id, result: { resultType: "weird" } },
      )
      const wire = yield* TransportWire.make({ transport: fake.factory })
      const rpc = yield* Effect.flip(wire.getTask(server, "t"))
      expect(rpc._tag === "RpcErrorAnswer" && rpc.error.code).toBe(-32602)
      const bad = yield* Effect.flip(wire.callTool(server, call))
      expect(bad._tag).toBe("MalformedAnswer")
    }),
  )

  it.scoped("a connection closed before the answer is no answer, and the next request reconnects", () =>
    Effect.gen(function* () {
      let first = true
      const fake = pair((request, peer) => {
        if (first) {
          first = false
          void peer.close()
          return undefined
        }
        return { jsonrpc: "2.0", id: request.id, result: { resultType: "complete" } }
      })
      const wire = yield* TransportWire.make({ transport: fake.factory })
      const error = yield* Effect.flip(wire.callTool(server, call))
      expect(error._tag).toBe("NoAnswer")
      yield* wire.cancelTask(server, "t")
      expect(fake.opened()).toBe(2)
    }),
  )

  it.scoped("a transport that fails to start is not sent", () =>
    Effect.gen(function* () {
      const failing = (): Transport => {
        const [client] = InMemoryTransport.createLinkedPair()
        client.start = () => Promise.reject(new Error("spawn ENOENT"))
        return client
      }
      const wire = yield* TransportWire.make({ transport: failing })
      const error = yield* Effect.flip(wire.callTool(server, call))
      expect(error._tag).toBe("NotSent")
    }),
  )

  it.live("no answer within requestTimeout is no answer", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const fake = pair(() => undefined)
        const wire = yield* TransportWire.make({ transport: fake.factory, requestTimeout: "100 millis" })
        const error = yield* Effect.flip(wire.callTool(server, call))
        expect(error._tag).toBe("NoAnswer")
      }),
    ),
  )
})
