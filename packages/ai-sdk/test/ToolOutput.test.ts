/**
 * A completed call's output (kept in the app's messages) holds no task id whole, wherever the
 * server put a related-task reference, and keeps everything else as the server sent it.
 */
import { Redaction } from "@mcp-handles/core"
import type * as Outcome from "@mcp-handles/core/Outcome"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { fromOutcome } from "../src/ToolOutput.js"

const related = (taskId: string) => ({ [Redaction.relatedTaskMeta]: { taskId } })

describe("ToolOutput", () => {
  it("shortens every related-task reference of a completed result, and keeps the rest", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 9, maxLength: 40 }).filter((id) => !id.includes("…")),
        fc.constantFrom("result", "block", "structured"),
        fc.string(),
        (taskId, where, text) => {
          const result = {
            content: [{ type: "text", text, ...(where === "block" ? { _meta: related(taskId) } : {}) }],
            ...(where === "result" ? { _meta: related(taskId) } : {}),
            ...(where === "structured" ? { structuredContent: { ok: true, _meta: related(taskId) } } : {}),
          }
          const outcome = { _tag: "Completed", key: "k", result } as unknown as Outcome.Outcome
          const seen = JSON.stringify(fromOutcome(outcome))
          expect(seen).toContain(JSON.stringify(Redaction.taskId(taskId)))
          expect(seen.includes(JSON.stringify(taskId))).toBe(false)
          expect(seen).toContain(JSON.stringify(text))
        },
      ),
    )
  })
})
