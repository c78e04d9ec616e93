/**
 * Live events (issue 15, item 3): status changes, status messages and input requests, of one
 * call or of a scope; and the Promise facade's waits stopped by an AbortSignal.
 */
import { describe, expect, it } from "@effect/vitest"
import { openTaskClient } from "@mcp-handles/core"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as TaskClient from "@mcp-handles/core/TaskClient"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { MemoryStore } from "@mcp-handles/store-memory"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { makeHarness, runFor, startProcess } from "./support/harness.js"

const tools = [
  {
    name: "slow",
    shape: "task" as const,
    durationMs: 2_000,
    pollIntervalMs: 200,
    workingMessage: "thinking",
  },
  {
    name: "ask",
    shape: "task" as const,
    durationMs: 60_000,
    pollIntervalMs: 200,
    inputSteps: [
      {
        atMs: 0,
        requests: {
          confirm: {
            method: "elicitation/create",
            params: {
              mode: "form",
              message: "Sure?",
              requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
            },
          },
        },
      },
    ],
  },
  { name: "quick", shape: "direct" as const, outcome: { kind: "result" as const, text: "ok" } },
]

const brief = (event: TaskClient.ClientEvent) =>
  event._tag === "StatusChanged"
    ? `${event.key} ${event.from ?? "-"} -> ${event.to} (${event.cause})`
    : event._tag === "StatusMessage"
      ? `${event.key} message ${event.message}`
      : event._tag === "Progress"
        ? `${event.key} progress ${event.progress}/${event.total ?? "?"}`
        : `${event.key} input ${event.inputKey}`

/** What `events` reports of the slow call `k`, from its launch to its end. */
const slowCall = [
  "k - -> pending (call)",
  "k pending -> working (TaskCreated)",
  "k message thinking",
  "k working -> completed (Polled)",
]

describe("events", () => {
  it.effect("of one call: its status changes and messages, ending once it is terminal", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { instanceId: "a" })
      yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      const events = yield* runFor(Stream.runCollect(p.client.events("k", { pollIntervalMs: 100 })), 20_000)
      expect(Chunk.toArray(events).map(brief)).toEqual(slowCall)
    }),
  )

  it.effect("a note in the history (who acted, the status unchanged) is no status change", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { instanceId: "a" })
      yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      const row = (yield* h.store.get("default", "k")).pipe(Option.getOrThrow)
      const note = new HandleRecord.HistoryEntry({
        at: yield* h.store.now,
        from: row.status,
        to: row.status,
        cause: "cancel asked",
        instance: "ui:ann",
      })
      yield* h.store.update(HandleRecord.withHistoryEntry(row, note))
      const events = yield* runFor(Stream.runCollect(p.client.events("k", { pollIntervalMs: 100 })), 20_000)
      expect(Chunk.toArray(events).map(brief)).toEqual(slowCall)
      const settled = (yield* h.store.get("default", "k")).pipe(Option.getOrThrow)
      expect(settled.history.map((entry) => entry.cause)).toContain("cancel asked")
    }),
  )

  it.effect("of one call, subscribed before the call is made: waits for it, misses nothing", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { instanceId: "a" })
      const collected = yield* Effect.fork(Stream.runCollect(p.client.events("k", { pollIntervalMs: 100 })))
      yield* runFor(Effect.sleep("300 millis"), 1_000)
      yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
      const events = yield* runFor(collected.await.pipe(Effect.flatten), 20_000)
      expect(Chunk.toArray(events).map(brief)).toEqual(slowCall)
    }),
  )

  it.effect("of a scope: calls made after it started, with their input requests, from any instance", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const before = yield* startProcess(h, { instanceId: "a" })
      yield* runFor(before.client.callTool("fake", "quick", {}, { key: "old" }), 1_000)
      // The watcher reads the store; the calls are made and driven by another instance.
      const watcher = yield* startProcess(h, { instanceId: "w", background: false })
      const driver = yield* startProcess(h, { instanceId: "d", onInputRequired: () => Effect.never })
      const collected = yield* Effect.fork(
        Stream.runCollect(Stream.take(watcher.client.events(undefined, { pollIntervalMs: 100 }), 6)),
      )
      yield* runFor(Effect.sleep("300 millis"), 1_000)
      yield* runFor(driver.client.callTool("fake", "quick", {}, { key: "q" }), 1_000)
      yield* runFor(driver.client.callTool("fake", "ask", {}, { key: "a" }), 1_000)
      const events = Chunk.toArray(yield* runFor(collected.await.pipe(Effect.flatten), 20_000)).map(brief)
      expect(events.filter((e) => e.startsWith("q "))).toEqual([
        "q - -> pending (call)",
        "q pending -> completed (CallCompleted)",
      ])
      // The task asks for input at once: working is skipped; the driver's handler never answers.
      expect(events.filter((e) => e.startsWith("a "))).toEqual([
        "a - -> pending (call)",
        "a pending -> input_required (TaskCreated)",
        "a message Waiting for input",
        "a input confirm",
      ])
      expect(events.some((e) => e.startsWith("old "))).toBe(false)
    }),
  )
})

describe("Promise waits with an AbortSignal", () => {
  const open = () => {
    const server = FakeServer.unsafeMake({
      tools: [
        { name: "forever", shape: "task", durationMs: 3_600_000, pollIntervalMs: 1_000 },
        { name: "quick", shape: "direct", outcome: { kind: "result", text: "ok" } },
        { name: "soon", shape: "task", durationMs: 300, pollIntervalMs: 100 },
      ],
    })
    return openTaskClient({
      store: MemoryStore.layer,
      servers: [{ name: "fake", url: "http://fake.test/mcp" }],
      http: { fetch: async (input, init) => server.handler(new Request(input, init)) },
    })
  }

  it("stops settle and outcome, not the call; an aborted signal refuses at once", async () => {
    await using client = await open()
    const handle = await client.callTool("fake", "forever", {}, { key: "f" })
    const controller = new AbortController()
    const waiting = client.settle("f", undefined, { signal: controller.signal })
    const alsoWaiting = handle.outcome({ signal: controller.signal })
    controller.abort(new Error("enough waiting"))
    await expect(waiting).rejects.toThrow("enough waiting")
    await expect(alsoWaiting).rejects.toThrow("enough waiting")
    expect((await client.get("f")).status).toBe("working")
    await expect(client.settle("f", undefined, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: "AbortError",
    })
  })

  it("the last event of a call comes as its outcome resolves, not a poll of the store later", async () => {
    await using client = await open()
    const handle = await client.callTool("fake", "soon", {}, { key: "s" })
    const feed = client.events("s", { pollIntervalMs: 3_000 })
    let lastEventAt = 0
    const seen: Array<string> = []
    const watching = (async () => {
      for await (const event of feed) {
        seen.push(brief(event))
        lastEventAt = Date.now()
      }
    })()
    await handle.outcome()
    const resolvedAt = Date.now()
    await watching
    expect(seen.at(-1)).toBe("s working -> completed (Polled)")
    // Read from the store every 3 s, it would come up to 3 s later.
    expect(lastEventAt - resolvedAt).toBeLessThan(500)
  })

  it("closing a feed, then the client, ends its loop cleanly", async () => {
    const client = await open()
    await client.callTool("fake", "forever", {}, { key: "f" })
    const feed = client.events("f", { pollIntervalMs: 10_000 })
    const seen: Array<string> = []
    const watching = (async () => {
      for await (const event of feed) seen.push(brief(event))
      return "ended"
    })()
    while (seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 10))
    await feed.close()
    await client.close()
    await expect(watching).resolves.toBe("ended")
  })

  it("events of one call as an async iterable", async () => {
    await using client = await open()
    await client.callTool("fake", "quick", {}, { key: "q" })
    const seen: Array<string> = []
    for await (const event of client.events("q", { pollIntervalMs: 10 })) seen.push(brief(event))
    expect(seen).toEqual(["q - -> pending (call)", "q pending -> completed (CallCompleted)"])
  })
})
