/**
 * The lean exchange (issue 29, item 2): a stateless request is sent through the wire's `request`
 * function with the headers and body the SDK's transport sends, and what that function passes on
 * (an event stream, a redirect) is finished by the transport's path without a second request.
 */
import { describe, expect, it, vi } from "@effect/vitest"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Effect from "effect/Effect"
import { exchange, makeRecorder, type Observation } from "../src/internal/wire/exchange.js"
import { leanExchange, overFetch } from "../src/internal/wire/lean.js"

const server = { name: "s", url: "http://lean.test/mcp" }

interface Sent {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
  readonly redirect: RequestRedirect | undefined
}

const headersOf = (init: HeadersInit | undefined) => {
  const out: Record<string, string> = {}
  new Headers(init).forEach((value, name) => {
    out[name] = value
  })
  return out
}

/** A fetch that records what it was asked and answers `answer()`. */
const recording = (answer: () => Response) => {
  const sent: Array<Sent> = []
  const fetch: typeof globalThis.fetch = async (url, init) => {
    sent.push({
      url: String(url),
      headers: headersOf(init?.headers),
      body: String(init?.body),
      redirect: init?.redirect,
    })
    return answer()
  }
  return { sent, fetch }
}

const json = (body: unknown) =>
  new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } })

const observe = (run: (resolve: (observation: Observation) => void) => unknown) =>
  new Promise<Observation>((resolve) => {
    run(resolve)
  })

describe("the lean exchange", () => {
  const message = {
    jsonrpc: "2.0" as const,
    id: 7,
    method: "tasks/get",
    params: {
      taskId: "tâsk 1",
      _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
    },
  }
  const input = (fetch: typeof globalThis.fetch) => ({
    url: server.url,
    message,
    headers: { Authorization: "Bearer t", Accept: "Application/JSON, text/plain", "X-Extra": " v " },
    fetch,
    maxAnswerBytes: 1 << 20,
  })

  it("sends exactly the headers and body the SDK's transport sends, and reads the answer the same", async () => {
    const answer = () => json({ jsonrpc: "2.0", id: 7, result: { taskId: "t" } })
    const viaSdk = recording(answer)
    const viaLean = recording(answer)
    const sdk = await observe((resolve) => exchange(input(viaSdk.fetch), makeRecorder(), resolve))
    const lean = await observe((resolve) =>
      leanExchange(input(viaLean.fetch), overFetch(viaLean.fetch), makeRecorder(), resolve),
    )
    expect(viaLean.sent).toEqual(viaSdk.sent)
    expect(viaLean.sent[0]?.headers).toMatchObject({
      "mcp-method": "tasks/get",
      "mcp-name": "=?base64?dMOic2sgMQ==?=",
      accept: "application/json, text/plain, text/event-stream",
    })
    expect({ ...lean, headers: undefined, sendError: undefined }).toEqual({
      ...sdk,
      headers: undefined,
      sendError: undefined,
    })
  })

  it.effect("is taken for a stateless request: the wire's request function sends it, not fetch", () =>
    Effect.gen(function* () {
      const asked: Array<HttpWire.RequestInput> = []
      const wire = yield* HttpWire.make({
        fetch: () => Promise.reject(new Error("fetch is not for this request")),
        request: (request, done) => {
          asked.push(request)
          const id = (JSON.parse(request.body) as { id: number }).id
          done({
            _tag: "Answered",
            status: 200,
            headers: new Headers({ "content-type": "application/json" }),
            text: JSON.stringify({
              jsonrpc: "2.0",
              id,
              result: {
                status: "working",
                taskId: "t1",
                createdAt: "2026-01-01T00:00:00Z",
                lastUpdatedAt: "2026-01-01T00:00:00Z",
                ttlMs: 60000,
              },
            }),
          })
          return () => {}
        },
      })
      const state = yield* wire.getTask(server, "t1")
      expect(state.status).toBe("working")
      expect(asked.map((request) => request.headers["mcp-method"])).toEqual(["tasks/get"])
    }),
  )

  it("hands an event stream to the transport's path, which reads it without sending again", async () => {
    const stream = () =>
      new Response(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } })}\n\nevent: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: 7, result: { ok: true } })}\n\n`,
        { status: 200, headers: { "content-type": "text/event-stream" } },
      )
    const { sent, fetch } = recording(stream)
    const notices: Array<string> = []
    const observation = await observe((resolve) =>
      leanExchange(
        { ...input(fetch), onNotification: (notice) => notices.push(notice.method) },
        overFetch(fetch),
        makeRecorder(),
        resolve,
      ),
    )
    expect(sent).toHaveLength(1)
    expect(observation).toMatchObject({ answered: true, contentType: "text/event-stream", status: 200 })
    expect(observation.sseEvents).toHaveLength(2)
    expect(notices).toEqual(["notifications/progress"])
  })

  it("hands a same-origin redirect to the transport's path, which follows it once", async () => {
    let calls = 0
    const { sent, fetch } = recording(() => {
      calls += 1
      return calls === 1
        ? new Response(null, { status: 307, headers: { location: "/mcp2" } })
        : json({ jsonrpc: "2.0", id: 7, result: { ok: true } })
    })
    const observation = await observe((resolve) =>
      leanExchange(input(fetch), overFetch(fetch), makeRecorder(), resolve),
    )
    expect(sent.map((request) => request.url)).toEqual([server.url, "http://lean.test/mcp2"])
    expect(observation).toMatchObject({ status: 200, contentType: "application/json" })
    expect(JSON.parse(observation.bodyText ?? "null")).toMatchObject({ result: { ok: true } })
  })

  it("leaves no timer behind when the request function answers at once", async () => {
    vi.useFakeTimers()
    try {
      const observation = await observe((resolve) =>
        leanExchange(
          { ...input(() => Promise.reject(new Error("unused"))), timeoutMs: 30_000 },
          (_, done) => {
            done({ _tag: "Failed", error: new TypeError("refused at once") })
            return () => {}
          },
          makeRecorder(),
          resolve,
        ),
      )
      expect(observation.fetchError).toBeInstanceOf(TypeError)
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })
})
