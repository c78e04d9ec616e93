/**
 * A completed call's output (kept in the app's messages) holds no task id whole, wherever the
 * server put a related-task reference, and keeps everything else as the server sent it.
 */
import { Redaction } from "@mcp-handles/core"
import type * as Outcome from "@mcp-handles/core/Outcome"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { completedWithReference } from "../../../scripts/testing/related-task.mjs"
import { fromOutcome } from "../src/ToolOutput.js"

describe("ToolOutput", () => {
  it("shortens every related-task reference of a completed result, and keeps the rest", () => {
    fc.assert(
      fc.property(
        completedWithReference(Redaction.relatedTaskMeta),
        ({ taskId, text, outcome: completed }) => {
          const outcome = completed as Outcome.Outcome
          const seen = JSON.stringify(fromOutcome(outcome))
          expect(seen).toContain(JSON.stringify(Redaction.taskId(taskId)))
          expect(seen.includes(JSON.stringify(taskId))).toBe(false)
          expect(seen).toContain(JSON.stringify(text))
        },
      ),
    )
  })
})
