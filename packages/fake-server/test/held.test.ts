/**
 * Direct answers take their tool's time: a call answered without a task (a client without the
 * tasks extension, or a tool that answers directly) is held open for the tool's `durationMs`, as a
 * real server holds it, which is how stock clients lose long calls. The hold follows the server's
 * clock and sleep (a virtual clock in tests), is cut by the client going away and by the faults of
 * the answer, and reports progress on an event stream when the client sent a progress token.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import type * as Config from "../src/Config.js"
import * as FakeServer from "../src/FakeServer.js"
import * as NodeHttp from "../src/NodeHttp.js"
import * as ServerClock from "../src/ServerClock.js"
import { type AnyJson, answeredAfter, call, flush, request, track, withTasks } from "./helpers.js"

const T0 = Date.UTC(2026, 6, 28)

const config: Config.Config = {
  tools: [
    { name: "slow", durationMs: 20_000, pollIntervalMs: 1_000, outcome: { kind: "result", text: "done" } },
    { name: "lookup", shape: "direct", durationMs: 3_000, outcome: { kind: "result", text: "found" } },
    { name: "instant", shape: "direct", outcome: { kind: "result", text: "now" } },
    {
      name: "stepped",
      shape: "direct",
      durationMs: 4_000,
      progress: { steps: [10, 20, 30], total: 30 },
      outcome: { kind: "result", text: "stepped" },
    },
  ],
}

const withoutTasks = { capabilities: {} }

const setup = (extra: Partial<Config.Config> = {}, options: FakeServer.Options = {}) => {
  const clock = ServerClock.manual(T0)
  const server = FakeServer.unsafeMake({ ...config, ...extra }, { clock, sleep: clock.sleep, ...options })
  return { clock, server }
}

/** Reads an event stream as it comes, noting the clock time each message was read at. */
const readFrames = (response: Response, clock: ServerClock.ServerClock) => {
  const frames: Array<{ readonly at: number; readonly message: AnyJson }> = []
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  const done = (async () => {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true })
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const data = buffer
          .slice(0, end)
          .split("\n")
          .find((line) => line.startsWith("data: "))
        buffer = buffer.slice(end + 2)
        if (data !== undefined) frames.push({ at: clock.now(), message: JSON.parse(data.slice(6)) })
      }
    }
  })()
  return { frames, done }
}

describe("a direct answer is held for its tool's duration", () => {
  it.effect("under the TestClock: a 20 s tool answers a client without tasks after 20 s, not before", () =>
    Effect.gen(function* () {
      const clock = yield* Effect.clock
      const server = FakeServer.unsafeMake(config, {
        clock: { now: () => clock.unsafeCurrentTimeMillis() },
        sleep: (ms) => Effect.runPromise(Effect.sleep(Duration.millis(ms)).pipe(Effect.withClock(clock))),
      })
      const answering = yield* Effect.fork(
        Effect.promise(async () =>
          (await server.handler(request("tools/call", { name: "slow" }, withoutTasks))).json(),
        ),
      )
      yield* Effect.promise(flush)
      yield* TestClock.adjust(Duration.millis(19_999))
      yield* Effect.promise(flush)
      expect((yield* Fiber.poll(answering))._tag).toBe("None")
      yield* TestClock.adjust(Duration.millis(1))
      const answer = (yield* Fiber.join(answering)) as AnyJson
      expect(answer.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "done" }] })
      expect(server.ledger.requests[0]).toMatchObject({ at: 0, endedAt: 20_000, outcome: "result" })
      expect(server.ledger.launches[0]).toMatchObject({ at: 0, taskId: null, responseDelivered: true })
      expect(server.taskIds()).toEqual([])
    }),
  )

  it("a tool that answers directly is held for a client with tasks too; a task is still created at once", async () => {
    const { server, clock } = setup()
    expect(await answeredAfter(clock, 3_000, call(server, "tools/call", { name: "lookup" }))).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "found" }],
    })
    // The client declared the extension: the 20 s tool is a task, answered without waiting.
    const created = await call(server, "tools/call", { name: "slow" }, { capabilities: withTasks })
    expect(created).toMatchObject({ resultType: "task", status: "working" })
  })

  it("a manual clock given as the clock alone holds the answer on itself, not on real time", async () => {
    const clock = ServerClock.manual(T0)
    const server = FakeServer.unsafeMake(config, { clock })
    const answer = track(call(server, "tools/call", { name: "lookup" }))
    await flush()
    clock.advance(2_999)
    await flush()
    expect(answer.settled()).toBe(false)
    clock.advance(1)
    await flush()
    // There as soon as the clock got there: a real timer would still be running its 3 s.
    expect(answer.settled()).toBe(true)
    expect((await answer.promise).content).toEqual([{ type: "text", text: "found" }])
    expect(server.ledger.requests[0]).toMatchObject({ at: T0, endedAt: T0 + 3_000 })
  })

  it("a tool without a duration answers at once, as before", async () => {
    const { server } = setup()
    expect(await call(server, "tools/call", { name: "instant" })).toMatchObject({ resultType: "complete" })
  })

  it("the client giving up (its timeout) cuts the hold: the answer never leaves, the ledger says so", async () => {
    const { server, clock } = setup()
    const timeout = new AbortController()
    const answering = track(
      server.handler(
        new Request(request("tools/call", { name: "slow" }, { ...withoutTasks, key: "k-1" }), {
          signal: timeout.signal,
        }),
      ),
    )
    await flush()
    clock.advance(10_000)
    timeout.abort(new DOMException("The operation timed out.", "TimeoutError"))
    await expect(answering.promise).rejects.toMatchObject({ name: "TimeoutError" })
    clock.advance(10_000)
    await flush()
    expect(server.ledger.launchesForKey("k-1")).toEqual([
      expect.objectContaining({ taskId: null, at: T0, responseDelivered: false }),
    ])
    expect(server.ledger.requests).toEqual([
      expect.objectContaining({ method: "tools/call", outcome: "abandoned", endedAt: T0 + 10_000 }),
    ])
  })

  it("a fault on the answer strikes once the work is done: a drop cuts it after the duration", async () => {
    const { server, clock } = setup({ faults: [{ when: { method: "tools/call" }, fault: { kind: "drop" } }] })
    const answering = track(server.handler(request("tools/call", { name: "lookup" })))
    await flush()
    clock.advance(2_000)
    await flush()
    expect(answering.settled()).toBe(false)
    clock.advance(1_000)
    await expect((await answering.promise).text()).rejects.toBeInstanceOf(FakeServer.ConnectionDropped)
    expect(server.ledger.launches[0]).toMatchObject({ responseDelivered: false, fault: "drop:after" })
    expect(server.ledger.requests[0]).toMatchObject({ outcome: "dropped", at: T0, endedAt: T0 + 3_000 })
  })

  it("a restart while the answer is held cuts the connection", async () => {
    const { server, clock } = setup()
    const answering = track(server.handler(request("tools/call", { name: "lookup" })))
    await flush()
    clock.advance(1_000)
    server.restart()
    await expect((await answering.promise).text()).rejects.toBeInstanceOf(FakeServer.ConnectionDropped)
    expect(server.ledger.launches[0]).toMatchObject({ responseDelivered: false })
    expect(server.ledger.requests[0]).toMatchObject({ outcome: "dropped", endedAt: T0 + 1_000 })
  })
})

describe("progress on a held answer", () => {
  it("with a progress token and no progress configured: a quarter at a time over the duration, then the result", async () => {
    const { server, clock } = setup()
    const response = await server.handler(
      request("tools/call", { name: "slow" }, { ...withoutTasks, meta: { progressToken: "p" } }),
    )
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    const read = readFrames(response, clock)
    for (let elapsed = 0; elapsed < 20_000; elapsed += 1_000) {
      await flush()
      clock.advance(1_000)
    }
    await read.done
    expect(read.frames.map(({ at, message }) => [at - T0, message.params?.progress ?? "result"])).toEqual([
      [0, 0],
      [5_000, 25],
      [10_000, 50],
      [15_000, 75],
      [20_000, 100],
      [20_000, "result"],
    ])
    expect(read.frames.at(-1)?.message.result).toMatchObject({ resultType: "complete" })
    expect(server.ledger.requests[0]).toMatchObject({ outcome: "stream", endedAt: T0 + 20_000 })
  })

  it("configured steps are spread over the duration; the client leaving cuts the stream", async () => {
    const { server, clock } = setup()
    const leaving = new AbortController()
    const response = await server.handler(
      new Request(request("tools/call", { name: "stepped" }, { meta: { progressToken: 7 } }), {
        signal: leaving.signal,
      }),
    )
    const read = readFrames(response, clock)
    await flush()
    clock.advance(2_000)
    await flush()
    expect(read.frames.map(({ at, message }) => [at - T0, message.params.progress])).toEqual([
      [0, 10],
      [2_000, 20],
    ])
    leaving.abort()
    await expect(read.done).rejects.toThrow()
    expect(server.ledger.launches[0]).toMatchObject({ responseDelivered: false })
    expect(server.ledger.requests[0]).toMatchObject({ outcome: "abandoned", endedAt: T0 + 2_000 })
  })

  it("a client that does not accept an event stream gets the plain answer after the duration", async () => {
    const { server, clock } = setup()
    const asked = request(
      "tools/call",
      { name: "lookup" },
      { meta: { progressToken: "p" }, headers: { accept: "application/json" } },
    )
    const response = await answeredAfter(clock, 3_000, server.handler(asked))
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(((await response.json()) as AnyJson).result.content).toEqual([{ type: "text", text: "found" }])
  })
})

describe("over real HTTP", () => {
  it("a short tool answers once its time has passed; a client timeout shows as abandoned", async () => {
    const server = FakeServer.unsafeMake({
      tools: [
        { name: "short", shape: "direct", durationMs: 300 },
        { name: "long", shape: "direct", durationMs: 60_000 },
      ],
    })
    const listening = await NodeHttp.listen(server)
    try {
      const post = (name: string, signal?: AbortSignal) => {
        const built = request("tools/call", { name })
        return fetch(listening.url, {
          method: "POST",
          headers: built.headers,
          body: built.body,
          duplex: "half",
          ...(signal === undefined ? {} : { signal }),
        } as RequestInit)
      }
      const started = Date.now()
      const answer = (await (await post("short")).json()) as AnyJson
      expect(Date.now() - started).toBeGreaterThanOrEqual(290)
      expect(answer.result.resultType).toBe("complete")

      await expect(post("long", AbortSignal.timeout(200))).rejects.toMatchObject({ name: "TimeoutError" })
      await expect.poll(() => server.ledger.requests.at(-1)?.outcome).toBe("abandoned")
      expect(server.ledger.launches.at(-1)).toMatchObject({ tool: "long", responseDelivered: false })
    } finally {
      await listening.close()
    }
  })
})
