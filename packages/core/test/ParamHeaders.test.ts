import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpResponse } from "msw"
import * as HttpWire from "../src/HttpWire.js"
import * as ParamHeaders from "../src/internal/wire/paramHeaders.js"
import type { ServerEndpoint } from "../src/Wire.js"
import { makeHarness, runFor, startProcess } from "./support/harness.js"
import * as Msw from "./support/wire.js"

beforeAll(() => Msw.mswServer.listen({ onUnhandledRequest: "bypass" }))
afterAll(() => Msw.mswServer.close())
afterEach(() => Msw.resetRecorder())

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra,
})

describe("x-mcp-header declarations", () => {
  it("collects declarations on properties at any depth through properties", () => {
    const scan = ParamHeaders.scan(
      object({
        region: { type: "string", "x-mcp-header": "Region" },
        options: object({ dryRun: { type: "boolean", "x-mcp-header": "Dry-Run" } }),
        count: { type: "integer", "x-mcp-header": "Count" },
        plain: { type: "string" },
      }),
    )
    expect(scan).toEqual({
      _tag: "Valid",
      declarations: [
        { path: ["region"], name: "Region" },
        { path: ["options", "dryRun"], name: "Dry-Run" },
        { path: ["count"], name: "Count" },
      ],
    })
    expect(ParamHeaders.scan(undefined)).toEqual({ _tag: "Valid", declarations: [] })
  })

  it.each([
    ["at the root", { type: "object", "x-mcp-header": "Root" }],
    ["under items", object({ list: { type: "array", items: { type: "string", "x-mcp-header": "Item" } } })],
    ["under anyOf", object({}, { anyOf: [object({ a: { type: "string", "x-mcp-header": "A" } })] })],
    ["under $defs", object({}, { $defs: { d: { type: "string", "x-mcp-header": "D" } } })],
    [
      "under additionalProperties",
      object({}, { additionalProperties: { type: "string", "x-mcp-header": "Extra" } }),
    ],
    ["under if/then", object({}, { if: object({ a: { type: "string", "x-mcp-header": "A" } }) })],
    ["an empty name", object({ a: { type: "string", "x-mcp-header": "" } })],
    ["a name with a space", object({ a: { type: "string", "x-mcp-header": "My Header" } })],
    ["a name with a colon", object({ a: { type: "string", "x-mcp-header": "A:B" } })],
    ["a non-ASCII name", object({ a: { type: "string", "x-mcp-header": "Zone-é" } })],
    ["a name that is not a string", object({ a: { type: "string", "x-mcp-header": 7 } })],
    ["a number property", object({ a: { type: "number", "x-mcp-header": "A" } })],
    ["an object property", object({ a: { type: "object", "x-mcp-header": "A" } })],
    ["an array property", object({ a: { type: "array", "x-mcp-header": "A" } })],
    ["a property without a type", object({ a: { "x-mcp-header": "A" } })],
    [
      "a name declared twice regardless of case",
      object({
        a: { type: "string", "x-mcp-header": "Region" },
        b: { type: "string", "x-mcp-header": "REGION" },
      }),
    ],
  ])("refuses a declaration %s", (_, schema) => {
    expect(ParamHeaders.scan(schema)._tag).toBe("Invalid")
  })
})

describe("header values", () => {
  it.each([
    ["us-west1", "us-west1"],
    ["a\tb", "a\tb"],
    ["Zürich", `=?base64?${btoa(String.fromCharCode(...new TextEncoder().encode("Zürich")))}?=`],
    ["日本", "=?base64?5pel5pys?="],
    [" padded", "=?base64?IHBhZGRlZA==?="],
    ["trailing ", "=?base64?dHJhaWxpbmcg?="],
    ["", "=?base64??="],
    ["line\nbreak", "=?base64?bGluZQpicmVhaw==?="],
    ["=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="],
  ])("%j is sent as %j", (value, sent) => {
    expect(ParamHeaders.encode(value)).toBe(sent)
  })

  it("mirrors strings, integers and booleans; omits absent, null and mistyped values", () => {
    const declarations = [
      { path: ["s"], name: "S" },
      { path: ["i"], name: "I" },
      { path: ["b"], name: "B" },
      { path: ["f"], name: "F" },
      { path: ["n"], name: "N" },
      { path: ["absent"], name: "Absent" },
      { path: ["deep", "x"], name: "X" },
      { path: ["o"], name: "O" },
    ]
    expect(
      ParamHeaders.headers(declarations, {
        s: "v",
        i: 42,
        b: false,
        f: 1.5,
        n: null,
        deep: { x: "y" },
        o: {},
      }),
    ).toEqual({ "Mcp-Param-S": "v", "Mcp-Param-I": "42", "Mcp-Param-B": "false", "Mcp-Param-X": "y" })
  })
})

const server: ServerEndpoint = {
  name: "test",
  url: Msw.endpointUrl,
  headers: () => ({ Authorization: "Bearer t" }),
}

const regionTool = (header: string) => ({
  name: "deploy",
  inputSchema: object({ region: { type: "string", "x-mcp-header": header }, n: { type: "integer" } }),
})

/** A server listing `tools()`, answering every call with an empty Msw.result. */
const serving =
  (
    tools: () => ReadonlyArray<unknown>,
    onCall: (request: Msw.Recorded) => Response | undefined = () => undefined,
  ) =>
  (request: Msw.Recorded): Response => {
    if (request.body.method === "tools/list") return Msw.result(request, { tools: tools() })
    return onCall(request) ?? Msw.result(request, { content: [] })
  }

const calls = () => Msw.recorded.filter((request) => request.body.method === "tools/call")
const lists = () => Msw.recorded.filter((request) => request.body.method === "tools/list")

describe("Mcp-Param headers on tools/call", () => {
  it.live("mirrors the declared arguments, from the definitions listed once by checkTool", () =>
    Effect.gen(function* () {
      Msw.answerWith(serving(() => [regionTool("Region")]))
      const wire = yield* HttpWire.make()
      // A bare call knows no definitions yet: no listing, no custom headers.
      yield* wire.callTool(server, { name: "deploy", arguments: { region: "eu-0" }, idempotencyKey: "k0" })
      expect(lists()).toHaveLength(0)
      expect(calls()[0]?.headers.get("mcp-param-region")).toBeNull()
      Msw.resetRecorder()
      Msw.answerWith(serving(() => [regionTool("Region")]))
      // The client checks the tool before its first call, which lists the endpoint's tools.
      yield* Effect.orDie(wire.checkTool?.(server, "deploy") ?? Effect.void)
      yield* wire.callTool(server, {
        name: "deploy",
        arguments: { region: "Zürich", n: 1 },
        idempotencyKey: "k",
      })
      yield* wire.callTool(server, {
        name: "deploy",
        arguments: { region: "eu-1", n: 2 },
        idempotencyKey: "k2",
      })
      expect(lists()).toHaveLength(1)
      const [first, second] = calls()
      expect(first?.headers.get("mcp-param-region")).toBe(ParamHeaders.encode("Zürich"))
      expect(second?.headers.get("mcp-param-region")).toBe("eu-1")
      // The endpoint's own headers still go out.
      expect(second?.headers.get("authorization")).toBe("Bearer t")
    }),
  )

  it.live("keeps each tool's inputSchema in tools/list", () =>
    Effect.gen(function* () {
      Msw.answerWith(serving(() => [regionTool("Region")]))
      const tools = yield* (yield* HttpWire.make()).listTools(server)
      expect(tools[0]?.inputSchema).toEqual(regionTool("Region").inputSchema)
    }),
  )

  it.live("a header mismatch (-32020) refreshes the definitions and retries once with the new headers", () =>
    Effect.gen(function* () {
      let header = "Region"
      Msw.answerWith(
        serving(
          () => [regionTool(header)],
          (request) =>
            request.headers.get(`mcp-param-${header}`) === null
              ? HttpResponse.json(
                  {
                    jsonrpc: "2.0",
                    id: request.body.id,
                    error: { code: -32020, message: "Header mismatch" },
                  },
                  { status: 400 },
                )
              : undefined,
        ),
      )
      const wire = yield* HttpWire.make()
      yield* Effect.orDie(wire.checkTool?.(server, "deploy") ?? Effect.void)
      yield* wire.callTool(server, { name: "deploy", arguments: { region: "eu-1" }, idempotencyKey: "k" })
      header = "Zone"
      const answer = yield* wire.callTool(server, {
        name: "deploy",
        arguments: { region: "eu-1" },
        idempotencyKey: "k",
      })
      expect(answer._tag).toBe("Complete")
      expect(lists()).toHaveLength(2)
      expect(calls().map((request) => request.headers.get("mcp-param-zone"))).toEqual([null, null, "eu-1"])
    }),
  )

  it.live("a header mismatch the definitions do not explain is the server's answer, not retried", () =>
    Effect.gen(function* () {
      Msw.answerWith(
        serving(
          () => [regionTool("Region")],
          (request) =>
            HttpResponse.json(
              { jsonrpc: "2.0", id: request.body.id, error: { code: -32020, message: "Header mismatch" } },
              { status: 400 },
            ),
        ),
      )
      const wire = yield* HttpWire.make()
      yield* Effect.orDie(wire.checkTool?.(server, "deploy") ?? Effect.void)
      const error = yield* Effect.flip(
        wire.callTool(server, { name: "deploy", arguments: { region: "eu-1" }, idempotencyKey: "k" }),
      )
      expect(error._tag).toBe("RpcErrorAnswer")
      expect(calls()).toHaveLength(1)
    }),
  )

  it.live("a tools/list that fails: the call goes out without custom headers", () =>
    Effect.gen(function* () {
      Msw.answerWith((request) =>
        request.body.method === "tools/list"
          ? HttpResponse.json({ jsonrpc: "2.0", id: request.body.id, error: { code: -32601, message: "no" } })
          : Msw.result(request, { content: [] }),
      )
      const wire = yield* HttpWire.make()
      yield* Effect.orDie(wire.checkTool?.(server, "deploy") ?? Effect.void)
      const answer = yield* wire.callTool(server, {
        name: "deploy",
        arguments: { region: "x" },
        idempotencyKey: "k",
      })
      expect(answer._tag).toBe("Complete")
      // The failure is remembered: the next call does not list again.
      yield* wire.callTool(server, { name: "deploy", arguments: { region: "x" }, idempotencyKey: "k2" })
      expect(lists()).toHaveLength(1)
      expect(calls()[1]?.headers.get("mcp-param-region")).toBeNull()
    }),
  )

  it.live("checkTool refuses an invalid definition and accepts a valid or unknown one", () =>
    Effect.gen(function* () {
      Msw.answerWith(serving(() => [regionTool("Region"), { ...regionTool("Bad Name"), name: "broken" }]))
      const wire = yield* HttpWire.make()
      const check = wire.checkTool
      expect(check).toBeDefined()
      if (check === undefined) return
      yield* check(server, "deploy")
      yield* check(server, "missing")
      const error = yield* Effect.flip(check(server, "broken"))
      expect(error._tag).toBe("InvalidToolDefinition")
      expect(error.reason).toContain("Bad Name")
      expect(lists()).toHaveLength(1)
    }),
  )
})

describe("an invalid tool under the client", () => {
  it.effect("is refused with InvalidToolDefinition before anything is written or called", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [
          {
            name: "broken",
            shape: "task" as const,
            durationMs: 1_000,
            inputSchema: {
              type: "object",
              properties: { list: { type: "array", items: { type: "string", "x-mcp-header": "Item" } } },
            },
          },
        ],
      })
      const p = yield* startProcess(h, { background: false })
      const error = yield* Effect.flip(runFor(p.client.callTool("fake", "broken", {}, { key: "b" }), 1_000))
      expect(error._tag).toBe("InvalidToolDefinition")
      const rows = yield* h.store.list({ scope: "default", limit: 10 })
      expect(rows.records).toHaveLength(0)
      expect(h.server.ledger.snapshot().tasks).toHaveLength(0)
      yield* p.close
    }),
  )
})
