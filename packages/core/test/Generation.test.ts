/**
 * The generation switch and the 2025-11-25 decoders, without a server: which wire a request goes
 * to, when `initialize` is tried, and how 2025 answers read as the port's shapes. The wire
 * against a real SDK 1.x server is tested in packages/store-sqlite/test/sdk1-tasks.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { RpcError } from "@mcp-handles/core/HandleRecord"
import * as Wire from "@mcp-handles/core/Wire"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Generation from "../src/internal/wire/generation.js"
import * as Protocol2025 from "../src/internal/wire/protocol2025.js"

const server: Wire.ServerEndpoint = { name: "s", url: "http://s.test/mcp" }
const call: Wire.CallToolRequest = { name: "slow", arguments: {}, idempotencyKey: "k" }

const task = (taskId: string) =>
  new Wire.TaskState({ taskId, status: "working", createdAt: 0, lastUpdatedAt: 0, ttlMs: null })

/** A wire that logs what it was asked and answers `callTool` with `answer`. */
const fakeWire = (
  name: string,
  log: Array<string>,
  answer: () => Effect.Effect<Wire.CallAnswer, Wire.WireError>,
  discover: () => Effect.Effect<Wire.DiscoverInfo, Wire.WireError> = () =>
    Effect.succeed({ supportsTasks: true, protocolVersions: [], serverInfo: undefined }),
): Wire.Wire =>
  Wire.Wire.of({
    discover: () =>
      Effect.zipRight(
        Effect.sync(() => log.push(`${name} discover`)),
        discover(),
      ),
    listTools: () =>
      Effect.as(
        Effect.sync(() => log.push(`${name} tools/list`)),
        [],
      ),
    callTool: () =>
      Effect.zipRight(
        Effect.sync(() => log.push(`${name} tools/call`)),
        answer(),
      ),
    getTask: (_, taskId) =>
      Effect.as(
        Effect.sync(() => log.push(`${name} tasks/get`)),
        task(taskId),
      ),
    updateTask: () => Effect.sync(() => void log.push(`${name} tasks/update`)),
    cancelTask: () => Effect.sync(() => void log.push(`${name} tasks/cancel`)),
  })

const refused = (code: number, message: string) =>
  new Wire.RpcErrorAnswer({ method: "tools/call", error: new RpcError({ code, message }) })

const handle: Wire.CallAnswer = { _tag: "Task", task: task("t1") }

/** Both generations answer every call with a task. */
const answering = () => {
  const log: Array<string> = []
  const wire = Generation.make(
    fakeWire("modern", log, () => Effect.succeed(handle)),
    fakeWire("legacy", log, () => Effect.succeed(handle)),
  )
  return { log, wire }
}

describe("the generation switch", () => {
  it.effect("a 2026-07-28 endpoint never sees initialize", () =>
    Effect.gen(function* () {
      const { log, wire } = answering()
      yield* wire.callTool(server, call)
      yield* wire.callTool(server, call)
      expect(log).toEqual(["modern tools/call", "modern tools/call"])
    }),
  )

  it.effect("an SDK 1.x refusal leads to initialize, the call again in 2025-11-25, and is remembered", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const wire = Generation.make(
        fakeWire("modern", log, () =>
          Effect.fail(refused(-32000, "Bad Request: No valid session ID provided")),
        ),
        fakeWire("legacy", log, () => Effect.succeed(handle)),
      )
      expect(yield* wire.callTool(server, call)).toEqual(handle)
      yield* wire.callTool(server, call)
      expect(log).toEqual(["modern tools/call", "legacy discover", "legacy tools/call", "legacy tools/call"])
    }),
  )

  it.effect("any other refusal stands, and so does the first answer when initialize fails too", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const wire = Generation.make(
        fakeWire("modern", log, () => Effect.fail(refused(-32602, "Unknown tool"))),
        fakeWire("legacy", log, () => Effect.succeed(handle)),
      )
      const error = yield* Effect.flip(wire.callTool(server, call))
      expect(error._tag === "RpcErrorAnswer" && error.error.code).toBe(-32602)
      expect(log).toEqual(["modern tools/call"])

      const log2: Array<string> = []
      const unsupported = refused(-32022, "unsupported protocol version")
      const wire2 = Generation.make(
        fakeWire("modern", log2, () => Effect.fail(unsupported)),
        fakeWire(
          "legacy",
          log2,
          () => Effect.succeed(handle),
          () => Effect.fail(new Wire.MalformedAnswer({ method: "initialize", reason: "no" })),
        ),
      )
      expect(yield* Effect.flip(wire2.callTool(server, call))).toBe(unsupported)
      expect(log2).toEqual(["modern tools/call", "legacy discover"])
    }),
  )

  it.effect("requests about a task go to the generation the row names, without detecting", () =>
    Effect.gen(function* () {
      const { log, wire } = answering()
      yield* wire.getTask(server, "t", { generation: "2025-11-25", session: "s1" })
      yield* wire.getTask(server, "t", undefined)
      yield* wire.cancelTask(server, "t", { generation: "2025-11-25" })
      yield* wire.cancelTask(server, "t", {})
      expect(log).toEqual([
        "legacy tasks/get",
        "modern tasks/get",
        "legacy tasks/cancel",
        "modern tasks/cancel",
      ])
    }),
  )
})

describe("2025-11-25 answers", () => {
  const created = {
    taskId: "t-2025",
    status: "working",
    createdAt: "2025-11-25T10:00:00Z",
    lastUpdatedAt: "2025-11-25T10:00:01Z",
    ttl: 60000,
    pollInterval: 500,
  }

  it("a CreateTaskResult is a task handle stamped with its generation and session", () => {
    const decoded = Protocol2025.decodeCallAnswer({ task: created }, { session: "s1" })
    expect(Either.isRight(decoded)).toBe(true)
    if (Either.isRight(decoded) && decoded.right._tag === "Task") {
      expect(decoded.right.task).toMatchObject({
        taskId: "t-2025",
        status: "working",
        ttlMs: 60000,
        pollIntervalMs: 500,
        createdAt: Date.parse("2025-11-25T10:00:00Z"),
        generation: "2025-11-25",
        session: "s1",
      })
    } else expect.fail("not a task handle")
  })

  it("a plain tool result is complete; a broken handle keeps its announced task id", () => {
    const plain = Protocol2025.decodeCallAnswer({ content: [] }, { session: undefined })
    expect(Either.isRight(plain) && plain.right._tag).toBe("Complete")
    const broken = Protocol2025.decodeCallAnswer(
      { task: { ...created, createdAt: "soon" } },
      { session: "s" },
    )
    expect(Either.isLeft(broken) && broken.left.announcedTaskId).toBe("t-2025")
  })

  it("tasks/get must describe the task asked for; an invalid pollInterval is ignored", () => {
    expect(Either.isLeft(Protocol2025.decodeGetTask(created, "other"))).toBe(true)
    const read = Protocol2025.decodeGetTask({ ...created, pollInterval: "soon" }, "t-2025")
    expect(Either.isRight(read)).toBe(true)
    if (Either.isRight(read)) {
      expect(Protocol2025.toTaskState(read.right, { session: undefined }).pollIntervalMs).toBeUndefined()
    }
  })

  it("initialize says whether tools/call may ask for a task", () => {
    const withTasks = Protocol2025.decodeInitialize({
      protocolVersion: "2025-11-25",
      capabilities: { tasks: { requests: { tools: { call: {} } } } },
    })
    expect(Either.isRight(withTasks) && withTasks.right.taskCalls).toBe(true)
    const without = Protocol2025.decodeInitialize({ protocolVersion: "2025-11-25", capabilities: {} })
    expect(Either.isRight(without) && without.right.taskCalls).toBe(false)
  })
})
