import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as TaskReference from "@mcp-handles/core/TaskReference"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import fc from "fast-check"
import { type Harness, makeHarness, runFor, serverUrl, startProcess } from "./support/harness.js"

const tools: Config.Config["tools"] = [
  {
    name: "slow",
    durationMs: 2_000,
    pollIntervalMs: 500,
    outcome: { kind: "result", text: "slow {{args.n}}" },
  },
  { name: "echo", shape: "direct", outcome: { kind: "result", text: "echo" } },
]

const endpoint = { name: "fake", url: serverUrl }

/** What the app did elsewhere (ext-tasks, another client): a task created straight on the server. */
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

const direct = (
  h: Harness,
  task: string | TaskReference.SerializedTaskReference,
  options: TaskReference.AdoptOptions = {},
) =>
  TaskReference.adopt(task, options, {
    endpoint,
    owner: "local",
    leaseMs: 30_000,
    defaultScope: "default",
  }).pipe(Effect.provideService(HandleStore.HandleStore, h.store))

const rows = (h: Harness) =>
  Effect.map(h.store.list({ scope: "default", limit: 1000 }), (page) => page.records)

describe("adopting a task the app already holds", () => {
  it.effect("a task id becomes a durable row that is polled to its outcome, launched by nobody here", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { background: false })
      const taskId = yield* createTask(h, "slow", { n: 1 })
      const handle = yield* p.client.adopt("fake", taskId, { tool: "slow" })
      // Keyed by a hash of the task id, never the id (task ids may be bearer credentials).
      expect(handle).toMatchObject({
        key: yield* TaskReference.adoptedKey(taskId),
        scope: "default",
        launched: false,
      })
      expect(handle.key).not.toContain(taskId)
      expect(handle.record).toMatchObject({
        taskId,
        status: "working",
        tool: "slow",
        arguments: null,
        launches: 0,
        leaseOwner: null,
      })
      expect(handle.record.history.at(-1)).toMatchObject({
        from: "pending",
        to: "working",
        cause: "Adopted",
        instance: "local",
      })
      const outcome = yield* runFor(handle.outcome, 10_000)
      expect(outcome._tag === "Completed" && outcome.result.content).toEqual([
        { type: "text", text: "slow 1" },
      ])
      // One launch in all (the app's own); this client only polled it.
      expect(h.server.ledger.launches).toHaveLength(1)
      expect(h.server.ledger.tasks.find((task) => task.taskId === taskId)?.polls.length).toBeGreaterThan(0)
    }),
  )

  it.effect("an ext-tasks reference is adopted under the app's key and exported back", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { background: false })
      const references = p.client
      const taskId = yield* createTask(h, "slow", { n: 2 })
      const reference = {
        endpointId: "my-session",
        generation: "v2",
        taskId,
        originalOperation: "tools/call",
      } as const
      const handle = yield* references.adopt("fake", reference, { key: "job-2" })
      expect(handle.record).toMatchObject({ key: "job-2", taskId, tool: "(adopted)" })
      expect(yield* references.reference("job-2", { endpointId: "my-session" })).toEqual(reference)
      // By default the endpoint id is the configured server's name.
      expect(yield* references.reference("job-2")).toEqual({ ...reference, endpointId: "fake" })
      const outcome = yield* runFor(handle.outcome, 10_000)
      expect(outcome._tag).toBe("Completed")
    }),
  )

  it.effect("adopting is idempotent by key, and finishes an adoption a crash cut short", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const taskId = yield* createTask(h, "slow", { n: 3 })
      const first = yield* direct(h, taskId)
      expect(first.adopted).toBe(true)
      const again = yield* direct(h, {
        endpointId: "x",
        generation: "v2",
        taskId,
        originalOperation: "tools/call",
      })
      expect(again).toEqual({ record: first.record, adopted: false })

      // Crashed between the insert and the update: the row is pending (or in doubt, once a
      // reconciler found it), holds no task id, and carries the adoption's marker.
      const other = yield* createTask(h, "slow", { n: 4 })
      const now = yield* h.store.now
      const { record: cut } = yield* h.store.insertOrGet({
        scope: "default",
        key: "cut",
        serverId: first.record.serverId,
        tool: "(adopted)",
        arguments: null,
        argumentsHash: `adopted:${other}`,
        owner: "dead",
        leaseMs: 30_000,
        now,
      })
      yield* h.store.update(new HandleRecord.HandleRecord({ ...cut, status: "in_doubt" }))
      const finished = yield* direct(h, other, { key: "cut" })
      expect(finished.adopted).toBe(true)
      expect(finished.record).toMatchObject({ key: "cut", taskId: other, status: "working", launches: 0 })
    }),
  )

  it.effect("refuses what it cannot adopt, writing nothing", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { background: false })
      const references = p.client
      const bad = [
        { endpointId: "e", generation: "v3", taskId: "t", originalOperation: "tools/call" },
        { endpointId: "e", generation: "v2", taskId: "t", originalOperation: "prompts/get" },
        { endpointId: "e", generation: "v2", taskId: "", originalOperation: "tools/call" },
        { generation: "v2", taskId: "t", originalOperation: "tools/call" },
      ]
      for (const reference of bad) {
        const refused = yield* Effect.flip(references.adopt("fake", reference as never))
        expect(refused._tag, JSON.stringify(reference)).toBe("InvalidReference")
      }
      expect((yield* Effect.flip(references.adopt("fake", "")))._tag).toBe("InvalidReference")
      expect((yield* Effect.flip(references.adopt("elsewhere", "t")))._tag).toBe("UnknownServer")
      expect(yield* rows(h)).toEqual([])
    }),
  )

  it.effect("a key that names another call, or a task another row holds, is a conflict", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { background: false })
      const references = p.client
      yield* runFor(p.client.callTool("fake", "echo", {}, { key: "mine" }), 1_000)
      const taskId = yield* createTask(h, "slow", { n: 5 })
      const taken = yield* Effect.flip(references.adopt("fake", taskId, { key: "mine" }))
      expect(taken).toMatchObject({ _tag: "AdoptionConflict", key: "mine" })

      yield* references.adopt("fake", taskId, { key: "first" })
      const twice = yield* Effect.flip(references.adopt("fake", taskId, { key: "second" }))
      expect(twice).toMatchObject({ _tag: "AdoptionConflict", key: "second" })
      expect(twice.message).toContain("already held by another call")
      // The second key ends failed, not pending: no reconciler will find an in-flight call there.
      const second = yield* p.client.get("second")
      expect(second).toMatchObject({ status: "failed", taskId: null })
      expect(second.history.at(-1)).toMatchObject({
        from: "pending",
        to: "failed",
        cause: "AdoptionConflict",
      })
      // And a call with an adopted key is refused as a reused key.
      const reused = yield* Effect.flip(p.client.callTool("fake", "slow", {}, { key: "first" }))
      expect(reused._tag).toBe("KeyReused")
    }),
  )

  it.effect("a row written by someone else between insert and adoption is read again and adopted", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const taskId = yield* createTask(h, "slow", { n: 7 })
      // What this instance's own sweep does to a fresh pending row of its owner: records it in
      // doubt (a new version) just after the insert, once.
      let interfered = false
      const store: HandleStore.HandleStore = {
        ...h.store,
        insertOrGet: (handle) =>
          Effect.tap(h.store.insertOrGet(handle), ({ record }) => {
            if (interfered) return Effect.void
            interfered = true
            const inDoubt = new HandleRecord.HandleRecord({ ...record, status: "in_doubt" }, true)
            return Effect.orDie(h.store.update(inDoubt))
          }),
      }
      const adopted = yield* TaskReference.adopt(
        taskId,
        { key: "raced" },
        { endpoint, owner: "local", leaseMs: 30_000, defaultScope: "default" },
      ).pipe(Effect.provideService(HandleStore.HandleStore, store))
      expect(interfered).toBe(true)
      expect(adopted).toMatchObject({ adopted: true, record: { key: "raced", taskId, status: "working" } })
    }),
  )

  it.effect("a row without a task has no reference; an unknown key is UnknownKey", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { background: false })
      const references = p.client
      yield* runFor(p.client.callTool("fake", "echo", {}, { key: "direct" }), 1_000)
      expect((yield* Effect.flip(references.reference("direct")))._tag).toBe("NoTask")
      expect((yield* Effect.flip(references.reference("nobody")))._tag).toBe("UnknownKey")
    }),
  )

  it.effect("for every task id: adopt, export, adopt the export: one row, the same task", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      let run = 0
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.string({ minLength: 1, maxLength: 200 }), fc.boolean(), async (drawn, v1) => {
            // A task id names one task per server: each run's is its own (the same string drawn
            // twice would be one task adopted under two keys, which is a conflict by design).
            const taskId = `${++run}:${drawn}`
            const reference = {
              endpointId: "e",
              generation: v1 ? "v1" : "v2",
              taskId,
              originalOperation: "tools/call",
            } as const
            const first = await Effect.runPromise(direct(h, reference))
            const exported = Either.getOrThrow(TaskReference.toReference(first.record, "e"))
            expect(exported).toEqual(reference)
            const again = await Effect.runPromise(direct(h, exported))
            expect(again.adopted).toBe(false)
            expect(again.record.key).toBe(first.record.key)
          }),
          { numRuns: 100 },
        ),
      )
    }),
  )
})
