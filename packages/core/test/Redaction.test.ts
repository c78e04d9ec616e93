/**
 * Task ids are secrets (issue 32): the one redaction module, and the library's outputs that go
 * through it. A client whose store fails with a message quoting a task id (as a database's
 * constraint detail does), and whose server puts the id in status messages and results, logs
 * and traces nothing that holds the id whole, through the app's own logger and an OpenTelemetry
 * exporter; the Promise facade's rejections neither. Adopted rows are keyed by a hash of the id,
 * rows adopted under the id itself are still found, and a task the server does not know is
 * `UnknownTask`, with nothing recorded.
 */
import { describe, expect, it } from "@effect/vitest"
import { openTaskClient } from "@mcp-handles/core"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Redaction from "@mcp-handles/core/Redaction"
import * as TaskReference from "@mcp-handles/core/TaskReference"
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as fc from "fast-check"
import { type Harness, makeHarness, runFor, serverUrl, startProcess, withStore } from "./support/harness.js"
import { otel } from "./support/otel.js"

/** An app's logger that keeps every line, formatted the two usual ways (causes in full). */
const capturing = () => {
  const lines: Array<string> = []
  const logger = Logger.make((options) => {
    lines.push(Logger.logfmtLogger.log(options))
    lines.push(JSON.stringify(Logger.structuredLogger.log(options)))
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** Everything a finished span carries, as text. */
const spanText = (exporter: InMemorySpanExporter) =>
  exporter.getFinishedSpans().map((span) =>
    JSON.stringify({
      name: span.name,
      attributes: span.attributes,
      events: span.events,
      status: span.status,
    }),
  )

const tools = [
  {
    name: "slow",
    shape: "task" as const,
    durationMs: 3_000,
    pollIntervalMs: 500,
    workingMessage: "working on task {{taskId}}",
    outcome: { kind: "result" as const, text: "task {{taskId}} done" },
  },
]

/** A task the app created itself (straight at the server), for the client to adopt. */
const createTask = (h: Harness, tool: string, args: Record<string, unknown>) =>
  Effect.promise(async () => {
    const response = await h.server.handler(
      new Request(serverUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": tool,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: tool,
            arguments: args,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {
                extensions: { "io.modelcontextprotocol/tasks": {} },
              },
            },
          },
        }),
      }),
    )
    const body = (await response.json()) as { result: { resultType: string; taskId: string } }
    expect(body.result.resultType).toBe("task")
    return body.result.taskId
  })

/** `store`, whose next `update` after `arm()` fails the way a database quoting the row would. */
const failingOnce = (store: HandleStore.HandleStore) => {
  let armed: string | undefined
  const wrapped: HandleStore.HandleStore = {
    ...store,
    update: (record, ...rest) => {
      if (armed !== undefined && record.taskId !== null) {
        const id = armed
        armed = undefined
        return Effect.fail(
          new HandleStore.StoreError({
            operation: "update",
            message: `duplicate key value violates unique constraint; Key (task_id)=(${id}) already exists`,
            cause: new Error(`detail: task ${id}`),
          }),
        )
      }
      return store.update(record, ...rest)
    },
  }
  return { store: wrapped, arm: (id: string) => (armed = id) }
}

describe("Redaction", () => {
  it("shortens known ids in any string, and related-task references wherever they are", () => {
    const id = "1291a0b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e840"
    const other = "ffee0011223344556677"
    const result = {
      content: [{ type: "text", text: `task ${id} done` }],
      _meta: { "io.modelcontextprotocol/related-task": { taskId: other } },
      nested: [{ [`key-${id}`]: id }],
    }
    const redacted = Redaction.value(result, [id])
    const text = JSON.stringify(redacted)
    expect(text).not.toContain(id)
    expect(text).not.toContain(other)
    expect(text).toContain(Redaction.taskId(id))
    expect(redacted._meta["io.modelcontextprotocol/related-task"].taskId).toBe(Redaction.taskId(other))
    // The input is left as it was.
    expect(JSON.stringify(result)).toContain(id)
    // A short id is replaced where it is a whole string, never inside other text.
    expect(Redaction.value({ a: "42", b: "x42y" }, ["42"])).toEqual({ a: "…", b: "x42y" })
    expect(Redaction.idsOf({ taskId: id, result })).toEqual([id, other])
  })

  it("text replaces, leftmost and longest first, every known id long enough, as a regex of them all would", () => {
    // Ids over a small alphabet, so that they overlap, contain each other and recur in the text.
    const alphabet = fc.constantFrom("a", "b", "c", "-", "é", "😀")
    const chars = (max: number) => fc.array(alphabet, { maxLength: max }).map((cs) => cs.join(""))
    // Some ids share a stem as long as the hashed prefix, so that one is a prefix of another.
    const id = fc
      .oneof(
        fc.tuple(fc.constantFrom("", "abcab-", "ab😀cé"), chars(4)),
        fc.tuple(fc.constant(""), chars(10)),
      )
      .map(([stem, rest]) => stem + rest)
      .filter((text) => text.length > 0)
    fc.assert(
      fc.property(
        fc.uniqueArray(id, { maxLength: 8 }),
        fc.array(fc.oneof(alphabet, id), { maxLength: 30 }),
        (ids, parts) => {
          const input = parts.join("")
          const known = Redaction.make({ ids })
          const kept = ids
          const long = kept
            .filter((k) => k.length >= Redaction.minTextLength)
            .sort((a, b) => b.length - a.length)
          const escaped = long.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          const expected = kept.includes(input)
            ? Redaction.taskId(input)
            : long.length === 0
              ? input
              : input.replace(new RegExp(escaped.join("|"), "g"), (match) => Redaction.taskId(match))
          expect(known.text(input)).toBe(expected)
        },
      ),
      { numRuns: 2000 },
    )
  })

  it("a legacy adopted key's id is shortened by its shape, known or not; a hashed key is kept", () => {
    const id = "5e1c2a90-77b3-4f0e-9d41-0c2f6a8b9e13"
    const known = Redaction.make()
    expect(known.text(`no call with key "adopted:${id}" in scope "x"`)).toBe(
      `no call with key "adopted:${Redaction.taskId(id)}" in scope "x"`,
    )
    expect(Redaction.value({ key: `adopted:${id}` }, [])).toEqual({ key: `adopted:${Redaction.taskId(id)}` })
    // A hashed key names no id; one already shortened is left as it is.
    expect(known.text("adopted:0123456789abcdef")).toBe("adopted:0123456789abcdef")
    const once = known.text(`adopted:${id}`)
    expect(known.text(once)).toBe(once)
    // A known id in a legacy key: shortened once, not twice.
    expect(Redaction.make({ ids: [id] }).text(`adopted:${id}`)).toBe(`adopted:${Redaction.taskId(id)}`)
  })

  it("a Known never forgets: the first of 30,000 ids is shortened like the last", () => {
    const ids = Array.from(
      { length: 30_000 },
      (_, i) => `task-${String(i).padStart(8, "0")}-${"x".repeat(8)}`,
    )
    const known = Redaction.make()
    for (const id of ids) known.add(id)
    // Seen again, as every poll hands the store's ids again: nothing changes.
    known.add(ids[0])
    expect(known.text(`first ${ids[0]}, last ${ids[29_999]}`)).toBe(
      `first ${Redaction.taskId(ids[0] ?? "")}, last ${Redaction.taskId(ids[29_999] ?? "")}`,
    )
    expect(ids.every((id) => known.has(id))).toBe(true)
  })

  it("an error keeps its class and tag, with message, stack and fields redacted", () => {
    const id = "abcdef0123456789abcdef"
    const error = new HandleStore.StoreError({
      operation: "get",
      message: `row of ${id}`,
      cause: `task ${id}`,
    })
    const redacted = Redaction.error(error, Redaction.make({ ids: [id] }))
    expect(redacted).toBeInstanceOf(HandleStore.StoreError)
    expect(redacted._tag).toBe("StoreError")
    expect(redacted.message).toBe(`row of ${Redaction.taskId(id)}`)
    expect(String(redacted.stack)).not.toContain(id)
    expect(redacted.cause).toBe(`task ${Redaction.taskId(id)}`)
    expect(error.message).toContain(id)
  })

  it.effect("a client's logs and spans hold no full task id, even when a store error quotes it", () => {
    const exporter = new InMemorySpanExporter()
    const logs = capturing()
    return Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const failing = failingOnce(h.store)
      const p = yield* startProcess(withStore(h, failing.store), { background: false, push: false })
      const handle = yield* runFor(p.client.callTool("fake", "slow", { n: 1 }, { key: "k1" }), 1_000)
      const taskId = handle.record.taskId
      expect(taskId).not.toBeNull()
      if (taskId === null) return
      // The next write of the row fails quoting the id; the call goes on.
      failing.arm(taskId)
      const outcome = yield* runFor(handle.outcome, 20_000)
      expect(outcome._tag).toBe("Completed")
      yield* p.close

      const all = [...logs.lines, ...spanText(exporter)]
      // The store error was logged and traced (shortened): the check below had something to find.
      expect(all.join("\n")).toContain(`Key (task_id)=(${Redaction.taskId(taskId)})`)
      for (const line of all) expect(line.includes(taskId), line).toBe(false)
    }).pipe(
      Effect.provide(otel(exporter)),
      Effect.provide(logs.layer),
      Logger.withMinimumLogLevel(LogLevel.Debug),
    )
  })

  it.effect("without a tracer of the app's, a client's polls and writes make no span", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      // Whether each write of a row ran under a span: the client's own would be the only one.
      const spanned: Array<boolean> = []
      const store: HandleStore.HandleStore = {
        ...h.store,
        update: (record, ...rest) =>
          Effect.flatMap(Effect.option(Effect.currentSpan), (span) => {
            spanned.push(span._tag === "Some")
            return h.store.update(record, ...rest)
          }),
      }
      const p = yield* startProcess(withStore(h, store), { background: false, push: false })
      const handle = yield* runFor(p.client.callTool("fake", "slow", { n: 1 }, { key: "k1" }), 1_000)
      expect((yield* runFor(handle.outcome, 20_000))._tag).toBe("Completed")
      yield* p.close
      expect(spanned.length).toBeGreaterThan(1)
      expect(spanned.filter(Boolean)).toEqual([])
    }),
  )

  it.effect(
    "an adopted row's key holds no id; adopting again finds it; a row adopted under the id is still found",
    () => {
      const exporter = new InMemorySpanExporter()
      const logs = capturing()
      return Effect.gen(function* () {
        const h = yield* makeHarness({ tools })
        const p = yield* startProcess(h, { background: false, push: false })
        const taskId = yield* createTask(h, "slow", { n: 1 })
        const adopted = yield* p.client.adopt("fake", taskId, { scope: "other" })
        expect(adopted.key).toBe(yield* TaskReference.adoptedKey(taskId))
        expect(adopted.key).not.toContain(taskId)
        expect(adopted.key).toMatch(/^adopted:[0-9a-f]{16}$/)
        const again = yield* p.client.adopt("fake", taskId, { scope: "other" })
        expect(again.key).toBe(adopted.key)
        expect(again.record.version).toBe(adopted.record.version)

        // A row adopted before keys were hashed: keyed and marked with the id itself.
        const legacyTask = yield* createTask(h, "slow", { n: 2 })
        const now = yield* h.store.now
        const { record: legacy } = yield* h.store.insertOrGet({
          scope: "old",
          key: `adopted:${legacyTask}`,
          serverId: adopted.record.serverId,
          tool: "(adopted)",
          arguments: null,
          argumentsHash: `adopted:${legacyTask}`,
          owner: "local",
          leaseMs: 0,
          now,
        })
        const found = yield* p.client.adopt("fake", legacyTask, { scope: "old" })
        expect(found.key).toBe(`adopted:${legacyTask}`)
        expect(found.record.taskId).toBe(legacyTask)
        expect(found.record.createdAt).toBe(legacy.createdAt)
        const page = yield* h.store.list({ scope: "old", limit: 10 })
        expect(page.records).toHaveLength(1)

        // Settling it logs and traces under its key: shortened there too.
        yield* runFor(found.outcome, 20_000)
        yield* p.close
        const all = [...logs.lines, ...spanText(exporter)]
        expect(all.join("\n")).toContain(`adopted:${Redaction.taskId(legacyTask)}`)
        for (const line of all) {
          expect(line.includes(taskId), line).toBe(false)
          expect(line.includes(legacyTask), line).toBe(false)
        }
      }).pipe(
        Effect.provide(otel(exporter)),
        Effect.provide(logs.layer),
        Logger.withMinimumLogLevel(LogLevel.Debug),
      )
    },
  )

  it.effect("adopting a task id the server does not know is UnknownTask, and records nothing", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { background: false, push: false })
      const unknown = "no-such-task-0123456789abcdef"
      const error = yield* Effect.flip(p.client.adopt("fake", unknown))
      expect(error._tag).toBe("UnknownTask")
      expect(error.message).not.toContain(unknown)
      expect(error.message).toContain(Redaction.taskId(unknown))
      const page = yield* h.store.list({ scope: "default", limit: 10 })
      expect(page.records).toHaveLength(0)
      yield* p.close
    }),
  )

  it("the Promise facade rejects with the error's message redacted", async () => {
    const h = await Effect.runPromise(makeHarness({ tools }))
    let failGet: string | undefined
    const store: HandleStore.HandleStore = {
      ...h.store,
      get: (scope, key) =>
        failGet === undefined
          ? h.store.get(scope, key)
          : Effect.fail(
              new HandleStore.StoreError({ operation: "get", message: `cannot read task ${failGet}` }),
            ),
    }
    const client = await openTaskClient({
      store: Layer.succeed(HandleStore.HandleStore, store),
      servers: [{ name: "fake", url: serverUrl }],
      http: { fetch: async (input, init) => h.server.handler(new Request(input, init)) },
      background: false,
    })
    try {
      const handle = await client.callTool("fake", "slow", { n: 1 }, { key: "p1" })
      const taskId = handle.record.taskId as string
      expect(taskId.length).toBeGreaterThan(8)
      failGet = taskId
      const error = (await client.get("p1").then(
        () => undefined,
        (e: unknown) => e,
      )) as Error & { readonly _tag: string }
      expect(error._tag).toBe("StoreError")
      expect(error.message).toBe(`cannot read task ${Redaction.taskId(taskId)}`)
      expect(String(error.stack)).not.toContain(taskId)
    } finally {
      failGet = undefined
      await client.close()
    }
  })
})
