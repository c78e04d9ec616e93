/**
 * Issue 31, items 3 and 4: outcomes an app reads with types (content blocks, tool errors, typed
 * input requests), answers checked against the request before they are stored, and no silent
 * wait for input no handler answers.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as ServerRequest from "@mcp-handles/core/ServerRequest"
import type * as TaskClient from "@mcp-handles/core/TaskClient"
import * as ToolResult from "@mcp-handles/core/ToolResult"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Logger from "effect/Logger"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { confirmForm } from "./support/forms.js"
import { makeHarness, runFor, startProcess } from "./support/harness.js"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const tools = [
  {
    name: "image",
    shape: "task" as const,
    durationMs: 500,
    pollIntervalMs: 200,
    outcome: {
      kind: "result" as const,
      content: [
        { type: "image", data: "aGk=", mimeType: "image/png" },
        { type: "a-later-type", payload: { x: 1 } },
      ],
      structuredContent: { width: 1 },
    },
  },
  {
    name: "refuses",
    shape: "direct" as const,
    outcome: { kind: "result" as const, text: "no such file", isError: true },
  },
  {
    name: "malformed",
    shape: "task" as const,
    durationMs: 200,
    pollIntervalMs: 200,
    outcome: { kind: "result" as const, content: [{ type: "text", text: 42 }] },
  },
  {
    name: "delete",
    shape: "task" as const,
    durationMs: 2_000,
    pollIntervalMs: 200,
    inputSteps: [{ atMs: 0, requests: { confirm: confirmForm } }],
    outcome: { kind: "result" as const, text: "deleted: {{inputs.confirm.content.confirm}}" },
  },
]

describe("typed outcomes", () => {
  it("an app that reads outcome.result.content[0] type-checks strictly", { timeout: 120_000 }, () => {
    // Throws (with tsc's messages) when the fixture does not compile.
    execFileSync("npx", ["tsc", "-p", "packages/core/test/fixtures/typed-app/tsconfig.json"], {
      cwd: root,
      stdio: "pipe",
    })
  })

  it.effect("content blocks decode by type; a block of an unknown type is kept whole", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h)
      const handle = yield* runFor(p.client.callTool("fake", "image", {}, { key: "i" }), 1_000)
      const outcome = yield* runFor(handle.outcome, 5_000)
      if (outcome._tag !== "Completed") throw new Error(outcome._tag)
      expect(outcome.isError).toBe(false)
      const [image, later] = outcome.result.content
      expect(image?.type === "image" && image.mimeType).toBe("image/png")
      expect(later?.type === "unknown" && later.block).toEqual({ type: "a-later-type", payload: { x: 1 } })
      expect(outcome.result.structuredContent).toEqual({ width: 1 })
      // As the server sent it, for JSON and for the store.
      expect(JSON.parse(JSON.stringify(outcome.result.content))).toEqual(tools[0]?.outcome.content)
      expect(ToolResult.encode(outcome.result).content).toEqual(tools[0]?.outcome.content)
    }),
  )

  it.effect("a tool error is a Completed outcome that says so", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h)
      const handle = yield* runFor(p.client.callTool("fake", "refuses", {}, { key: "r" }), 1_000)
      const outcome = yield* runFor(handle.outcome, 1_000)
      expect(outcome._tag === "Completed" && outcome.isError).toBe(true)
    }),
  )

  it.effect("a completed task whose result is not a CallToolResult ends failed locally, task id kept", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h)
      yield* runFor(p.client.callTool("fake", "malformed", {}, { key: "m" }), 1_000)
      const outcome = yield* runFor(p.client.settle("m"), 5_000)
      expect(outcome._tag).toBe("Failed")
      if (outcome._tag === "Failed")
        expect(outcome.error.data).toEqual({ "mcp-handles/local": "result_rejected" })
      expect((yield* p.client.get("m")).taskId).not.toBeNull()
    }),
  )

  it("rows written before results were decoded still decode", () => {
    const decode = Schema.decodeUnknownEither(HandleRecord.HandleRecord.fields.result)
    expect(decode({})).toEqual(Either.right({ content: [] }))
    expect(decode({ content: [{ type: "text", text: "ok" }], isError: false, extra: [1] })).toEqual(
      Either.right({ content: [{ type: "text", text: "ok" }], isError: false, extra: [1] }),
    )
  })
})

describe("answers are checked against the request", () => {
  const request = ServerRequest.decode(confirmForm)

  it("decodes a form request with its fields; anything else is kept as an unknown request", () => {
    expect(request.method === "elicitation/create" && request.params.mode !== "url").toBe(true)
    const other = ServerRequest.decode({ method: "x/y", params: { a: 1 } })
    expect(other.method).toBe("unknown")
    expect(JSON.stringify(other)).toBe('{"method":"x/y","params":{"a":1}}')
  })

  it("refuses a field the form does not have and a missing required field; accepts a fitting one", () => {
    expect(ServerRequest.answerProblems(request, { action: "accept", content: { confirmed: true } })).toEqual(
      [
        'the required field "confirm" is missing',
        '"confirmed" is not a field of the form (its fields: confirm)',
      ],
    )
    expect(ServerRequest.answerProblems(request, { action: "accept", content: { confirm: "yes" } })).toEqual([
      '"confirm": yes or no',
    ])
    expect(ServerRequest.answerProblems(request, { action: "maybe" })).toHaveLength(1)
    expect(ServerRequest.answerProblems(request, { action: "accept", content: { confirm: true } })).toEqual(
      [],
    )
    expect(ServerRequest.answerProblems(request, { action: "decline" })).toEqual([])
  })

  it.effect("a handler's answer that does not fit is not stored or sent; it is asked again", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      let asked = 0
      const p = yield* startProcess(h, {
        onInputRequired: () =>
          Effect.sync(() => {
            asked++
            return { action: "accept", content: { confirmed: true } }
          }),
      })
      yield* runFor(p.client.callTool("fake", "delete", {}, { key: "d" }), 1_000)
      yield* runFor(Effect.sleep("2 seconds"), 3_000)
      const row = yield* p.client.get("d")
      expect(row.status).toBe("input_required")
      expect(row.answers).toEqual({})
      expect(asked).toBeGreaterThan(1)
    }),
  )
})

describe("no silent wait for input", { timeout: 90_000 }, () => {
  const capture = () => {
    const lines: Array<string> = []
    const warnings: Array<string> = []
    const logger = Logger.make(({ message, logLevel }) => {
      const parts: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
      const line = parts.map((part) => (typeof part === "string" ? part : JSON.stringify(part))).join(" ")
      lines.push(line)
      if (logLevel._tag === "Warning") warnings.push(line)
    })
    return { lines, warnings, layer: Logger.replace(Logger.defaultLogger, logger) }
  }

  it.effect(
    "without a handler, outcome fails with InputRequired (the request typed), warns, and answer() from another process finishes the call",
    () => {
      const logs = capture()
      return Effect.gen(function* () {
        const h = yield* makeHarness({ tools })
        const p = yield* startProcess(h, { instanceId: "a" })
        const handle = yield* runFor(p.client.callTool("fake", "delete", {}, { key: "d" }), 1_000)
        const stopped = yield* runFor(Effect.flip(handle.outcome), 5_000)
        expect(stopped._tag).toBe("InputRequired")
        const open = (stopped as TaskClient.InputRequired).requests
        expect(open.map((r) => r.inputKey)).toEqual(["confirm"])
        expect(open[0]?.request.method === "elicitation/create" && open[0].request.params.message).toBe(
          "Delete 3 files?",
        )
        expect(logs.lines.some((line) => line.includes("no onInputRequired handler"))).toBe(true)

        // Another process (no handler, no background work) answers it.
        const other = yield* startProcess(h, { instanceId: "b", background: false })
        const wrong = yield* Effect.flip(
          other.client.answer("d", "confirm", { action: "accept", content: {} }),
        )
        expect(wrong._tag).toBe("InvalidAnswer")
        const notAsked = yield* Effect.flip(other.client.answer("d", "nope", { action: "decline" }))
        expect(notAsked._tag).toBe("CannotAnswer")
        yield* other.client.answer("d", "confirm", { action: "accept", content: { confirm: true } })
        const twice = yield* Effect.flip(other.client.answer("d", "confirm", { action: "decline" }))
        expect(twice._tag === "CannotAnswer" && twice.reason).toBe("already_answered")
        const outcome = yield* runFor(p.client.settle("d"), 20_000, 200)
        expect(outcome._tag === "Completed" && ToolResult.text(outcome.result)).toBe("deleted: true")
      }).pipe(Effect.provide(logs.layer))
    },
  )

  it.effect(
    "an answer's undefined keys are left out, as JSON.stringify leaves them (what `ok ? {..., content} : {...}` infers)",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHarness({ tools })
        const p = yield* startProcess(h, { instanceId: "a" })
        const handle = yield* runFor(p.client.callTool("fake", "delete", {}, { key: "d" }), 1_000)
        expect((yield* runFor(Effect.flip(handle.outcome), 5_000))._tag).toBe("InputRequired")
        const answered = yield* p.client.answer("d", "confirm", {
          action: "accept",
          content: { confirm: true, reason: undefined },
          _meta: undefined,
        })
        expect(answered.answers["confirm"]?.response).toStrictEqual({
          action: "accept",
          content: { confirm: true },
        })
        const outcome = yield* runFor(p.client.settle("d"), 20_000, 200)
        expect(outcome._tag === "Completed" && ToolResult.text(outcome.result)).toBe("deleted: true")
      }),
  )

  it.effect("waitForInput keeps waiting for an answer from elsewhere", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness({ tools })
      const p = yield* startProcess(h, { instanceId: "a" })
      yield* runFor(p.client.callTool("fake", "delete", {}, { key: "d" }), 1_000)
      const waiting = yield* Effect.fork(p.client.settle("d", undefined, { waitForInput: true }))
      yield* runFor(Effect.sleep("1 second"), 2_000)
      expect(waiting.unsafePoll()).toBeNull()
      yield* p.client.answer("d", "confirm", { action: "accept", content: { confirm: false } })
      const outcome = yield* runFor(waiting.await.pipe(Effect.flatten), 20_000, 200)
      expect(outcome._tag === "Completed" && ToolResult.text(outcome.result)).toBe("deleted: false")
    }),
  )

  it.effect(
    "a handler whose answer does not fit: outcome fails with InputRequired and the problems, one InvalidAnswer event, one warning, waitForInput keeps waiting",
    () => {
      const logs = capture()
      return Effect.gen(function* () {
        const h = yield* makeHarness({ tools })
        let asked = 0
        const p = yield* startProcess(h, {
          instanceId: "a",
          onInputRequired: () =>
            Effect.sync(() => {
              asked++
              return { action: "accept", content: { confirmed: true } }
            }),
        })
        const events = yield* Effect.fork(Stream.runCollect(p.client.events("d", { pollIntervalMs: 100 })))
        const handle = yield* runFor(p.client.callTool("fake", "delete", {}, { key: "d" }), 1_000)
        const waiting = yield* Effect.fork(p.client.settle("d", undefined, { waitForInput: true }))
        const stopped = yield* runFor(Effect.flip(handle.outcome), 5_000)
        expect(stopped._tag).toBe("InputRequired")
        const problems = [
          'the required field "confirm" is missing',
          '"confirmed" is not a field of the form (its fields: confirm)',
        ]
        expect((stopped as TaskClient.InputRequired).requests.map((r) => [r.inputKey, r.problems])).toEqual([
          ["confirm", problems],
        ])
        expect(stopped.message).toContain("does not fit the request")
        // Polls go on asking; the warning is said once, not at every poll.
        yield* runFor(Effect.sleep("3 seconds"), 4_000)
        expect(asked).toBeGreaterThan(3)
        expect(logs.warnings.filter((line) => line.includes("does not fit"))).toHaveLength(1)
        // A later wait stops at once, as long as the question stays open.
        expect((yield* runFor(Effect.flip(p.client.settle("d")), 1_000))._tag).toBe("InputRequired")
        expect(waiting.unsafePoll(), "waitForInput keeps waiting").toBeNull()

        yield* p.client.answer("d", "confirm", { action: "accept", content: { confirm: true } })
        const outcome = yield* runFor(waiting.await.pipe(Effect.flatten), 20_000, 200)
        expect(outcome._tag === "Completed" && ToolResult.text(outcome.result)).toBe("deleted: true")
        const seen = Chunk.toArray(yield* runFor(events.await.pipe(Effect.flatten), 5_000))
        expect(seen.filter((event) => event._tag === "InvalidAnswer")).toEqual([
          { _tag: "InvalidAnswer", scope: "default", key: "d", inputKey: "confirm", problems },
        ])
      }).pipe(Effect.provide(logs.layer))
    },
  )

  it.effect(
    "a handler that keeps failing (nobody here waits for the call) warns once per question, not per poll",
    () => {
      const logs = capture()
      return Effect.gen(function* () {
        const h = yield* makeHarness({ tools })
        let asked = 0
        const p = yield* startProcess(h, {
          instanceId: "a",
          // What an input router without a route does: the question stays open for a later run.
          onInputRequired: () =>
            Effect.suspend(() => {
              asked++
              return Effect.fail(new Error("nobody waits for this call here"))
            }),
        })
        yield* runFor(p.client.callTool("fake", "delete", {}, { key: "d" }), 1_000)
        yield* runFor(Effect.sleep("5 seconds"), 6_000)
        expect(asked).toBeGreaterThan(5)
        const warned = logs.warnings.filter((line) => line.includes("input handler failed"))
        expect(warned).toHaveLength(1)
        // It says what the handler said (an Error's own JSON is {}).
        expect(warned[0]).toContain("Error: nobody waits for this call here")
        expect((yield* p.client.get("d")).status).toBe("input_required")
      }).pipe(Effect.provide(logs.layer))
    },
  )
})
