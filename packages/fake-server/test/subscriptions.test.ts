import { describe, expect, it } from "vitest"
import * as FakeServer from "../src/FakeServer.js"
import { makeSubscriptions } from "../src/internal/subscriptions.js"
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

  it("tells of every change tasks/get would show, and of nothing else: an interval that moves, one of two answers", async () => {
    const clock = ServerClock.manual(T0)
    const server = FakeServer.unsafeMake(
      {
        tools: [
          {
            name: "ask",
            durationMs: 1_000,
            pollIntervalMs: [
              { afterMs: 0, pollIntervalMs: 1_000 },
              { afterMs: 300, pollIntervalMs: 5_000 },
            ],
            inputSteps: [
              {
                atMs: 100,
                requests: {
                  a: { method: "elicitation/create", params: { message: "a?" } },
                  b: { method: "elicitation/create", params: { message: "b?" } },
                },
              },
            ],
          },
        ],
      },
      { clock, notifyEveryMs: 0 },
    )
    const { taskId } = await call(server, "tools/call", { name: "ask" })
    const stream = frames(
      await server.handler(request("subscriptions/listen", { notifications: { taskIds: [taskId] } })),
    )
    const sameAsGet = async () => {
      const pushed = await stream.next()
      const { resultType: _r, ...viaGet } = await call(server, "tasks/get", { taskId })
      const { _meta: _m, ...viaNotification } = pushed.params
      expect(viaNotification).toEqual(viaGet)
      return viaNotification
    }
    expect((await stream.next()).method).toBe("notifications/subscriptions/acknowledged")
    expect(await sameAsGet()).toMatchObject({ status: "working", pollIntervalMs: 1_000 })
    // Looks that find nothing new send nothing: the next frame is the next change.
    server.notify()
    clock.advance(50)
    server.notify()
    clock.advance(50)
    server.notify()
    expect(await sameAsGet()).toMatchObject({ status: "input_required", inputRequests: { a: {}, b: {} } })
    await call(server, "tasks/update", { taskId, inputResponses: { a: { action: "accept" } } })
    server.notify()
    const partly = await sameAsGet()
    expect(partly).toMatchObject({ status: "input_required" })
    expect(Object.keys(partly.inputRequests)).toEqual(["b"])
    // Only the interval moves.
    clock.advance(200)
    server.notify()
    expect(await sameAsGet()).toMatchObject({ status: "input_required", pollIntervalMs: 5_000 })
    await stream.cancel()
  })

  it("a task left alone between looks is still told of at once: its cancel, its finish", async () => {
    const clock = ServerClock.manual(T0)
    const server = FakeServer.unsafeMake(
      { tools: [{ name: "t", durationMs: 1_000 }] },
      { clock, notifyEveryMs: 0 },
    )
    const first = (await call(server, "tools/call", { name: "t" })).taskId
    const second = (await call(server, "tools/call", { name: "t" })).taskId
    const stream = frames(
      await server.handler(request("subscriptions/listen", { notifications: { taskIds: [first, second] } })),
    )
    expect((await stream.next()).method).toBe("notifications/subscriptions/acknowledged")
    expect((await stream.next()).params).toMatchObject({ status: "working" })
    expect((await stream.next()).params).toMatchObject({ status: "working" })
    clock.advance(500)
    server.notify()
    // A request that changes a task is seen on the next look, however quiet the clock says it is.
    await call(server, "tasks/cancel", { taskId: first })
    server.notify()
    expect((await stream.next()).params).toMatchObject({ taskId: first, status: "cancelled" })
    clock.advance(499)
    server.notify()
    clock.advance(1)
    server.notify()
    expect((await stream.next()).params).toMatchObject({ taskId: second, status: "completed" })
    await stream.cancel()
  })

  it("a stream skips its quiet tasks until the earliest of them may change, and looks at all after a request changed one", () => {
    let now = 0
    let version = 0
    const looked: Array<string> = []
    const subscriptions = makeSubscriptions(
      (taskId) => {
        looked.push(taskId)
        return {
          key: `${taskId} ${now >= 1_000 ? "completed" : "working"}`,
          task: () => ({ taskId }),
          terminal: false,
          quietUntil: taskId === "a" ? 1_000 : 2_000,
        }
      },
      { now: () => now, keepAliveMs: 0, version: () => version },
    )
    subscriptions.listen(1, ["a", "b"], undefined)
    expect(looked).toEqual(["a", "b"])
    for (let i = 0; i < 100; i++) subscriptions.poke()
    now = 999
    subscriptions.poke()
    expect(looked).toEqual(["a", "b"])
    // The earlier of the two comes: that task is looked at, the other is still quiet.
    now = 1_000
    subscriptions.poke()
    expect(looked).toEqual(["a", "b", "a"])
    // A request changed a task: every task is looked at again.
    version++
    subscriptions.poke()
    expect(looked).toEqual(["a", "b", "a", "a", "b"])
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
