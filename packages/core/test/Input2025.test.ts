/**
 * Input on a 2025-11-25 server, exactly once across a crash: the fake server in its 2025-11-25
 * mode asks one question on the task's `tasks/result` stream, and asks it once (`questionsOnce`,
 * as SDK 1.x's task message queue drops what it delivered); the first process dies at one point
 * of the question's life, a second one (same instance id) takes over. Across both, the handler
 * is asked once, the server gets one answer, and the task completes.
 *
 * Finding (a): the wire, having heard a question, first told the server to stop the listening
 * `tasks/result` (`notifications/cancelled`) and answered its other requests, and only then
 * returned the question for the engine to write: a crash at one of those sends lost the
 * question, and the task waited for input forever. A crash while the question's bytes are still
 * in flight (the server sent them, we have not read them) cannot be covered by any client of a
 * server that asks once: that window is the stream read itself.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import type * as TaskClient from "@mcp-handles/core/TaskClient"
import * as Effect from "effect/Effect"
import { elapse, type Harness, makeHarness, runFor, slowTool, startProcess } from "./support/harness.js"

const asking = slowTool({
  durationMs: 3_000,
  inputSteps: [
    { atMs: 1_000, requests: { name: { method: "elicitation/create", params: { message: "Name?" } } } },
  ],
  outcome: { kind: "result", text: "Hello {{inputs.name.content.name|nobody}}" },
})

/**
 * Where the first process dies: just before it sends one of its messages, or right after the
 * server answered one (2025-11-25 requests carry no `Mcp-Method`, so the harness's fetch crash
 * points cannot name them), or right after one of its store writes is durable.
 */
type Death =
  | { readonly beforeServer: (message: Record<string, unknown>) => boolean }
  | { readonly afterServer: (message: Record<string, unknown>) => boolean }
  | { readonly afterWrite: (record: Parameters<HandleStore.HandleStore["update"]>[0]) => boolean }

const acrossACrash = (death: Death) =>
  Effect.gen(function* () {
    const base = yield* makeHarness({ generation: "2025-11-25", questionsOnce: true, tools: [asking] })
    let crashFirst = () => {}
    // A store whose writes can kill the first process right after one of them is durable.
    const store: HandleStore.HandleStore =
      "afterWrite" in death
        ? {
            ...base.store,
            update: (record, options) =>
              Effect.tap(base.store.update(record, options), (written) =>
                Effect.sync(() => {
                  if (death.afterWrite(written)) crashFirst()
                }),
              ),
          }
        : base.store
    const h: Harness = {
      store,
      server: {
        ...base.server,
        handler: async (request) => {
          const message: unknown = await request
            .clone()
            .json()
            .catch(() => undefined)
          const sent =
            typeof message === "object" && message !== null ? (message as Record<string, unknown>) : {}
          if ("beforeServer" in death && death.beforeServer(sent)) {
            crashFirst()
            // The dead process's request never reaches the server.
            return new Promise<Response>(() => {})
          }
          const response = await base.server.handler(request)
          if ("afterServer" in death && death.afterServer(sent)) crashFirst()
          return response
        },
      },
    }
    const asked: Array<string> = []
    const handler =
      (process: string): TaskClient.InputHandler =>
      (request) =>
        Effect.sync(() => {
          asked.push(`${process}:${request.inputKey}`)
          return { action: "accept", content: { name: process } }
        })
    const first = yield* startProcess(h, {
      instanceId: "a",
      background: false,
      onInputRequired: handler("first"),
    })
    crashFirst = () => {
      crashFirst = () => {}
      first.crash()
    }
    yield* runFor(first.client.callTool("fake", "slow", {}, { key: "k" }), 1_000)
    // The first process drives the row until it dies.
    yield* Effect.fork(first.client.settle("k"))
    yield* elapse(6_000)
    expect(first.crashed(), "the first process died where the test put it").toBe(true)
    const second = yield* startProcess(h, {
      instanceId: "a",
      background: { tickMs: 100 },
      onInputRequired: handler("second"),
    })
    // A budget, not a bound: the wire listens on `tasks/result` for a window of real time (see
    // wire2025.ts), which the virtual clock does not shorten.
    const outcome = yield* runFor(second.client.settle("k"), 600_000, 200)
    const [task] = base.server.ledger.tasks
    return { outcome, asked, answered: task?.updates.flatMap((update) => update.keys) ?? [] }
  })

const expectOnce = (result: Effect.Effect.Success<ReturnType<typeof acrossACrash>>) => {
  expect(result.asked, "the handler was asked once across both processes").toHaveLength(1)
  expect(result.answered, "input keys the server got answers for").toEqual(["name"])
  expect(result.outcome._tag).toBe("Completed")
}

describe("2025-11-25 input exactly once across a crash", () => {
  it.effect("(a) the question arrived on the stream, the process dies before it is written", () =>
    Effect.gen(function* () {
      // The last moment after the stream was read: the wire's next send, stopping the listening request.
      const result = yield* acrossACrash({
        beforeServer: (message) => message.method === "notifications/cancelled",
      })
      expectOnce(result)
    }),
  )

  it.effect("(b) the question is written, the process dies before the handler is asked", () =>
    Effect.gen(function* () {
      const result = yield* acrossACrash({
        afterWrite: (record) =>
          record.status === "input_required" && Object.keys(record.answers).length === 0,
      })
      expectOnce(result)
    }),
  )

  it.effect("(b') the answer is written, the process dies before it is sent", () =>
    Effect.gen(function* () {
      const result = yield* acrossACrash({
        afterWrite: (record) => Object.values(record.answers).some((answer) => !answer.acknowledged),
      })
      expectOnce(result)
    }),
  )

  it.effect("(c) the answer was sent, the process dies before its acknowledgement is written", () =>
    Effect.gen(function* () {
      const result = yield* acrossACrash({
        // The answer is the JSON-RPC response to the server's question: a message with no method.
        afterServer: (message) => message.method === undefined && "result" in message,
      })
      expectOnce(result)
    }),
  )
})
