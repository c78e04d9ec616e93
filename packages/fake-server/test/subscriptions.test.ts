import { describe, expect, it } from "vitest"
import * as FakeServer from "../src/FakeServer.js"
import * as ServerClock from "../src/ServerClock.js"
import { type AnyJson, call, errorOf, request } from "./helpers.js"

const T0 = Date.UTC(2026, 6, 28)

/** Read SSE frames from a stream as they arrive. */
const frames = (response: Response) => {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  const next = async (): Promise<AnyJson | undefined> => {
    for (;;) {
      const end = buffer.indexOf("\n\n")
      if (end >= 0) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const data = frame.split("\n").find((line) => line.startsWith("data: "))
        if (data !== undefined) return JSON.parse(data.slice(6))
        continue
      }
      const { done, value } = await reader.read()
      if (done) return undefined
      buffer += decoder.decode(value, { stream: true })
    }
  }
  return { next, cancel: () => reader.cancel() }
}

describe("subscriptions/listen", () => {
  it("acknowledges first, then sends notifications/tasks on every change, then ends at terminal", async () => {
    const clock = ServerClock.manual(T0)
    const server = FakeServer.unsafeMake(
      {
        tools: [
          {
            name: "ask",
            durationMs: 500,
            inputSteps: [
              { atMs: 100, requests: { q: { method: "elicitation/create", params: { message: "?" } } } },
            ],
          },
        ],
      },
      { clock, notifyEveryMs: 0 },
    )
    const { taskId } = await call(server, "tools/call", { name: "ask" })
    const response = await server.handler(
      request("subscriptions/listen", { notifications: { taskIds: [taskId, "unknown"] } }),
    )
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const stream = frames(response)

    const ack = await stream.next()
    expect(ack.method).toBe("notifications/subscriptions/acknowledged")
    expect(ack.params.notifications).toEqual({ taskIds: [taskId] })
    const subscriptionId = ack.params._meta["io.modelcontextprotocol/subscriptionId"]
    expect(subscriptionId).toBeTypeOf("string")

    const initial = await stream.next()
    expect(initial).toMatchObject({ method: "notifications/tasks", params: { taskId, status: "working" } })
    expect(initial.params._meta["io.modelcontextprotocol/subscriptionId"]).toBe(subscriptionId)

    clock.advance(100)
    server.notify()
    const blocked = await stream.next()
    expect(blocked.params).toMatchObject({
      status: "input_required",
      inputRequests: { q: { method: "elicitation/create" } },
    })
    // Identical to what tasks/get says at the same instant (apart from the envelope fields).
    const { resultType: _r, ...viaGet } = await call(server, "tasks/get", { taskId })
    const { _meta: _m, ...viaNotification } = blocked.params
    expect(viaNotification).toEqual(viaGet)

    await call(server, "tasks/update", { taskId, inputResponses: { q: { action: "accept" } } })
    expect((await stream.next()).params.status).toBe("working")
    clock.advance(400)
    server.notify()
    expect((await stream.next()).params).toMatchObject({
      status: "completed",
      result: { content: [{ text: "ok" }] },
    })
    expect(await stream.next()).toMatchObject({ id: expect.anything(), result: { resultType: "complete" } })
    expect(await stream.next()).toBeUndefined()
  })

  it("requires the tasks extension to listen for tasks (-32021)", async () => {
    const server = FakeServer.unsafeMake({ tools: [{ name: "t" }] })
    const error = await errorOf(
      server,
      "subscriptions/listen",
      { notifications: { taskIds: ["x"] } },
      { capabilities: {} },
    )
    expect(error).toMatchObject({ status: 400, code: -32021 })
    expect(await errorOf(server, "subscriptions/listen", {})).toMatchObject({ code: -32602 })
  })

  it("keeps a stream without tasks open until the client leaves; restart closes streams", async () => {
    const server = FakeServer.unsafeMake({ tools: [{ name: "t" }] }, { notifyEveryMs: 0 })
    const response = await server.handler(
      request("subscriptions/listen", { notifications: { toolsListChanged: true } }),
    )
    const stream = frames(response)
    expect((await stream.next()).params.notifications).toEqual({ taskIds: [] })
    server.restart()
    expect(await stream.next()).toBeUndefined()
  })

  it("pushes on its own timer in real time", async () => {
    const clock = ServerClock.manual(T0)
    const server = FakeServer.unsafeMake(
      { tools: [{ name: "t", durationMs: 10 }] },
      { clock, notifyEveryMs: 5 },
    )
    const { taskId } = await call(server, "tools/call", { name: "t" })
    const stream = frames(
      await server.handler(request("subscriptions/listen", { notifications: { taskIds: [taskId] } })),
    )
    await stream.next()
    await stream.next()
    clock.advance(10)
    expect((await stream.next()).params.status).toBe("completed")
    server.close()
  })
  it("a quiet stream gets a keep-alive comment; a muted one (half-open) gets nothing more", async () => {
    const clock = ServerClock.manual(T0)
    const server = FakeServer.unsafeMake(
      { tools: [{ name: "slow", durationMs: 600_000 }] },
      { clock, notifyEveryMs: 0, keepAliveMs: 15_000 },
    )
    const { taskId } = await call(server, "tools/call", { name: "slow" })
    const response = await server.handler(
      request("subscriptions/listen", { notifications: { taskIds: [taskId] } }),
    )
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    const read = async () => decoder.decode((await reader.read()).value)
    expect(await read()).toContain("notifications/subscriptions/acknowledged")
    expect(await read()).toContain("notifications/tasks")
    clock.advance(14_000)
    server.notify()
    clock.advance(1_000)
    server.notify()
    expect(await read()).toBe(": keep-alive\n\n")

    server.muteStreams()
    clock.advance(60_000)
    server.notify()
    const more = await Promise.race([
      reader.read().then(() => "bytes"),
      new Promise((resolve) => setTimeout(() => resolve("nothing"), 50)),
    ])
    expect(more).toBe("nothing")
    await reader.cancel()
    server.close()
  })
})
