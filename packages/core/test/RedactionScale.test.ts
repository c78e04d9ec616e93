/**
 * The library's faces (logs, spans, the Promise facade's errors) once a client has met more than
 * 10,000 task ids, on a SQLite file of that many calls: a redaction that kept only the ids it
 * met last would show the first ones whole. Redaction must not depend on how many ids a process
 * has seen.
 */
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { openTaskClient } from "@mcp-handles/core"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import * as Polling from "@mcp-handles/core/Polling"
import * as Redaction from "@mcp-handles/core/Redaction"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { otel } from "./support/otel.js"

const rows = 10_050
let dir = ""
let file = ""
/** The oldest row's, keyed by it the way rows adopted before keys were hashed are. */
const oldest = randomUUID()
const oldestKey = `adopted:${oldest}`
const ids: Array<string> = [oldest]

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-handles-redaction-scale-"))
  file = join(dir, "tasks.db")
  const write = (key: string, taskId: string, createdAt: number) =>
    Effect.gen(function* () {
      const store = yield* HandleStore.HandleStore
      const { record } = yield* store.insertOrGet({
        scope: "default",
        key,
        serverId: "fake:0123456789abcdef",
        tool: "slow",
        arguments: {},
        argumentsHash: "0".repeat(64),
        owner: "seed",
        leaseMs: 0,
        now: createdAt,
      })
      yield* store.update(
        new HandleRecord.HandleRecord({
          ...record,
          status: "working",
          taskId,
          lastProblem: `no answer about task ${taskId}`,
          nextPollAt: createdAt + 86_400_000,
        }),
      )
    })
  const start = Date.now() - 3_600_000
  const fillers = Array.from({ length: rows }, () => randomUUID())
  ids.push(...fillers)
  await Effect.runPromise(
    Effect.all(
      [write(oldestKey, oldest, start), ...fillers.map((id, i) => write(`row-${i}`, id, start + 1 + i))],
      {
        concurrency: 512,
        discard: true,
      },
    ).pipe(Effect.provide(SqliteStore.layer({ filename: file, synchronous: "NORMAL" }))),
  )
}, 120_000)

afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

/** The SQLite store, whose reads of the oldest row fail quoting its id (as a database's error detail would). */
const storeLayer = () =>
  Layer.effect(
    HandleStore.HandleStore,
    Effect.map(HandleStore.HandleStore, (store) =>
      HandleStore.HandleStore.of({
        ...store,
        get: (scope, key) =>
          key === oldestKey
            ? Effect.fail(
                new HandleStore.StoreError({
                  operation: "get",
                  message: `could not read the row of task ${oldest}`,
                  cause: new Error(`detail: Key (task_id)=(${oldest})`),
                }),
              )
            : store.get(scope, key),
        insertOrGet: (handle) =>
          handle.key.includes(oldest)
            ? Effect.fail(
                new HandleStore.StoreError({
                  operation: "insertOrGet",
                  message: `duplicate key value violates unique constraint; Key (key)=(${handle.key}) already exists`,
                }),
              )
            : store.insertOrGet(handle),
      }),
    ),
  ).pipe(Layer.provide(SqliteStore.layer({ filename: file })))

/** Every page of the scope, through the client: it meets every task id. */
const listEverything = (client: TaskClient.TaskClient) =>
  Effect.gen(function* () {
    let cursor: string | undefined
    let seen = 0
    for (;;) {
      const page = yield* client.list({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) })
      seen += page.records.length
      if (page.nextCursor === null) return seen
      cursor = page.nextCursor
    }
  })

const expectNoIds = (text: string, where: string) => {
  for (const id of ids) {
    const at = text.indexOf(id)
    expect(at, `task id ${id} in ${where}: …${text.slice(Math.max(0, at - 300), at + 100)}…`).toBe(-1)
  }
}

describe("redaction after more than 10,000 task ids", () => {
  it("the Promise facade's error about the first row met", async () => {
    const client = await openTaskClient({
      store: storeLayer(),
      servers: [{ name: "fake", url: "http://127.0.0.1:9/mcp" }],
      background: false,
    })
    try {
      let seen = 0
      let cursor: string | undefined
      for (;;) {
        const page = await client.list({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) })
        seen += page.records.length
        if (page.nextCursor === null) break
        cursor = page.nextCursor
      }
      expect(seen).toBe(rows + 1)
      const error = (await client.get(oldestKey).then(
        () => undefined,
        (e: unknown) => e,
      )) as Error & { readonly _tag: string; readonly cause?: unknown }
      expect(error._tag).toBe("StoreError")
      expect(error.message).toContain("could not read the row of task ")
      expectNoIds(`${error.message}\n${String(error.stack)}\n${String(error.cause)}`, "the rejection")
    } finally {
      await client.close()
    }
  }, 120_000)

  it.effect(
    "the spans of a client about the first row met",
    () => {
      const exporter = new InMemorySpanExporter()
      return Effect.gen(function* () {
        const context = yield* Layer.build(
          TaskClient.layer({
            servers: [{ name: "fake", url: "http://127.0.0.1:9/mcp" }],
            background: false,
            push: false,
          }).pipe(Layer.provide(Layer.mergeAll(storeLayer(), HttpWire.layer(), Polling.layer()))),
        )
        const client = Context.get(context, TaskClient.TaskClient)
        expect(yield* listEverything(client)).toBe(rows + 1)
        // A follow-up call keyed by the first row's task id, whose insert fails quoting the key:
        // the store write's span has the key as an attribute, and ends with the error.
        const failed = yield* Effect.flip(
          client.callTool("fake", "slow", {}, { key: `follow-up-of-${oldest}` }),
        )
        expect(failed._tag).toBe("StoreError")
        const spans = exporter.getFinishedSpans().map((span) =>
          JSON.stringify({
            name: span.name,
            attributes: span.attributes,
            events: span.events,
            status: span.status,
          }),
        )
        expect(spans.join("\n")).toContain("duplicate key value violates unique constraint")
        expectNoIds(spans.join("\n"), "the spans")
      }).pipe(Effect.scoped, Effect.provide(otel(exporter)))
    },
    120_000,
  )

  it.effect("a logger wrapped as the client wraps its own, about the first id its store handed it", () =>
    Effect.gen(function* () {
      const known = Redaction.make()
      const store = Redaction.watchStore(yield* HandleStore.HandleStore, known)
      let cursor: string | undefined
      for (;;) {
        const page = yield* store.list({
          scope: "default",
          limit: 1000,
          ...(cursor === undefined ? {} : { cursor }),
        })
        if (page.nextCursor === null) break
        cursor = page.nextCursor
      }
      const lines: Array<string> = []
      const inner = Logger.make((options) => {
        lines.push(Logger.logfmtLogger.log(options))
        lines.push(JSON.stringify(Logger.structuredLogger.log(options)))
      })
      yield* Effect.logWarning(`no answer about task ${oldest}`, new Error(`task ${oldest}`)).pipe(
        Effect.annotateLogs({ key: oldestKey }),
        Effect.provide(Logger.replace(Logger.defaultLogger, Redaction.logger(inner, known))),
      )
      expect(lines.join("\n")).toContain(`no answer about task ${Redaction.taskId(oldest)}`)
      expectNoIds(lines.join("\n"), "the log lines")
    }).pipe(Effect.scoped, Effect.provide(SqliteStore.layer({ filename: file }))),
  )
})
