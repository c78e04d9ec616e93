/**
 * Reading a refused `tasks/get` answer for a decided task: the scanner finds the task id of a
 * `completed` answer to our request from any prefix that holds it, and nothing else.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { completedTaskOf } from "../src/internal/wire/completed.js"

const json = fc.jsonValue({ maxDepth: 3 })
const answer = (id: number, fields: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: "2.0", id, result: fields })

describe("completedTaskOf", () => {
  it("finds the task id of a completed answer to our request, also from a prefix cut after it", () =>
    fc.assert(
      fc.property(fc.string(), json, fc.nat({ max: 200 }), (taskId, payload, cut) => {
        const text = answer(7, { taskId, status: "completed", result: { content: [payload] } })
        expect(completedTaskOf(7, text)).toBe(taskId)
        const afterStatus = text.indexOf('"result":{"content"') + cut
        expect(completedTaskOf(7, text.slice(0, afterStatus))).toBe(taskId)
      }),
    ))

  it("never reads a task as completed when it is not, or when the answer is to another request", () =>
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom("working", "input_required", "failed", "cancelled"),
        json,
        (taskId, status, payload) => {
          // A nested "status": "completed" inside the payload is not the task's.
          const nested = { content: [payload], structuredContent: { status: "completed", taskId: "x" } }
          expect(completedTaskOf(7, answer(7, { taskId, status, result: nested }))).toBeUndefined()
          expect(
            completedTaskOf(8, answer(7, { taskId, status: "completed", result: nested })),
          ).toBeUndefined()
        },
      ),
    ))

  it("gives up on text it cannot read rather than guess", () => {
    expect(completedTaskOf(1, '{"id":1,"result":{"status":"completed","taskId":"ab')).toBeUndefined()
    expect(completedTaskOf(1, "not json at all")).toBeUndefined()
  })
})
