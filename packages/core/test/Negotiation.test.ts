import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as Effect from "effect/Effect"
import { HttpResponse } from "msw"
import * as HttpWire from "../src/HttpWire.js"
import type { ServerEndpoint } from "../src/Wire.js"
import { makeHarness, runFor, startProcess } from "./support/harness.js"
import * as Msw from "./support/wire.js"

const server: ServerEndpoint = { name: "test", url: Msw.endpointUrl }
const call = { name: "t", arguments: {}, idempotencyKey: "k" }
const future = "2099-01-01"

beforeAll(() => Msw.mswServer.listen({ onUnhandledRequest: "bypass" }))
afterAll(() => Msw.mswServer.close())
afterEach(() => Msw.resetRecorder())

const versionOf = (request: Msw.Recorded | undefined) => ({
  meta: request?.body.params?._meta?.["io.modelcontextprotocol/protocolVersion"],
  header: request?.headers.get("mcp-protocol-version"),
})

const unsupported = (request: Msw.Recorded, supported: ReadonlyArray<string>) =>
  HttpResponse.json(
    {
      jsonrpc: "2.0",
      id: request.body.id,
      error: {
        code: -32022,
        message: "Unsupported protocol version",
        data: { supported, requested: versionOf(request).meta },
      },
    } as never,
    { status: 400 },
  )

/** A server that speaks only `versions`, answering everything else with -32022. */
const speaks =
  (versions: ReadonlyArray<string>) =>
  (request: Msw.Recorded): Response => {
    if (!versions.includes(String(versionOf(request).meta))) return unsupported(request, versions)
    if (request.body.method === "server/discover") {
      return Msw.result(request, { supportedVersions: versions, capabilities: {} })
    }
    if (request.body.method === "tasks/get")
      return Msw.result(request, Msw.taskFields(String(request.body.params.taskId)))
    return Msw.result(request, { content: [] })
  }

describe("version negotiation", () => {
  it.live("a -32022 answer is retried once with a version from its list, which is then remembered", () =>
    Effect.gen(function* () {
      Msw.answerWith(speaks([future]))
      const wire = yield* HttpWire.make({ protocolVersions: ["2026-07-28", future] })
      const answer = yield* wire.callTool(server, call)
      expect(answer._tag).toBe("Complete")
      expect(Msw.recorded.map(versionOf)).toEqual([
        { meta: "2026-07-28", header: "2026-07-28" },
        { meta: future, header: future },
      ])
      // The same key both times: the refused request was not processed.
      expect(Msw.recorded[1]?.body.params._meta["io.github.mcp-handles/key"]).toBe("k")
      yield* wire.getTask(server, "t1")
      expect(Msw.recorded).toHaveLength(3)
      expect(versionOf(Msw.recorded[2])).toEqual({ meta: future, header: future })
    }),
  )

  it.live("remembered per endpoint: another URL starts from the preferred version", () =>
    Effect.gen(function* () {
      Msw.answerWith(speaks([future]))
      const wire = yield* HttpWire.make({ protocolVersions: ["2026-07-28", future] })
      yield* wire.callTool(server, call)
      const other: ServerEndpoint = { name: "other", url: `${Msw.endpointUrl}?other` }
      yield* Effect.either(wire.cancelTask(other, "t1"))
      expect(versionOf(Msw.recorded[2]).meta).toBe("2026-07-28")
    }),
  )

  it.live("no version in common: UnsupportedVersion, naming the server's list, after one request", () =>
    Effect.gen(function* () {
      Msw.answerWith(speaks(["2025-11-25", "2024-11-05"]))
      const wire = yield* HttpWire.make()
      const error = yield* Effect.flip(wire.callTool(server, call))
      expect(error._tag).toBe("UnsupportedVersion")
      if (error._tag !== "UnsupportedVersion") return
      expect(error.supported).toEqual(["2025-11-25", "2024-11-05"])
      expect(error.requested).toBe("2026-07-28")
      expect(error.error.code).toBe(-32022)
      // One 2026-07-28 request (the wire may then try the 2025-11-25 generation's initialize).
      expect(Msw.recorded.filter((request) => request.body.method === "tools/call")).toHaveLength(1)
    }),
  )

  it.live("retried once only: a server refusing the version it listed is not asked again", () =>
    Effect.gen(function* () {
      Msw.answerWith((request) => unsupported(request, [future]))
      const wire = yield* HttpWire.make({ protocolVersions: ["2026-07-28", future] })
      const error = yield* Effect.flip(wire.getTask(server, "t1"))
      expect(error._tag).toBe("UnsupportedVersion")
      expect(Msw.recorded.map((request) => versionOf(request).meta)).toEqual(["2026-07-28", future])
    }),
  )

  // The conformance suite's request-metadata server refuses the first request with -32022 while
  // listing the very version it refused, and expects the client to retry with it.
  it.live("a -32022 listing the refused version itself: retried once with that version", () =>
    Effect.gen(function* () {
      let refusals = 0
      Msw.answerWith((request) => {
        if (refusals++ === 0) return unsupported(request, ["2026-07-28"])
        return Msw.result(request, { tools: [] })
      })
      const wire = yield* HttpWire.make()
      const tools = yield* wire.listTools(server)
      expect(tools).toEqual([])
      expect(Msw.recorded.map((request) => [request.body.method, versionOf(request).meta])).toEqual([
        ["tools/list", "2026-07-28"],
        ["tools/list", "2026-07-28"],
      ])
    }),
  )

  it.live("a -32022 listing the refused version, twice: UnsupportedVersion after one retry", () =>
    Effect.gen(function* () {
      Msw.answerWith((request) => unsupported(request, ["2026-07-28"]))
      const wire = yield* HttpWire.make()
      const error = yield* Effect.flip(wire.getTask(server, "t1"))
      expect(error._tag).toBe("UnsupportedVersion")
      expect(Msw.recorded.map((request) => versionOf(request).meta)).toEqual(["2026-07-28", "2026-07-28"])
    }),
  )

  it.live("a -32022 without a list: no version in common, not retried", () =>
    Effect.gen(function* () {
      Msw.answerWith((request) =>
        HttpResponse.json({
          jsonrpc: "2.0",
          id: request.body.id,
          error: { code: -32022, message: "no" },
        } as never),
      )
      const wire = yield* HttpWire.make({ protocolVersions: ["2026-07-28", future] })
      const error = yield* Effect.flip(wire.cancelTask(server, "t1"))
      expect(error._tag).toBe("UnsupportedVersion")
      expect(Msw.recorded).toHaveLength(1)
    }),
  )

  it.live("server/discover settles the version: the client's most preferred one the server lists", () =>
    Effect.gen(function* () {
      Msw.answerWith(speaks(["2026-07-28", future]))
      const wire = yield* HttpWire.make({ protocolVersions: [future, "2026-07-28"] })
      const info = yield* wire.discover(server)
      expect(info.protocolVersions).toEqual(["2026-07-28", future])
      yield* wire.callTool(server, call)
      expect(Msw.recorded.map((request) => versionOf(request).meta)).toEqual([future, future])
    }),
  )

  it.live("server/discover listing no version in common fails with UnsupportedVersion", () =>
    Effect.gen(function* () {
      Msw.answerWith((request) =>
        Msw.result(request, { supportedVersions: ["2025-11-25"], capabilities: {} }),
      )
      const wire = yield* HttpWire.make()
      const error = yield* Effect.flip(wire.discover(server))
      expect(error._tag).toBe("UnsupportedVersion")
      if (error._tag === "UnsupportedVersion") {
        expect(error.supported).toEqual(["2025-11-25"])
        expect(error.error.message).toContain("2025-11-25")
      }
    }),
  )

  it.live("against the fake server configured with its supported versions", () =>
    Effect.gen(function* () {
      const fake = FakeServer.unsafeMake({ tools: [], supportedVersions: ["2026-07-28"] })
      const fetch: typeof globalThis.fetch = (input, init) => fake.handler(new Request(input, init))
      const wire = yield* HttpWire.make({ fetch, protocolVersions: [future, "2026-07-28"] })
      const tools = yield* wire.listTools({ name: "fake", url: "http://fake.test/mcp" })
      expect(tools).toEqual([])
      const none = yield* HttpWire.make({ fetch, protocolVersions: [future] })
      const error = yield* Effect.flip(none.listTools({ name: "fake", url: "http://fake.test/mcp" }))
      expect(error._tag).toBe("UnsupportedVersion")
    }),
  )
})

describe("version negotiation under the client", () => {
  it.effect("a call to a server with no version in common fails, nothing launched, the -32022 kept", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [{ name: "slow", shape: "task" as const, durationMs: 1_000 }],
        supportedVersions: [future],
      })
      const p = yield* startProcess(h, { background: false })
      const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "v" }), 1_000)
      expect(handle.record.status).toBe("failed")
      expect(handle.record.error?.code).toBe(-32022)
      expect(h.server.ledger.snapshot().tasks).toHaveLength(0)
      yield* p.close
    }),
  )
})
