import { request as httpRequest } from "node:http"
import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import type * as Config from "../src/Config.js"
import * as FakeServer from "../src/FakeServer.js"
import { listen } from "../src/internal/nodeHttp.js"
import * as ServerClock from "../src/ServerClock.js"
import { type AnyJson, call, errorOf, request, rpc } from "./helpers.js"

const T0 = Date.UTC(2026, 6, 28)

const config: Config.Config = {
  tools: [
    { name: "job", durationMs: 100, outcome: { kind: "result", text: "done" } },
    {
      name: "routed",
      shape: "direct",
      inputSchema: {
        type: "object",
        properties: {
          region: { type: "string", "x-mcp-header": "Region" },
          options: {
            type: "object",
            properties: {
              priority: { type: "integer", "x-mcp-header": "Priority" },
              dryRun: { type: "boolean", "x-mcp-header": "Dry-Run" },
            },
          },
        },
      },
      outcome: { kind: "result", text: "routed {{args.region}}" },
    },
    {
      name: "progressive",
      shape: "direct",
      progress: { steps: [0, 50, 100], total: 100, message: "at {{progress}}" },
      outcome: { kind: "result", text: "finished" },
    },
    {
      name: "ask_what_you_can",
      shape: "direct",
      undeclaredInputs: "omit",
      mrtrRounds: [
        {
          name: { method: "elicitation/create", params: { message: "Name?", requestedSchema: {} } },
          roots: { method: "roots/list", params: {} },
        },
      ],
      outcome: { kind: "result", text: "ok" },
    },
  ],
}

const setup = (extra: Partial<Config.Config> = {}) => {
  const clock = ServerClock.manual(T0)
  return { clock, server: FakeServer.unsafeMake({ ...config, ...extra }, { clock, notifyEveryMs: 0 }) }
}

/** Read every SSE frame's JSON until the stream ends. */
const allFrames = async (response: Response): Promise<AnyJson[]> =>
  (await response.text())
    .split("\n\n")
    .map((frame) => frame.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)))

describe("a completed task's result", () => {
  it("carries resultType complete in tasks/get and in notifications/tasks", async () => {
    const { server, clock } = setup()
    const { taskId } = await call(server, "tools/call", { name: "job" })
    const listening = await server.handler(
      request("subscriptions/listen", { notifications: { taskIds: [taskId] } }),
    )
    clock.advance(100)
    server.notify()
    const polled = await call(server, "tasks/get", { taskId })
    expect(polled).toMatchObject({ resultType: "complete", status: "completed" })
    expect(polled.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "done" }] })
    const pushed = (await allFrames(listening)).filter((frame) => frame.method === "notifications/tasks")
    expect(pushed.at(-1)?.params.result).toEqual(polled.result)
  })
})

describe("DNS-rebinding protection", () => {
  const withHeaders = (headers: Record<string, string>) => request("tools/list", {}, { headers })

  it("refuses a foreign Host or Origin with 403 and accepts the loopback names", async () => {
    const { server } = setup()
    for (const headers of [
      { host: "evil.example.com" },
      { host: "evil.example.com:8080" },
      { host: "127.0.0.1:3000", origin: "http://evil.example.com" },
      { origin: "null" },
    ]) {
      const response = await server.handler(withHeaders(headers))
      expect(response.status, JSON.stringify(headers)).toBe(403)
      expect(server.ledger.requests).toHaveLength(0)
    }
    for (const headers of [
      { host: "localhost" },
      { host: "127.0.0.1:3000", origin: "http://localhost:3000" },
      { host: "[::1]:8080", origin: "http://[::1]:8080" },
      {},
    ]) {
      expect((await server.handler(withHeaders(headers))).status, JSON.stringify(headers)).toBe(200)
    }
  })

  it("accepts the names allowedHosts lists instead, and anything with *", async () => {
    const { server } = setup({ allowedHosts: ["mcp.internal"] })
    expect((await server.handler(withHeaders({ host: "mcp.internal:443" }))).status).toBe(200)
    expect((await server.handler(withHeaders({ host: "localhost" }))).status).toBe(403)
    const open = setup({ allowedHosts: ["*"] }).server
    expect((await open.handler(withHeaders({ host: "evil.example.com" }))).status).toBe(200)
  })

  describe("over real HTTP", () => {
    let close: (() => Promise<void>) | undefined
    afterEach(async () => {
      await close?.()
      close = undefined
    })

    it("answers 403 to Host: evil.example.com and 200 to the loopback address", async () => {
      const listening = await listen(setup().server)
      close = listening.close
      const post = (host: string) =>
        new Promise<number>((resolve, reject) => {
          const url = new URL(listening.url)
          const body = request("tools/list")
          void body.text().then((text) => {
            const headers: Record<string, string> = { host }
            body.headers.forEach((value, name) => {
              headers[name] = value
            })
            const req = httpRequest(
              { hostname: url.hostname, port: url.port, path: url.pathname, method: "POST", headers },
              (res) => {
                res.resume()
                res.on("end", () => resolve(res.statusCode ?? 0))
              },
            )
            req.on("error", reject)
            req.end(text)
          })
        })
      expect(await post("evil.example.com")).toBe(403)
      expect(await post(new URL(listening.url).host)).toBe(200)
    })
  })
})

describe("Mcp-Param headers (SEP-2243)", () => {
  const routed = (args: Record<string, unknown>, headers: Record<string, string> = {}) =>
    rpc(setup().server, "tools/call", { name: "routed", arguments: args }, { headers })

  const expectMismatch = async (reply: Promise<{ status: number; body: AnyJson }>) => {
    const { status, body } = await reply
    expect(status).toBe(400)
    expect(body.error.code).toBe(-32020)
  }

  it("accepts headers that agree with the arguments, literal or in the Base64 form", async () => {
    expect((await routed({ region: "eu-west" }, { "mcp-param-region": "eu-west" })).status).toBe(200)
    expect((await routed({ region: "Hello" }, { "mcp-param-region": "=?base64?SGVsbG8=?=" })).status).toBe(
      200,
    )
    expect(
      (await routed({ region: "Région" }, { "mcp-param-region": "=?base64?UsOpZ2lvbg==?=" })).status,
    ).toBe(200)
    // No wrapper (or half of one): literal.
    expect((await routed({ region: "SGVsbG8=" }, { "mcp-param-region": "SGVsbG8=" })).status).toBe(200)
    expect(
      (await routed({ region: "=?base64?SGVsbG8=" }, { "mcp-param-region": "=?base64?SGVsbG8=" })).status,
    ).toBe(200)
    // Nested declarations, integers and booleans as text; surrounding whitespace forgiven.
    const nested = await routed(
      { region: "x", options: { priority: 7, dryRun: false } },
      { "mcp-param-region": " x ", "mcp-param-priority": "7", "mcp-param-dry-run": "false" },
    )
    expect(nested.status).toBe(200)
    // A value not of a header's type (a fraction for an integer) is not mirrored, as clients do.
    expect(
      (await routed({ region: "x", options: { priority: 1.5 } }, { "mcp-param-region": "x" })).status,
    ).toBe(200)
    // Nothing declared is sent: nothing to check.
    expect((await routed({})).status).toBe(200)
  })

  it("refuses a missing, mismatched, stray or badly encoded header with 400 and -32020", async () => {
    await expectMismatch(routed({ region: "eu-west" }))
    await expectMismatch(routed({ region: "eu-west" }, { "mcp-param-region": "us-east" }))
    await expectMismatch(routed({ region: "eu-west" }, { "mcp-param-region": "EU-WEST" }))
    await expectMismatch(routed({}, { "mcp-param-region": "eu-west" }))
    await expectMismatch(routed({ region: "Hello" }, { "mcp-param-region": "=?base64?SGVsbG8?=" }))
    await expectMismatch(routed({ region: "Hello" }, { "mcp-param-region": "=?base64?SGVs!!!bG8=?=" }))
    await expectMismatch(routed({ region: "\u00ff" }, { "mcp-param-region": "=?base64?/w==?=" }))
    await expectMismatch(
      routed(
        { region: "x", options: { priority: 7 } },
        { "mcp-param-region": "x", "mcp-param-priority": "8" },
      ),
    )
  })

  it("nothing launches when the headers disagree", async () => {
    const { server } = setup()
    await rpc(server, "tools/call", { name: "routed", arguments: { region: "a" } }, { headers: {} })
    expect(server.ledger.launches).toHaveLength(0)
  })

  it("every value in the Base64 form of its UTF-8 is accepted, and refused for any other value", async () => {
    const { server } = setup()
    const encode = (value: string) => `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme" }), fc.string(), async (value, other) => {
        const sent = await rpc(
          server,
          "tools/call",
          { name: "routed", arguments: { region: value } },
          { headers: { "mcp-param-region": encode(value) } },
        )
        expect(sent.status).toBe(200)
        if (other === value) return
        const wrong = await rpc(
          server,
          "tools/call",
          { name: "routed", arguments: { region: value } },
          { headers: { "mcp-param-region": encode(other) } },
        )
        expect(wrong.status).toBe(400)
      }),
      { numRuns: 60 },
    )
  })
})

describe("progress notifications", () => {
  it("a direct call with a progressToken streams each step, then its result", async () => {
    const { server } = setup()
    const response = await server.handler(
      request("tools/call", { name: "progressive" }, { meta: { progressToken: "p-1" } }),
    )
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    const frames = await allFrames(response)
    expect(frames.slice(0, 3).map((frame) => frame.params)).toEqual([
      { progressToken: "p-1", progress: 0, total: 100, message: "at 0" },
      { progressToken: "p-1", progress: 50, total: 100, message: "at 50" },
      { progressToken: "p-1", progress: 100, total: 100, message: "at 100" },
    ])
    expect(frames.slice(0, 3).every((frame) => frame.method === "notifications/progress")).toBe(true)
    expect(frames[3]).toMatchObject({
      jsonrpc: "2.0",
      result: { resultType: "complete", content: [{ type: "text", text: "finished" }] },
    })
    expect(frames).toHaveLength(4)
  })

  it("without a progressToken the answer is plain JSON", async () => {
    const { server } = setup()
    expect(await call(server, "tools/call", { name: "progressive" })).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "finished" }],
    })
  })
})

describe("input requests (SEP-2322)", () => {
  it("undeclaredInputs omit asks only for what the client declared", async () => {
    const { server } = setup()
    const first = await call(
      server,
      "tools/call",
      { name: "ask_what_you_can" },
      { capabilities: { roots: {} } },
    )
    expect(first.resultType).toBe("input_required")
    expect(Object.keys(first.inputRequests)).toEqual(["roots"])
    const done = await call(
      server,
      "tools/call",
      {
        name: "ask_what_you_can",
        inputResponses: { roots: { roots: [] } },
        requestState: first.requestState,
      },
      { capabilities: { roots: {} } },
    )
    expect(done.resultType).toBe("complete")
  })

  it("an answer that is not an input response is asked for again", async () => {
    const { server } = setup()
    const all = { elicitation: {}, roots: {} }
    const first = await call(server, "tools/call", { name: "ask_what_you_can" }, { capabilities: all })
    const again = await call(
      server,
      "tools/call",
      {
        name: "ask_what_you_can",
        inputResponses: { name: 12345, roots: { roots: [] } },
        requestState: first.requestState,
      },
      { capabilities: all },
    )
    expect(again.resultType).toBe("input_required")
    expect(Object.keys(again.inputRequests)).toEqual(["name"])
    const refused = await errorOf(server, "tools/call", { name: "ask_what_you_can", inputResponses: null })
    expect(refused.code).toBe(-32602)
  })
})
