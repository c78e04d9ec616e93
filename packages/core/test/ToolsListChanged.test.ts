/**
 * A 2026-07-28 server says its tools changed with `notifications/tools/list_changed`, delivered
 * only on a `subscriptions/listen` stream that asked for it (`toolsListChanged`). The wire asks
 * for it on every subscription it opens and, on the notification, forgets the endpoint's tool
 * definitions: the next check lists them again, so the next call mirrors the new `x-mcp-header`
 * declarations (issue 14, item 2).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as HttpWire from "../src/HttpWire.js"
import type { ServerEndpoint } from "../src/Wire.js"

const server: ServerEndpoint = { name: "test", url: "http://mcp.test/mcp" }

const deploy = (header: string | undefined) => ({
  name: "deploy",
  inputSchema: {
    type: "object",
    properties: { region: { type: "string", ...(header === undefined ? {} : { "x-mcp-header": header }) } },
  },
})

const message = (value: unknown) => JSON.stringify({ jsonrpc: "2.0", ...(value as object) })

interface Seen {
  readonly method: string
  readonly params: Record<string, unknown>
  readonly headers: Headers
}

/**
 * A server behind a fetch (a plain one: the subscription's answer is a real stream that ends):
 * it lists `deploy` without a header until the subscription has been answered, with one after;
 * the subscription acknowledges the task, sends `extra` notifications, then ends gracefully.
 */
const serving = (extra: ReadonlyArray<unknown>) => {
  const seen: Array<Seen> = []
  let changed = false
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init)
    const body = JSON.parse(await request.text())
    seen.push({ method: body.method, params: body.params, headers: request.headers })
    const json = (result: unknown) =>
      new Response(message({ id: body.id, result: { resultType: "complete", ...(result as object) } }), {
        headers: { "content-type": "application/json" },
      })
    switch (body.method) {
      case "tools/list":
        return json({ tools: [deploy(changed ? "Region" : undefined)] })
      case "subscriptions/listen": {
        changed = true
        const events = [
          {
            method: "notifications/subscriptions/acknowledged",
            params: { notifications: { taskIds: ["t1"] } },
          },
          ...extra,
          { id: body.id, result: { resultType: "complete" } },
        ]
        return new Response(events.map((event) => `event: message\ndata: ${message(event)}\n\n`).join(""), {
          headers: { "content-type": "text/event-stream" },
        })
      }
      default:
        return json({ content: [] })
    }
  }
  return { fetch, seen }
}

/** Checks `deploy`, listens until the server ends the subscription, checks and calls it again. */
const scenario = (extra: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const { fetch, seen } = serving(extra)
    const wire = yield* HttpWire.make({ fetch })
    const check = wire.checkTool
    const listen = wire.listen
    expect(check).toBeDefined()
    expect(listen).toBeDefined()
    if (check === undefined || listen === undefined) return { seen, headers: [] }
    yield* check(server, "deploy")
    const events = yield* Stream.runCollect(listen(server, ["t1"]))
    expect(Chunk.toReadonlyArray(events).map((event) => event._tag)).toEqual(["Acknowledged"])
    yield* check(server, "deploy")
    yield* wire.callTool(server, { name: "deploy", arguments: { region: "eu-1" }, idempotencyKey: "k" })
    const headers = seen
      .filter((request) => request.method === "tools/call")
      .map((request) => request.headers.get("mcp-param-region"))
    return { seen, headers }
  })

const byMethod = (seen: ReadonlyArray<Seen>, method: string) =>
  seen.filter((request) => request.method === method)

describe("notifications/tools/list_changed", () => {
  it.live("on a subscription: the definitions are listed again and the next call has the new headers", () =>
    Effect.gen(function* () {
      const { seen, headers } = yield* scenario([{ method: "notifications/tools/list_changed" }])
      // The subscription asked for it.
      const subscribe = byMethod(seen, "subscriptions/listen")[0]?.params.notifications
      expect(subscribe).toEqual({ taskIds: ["t1"], toolsListChanged: true })
      expect(byMethod(seen, "tools/list")).toHaveLength(2)
      expect(headers).toEqual(["eu-1"])
    }),
  )

  it.live("without it, the definitions known are kept: one listing, no new header", () =>
    Effect.gen(function* () {
      const { seen, headers } = yield* scenario([])
      expect(byMethod(seen, "tools/list")).toHaveLength(1)
      expect(headers).toEqual([null])
    }),
  )
})
