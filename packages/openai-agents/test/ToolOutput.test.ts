/**
 * What the model reads of a completed call holds no task id whole, wherever the server put a
 * related-task reference (the result's `_meta`, a content block's, structured content), and
 * keeps everything else as the server sent it.
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
          const output = fromOutcome(outcome)
          const seen = JSON.stringify(output)
          expect(seen).toContain(JSON.stringify(Redaction.taskId(taskId)))
          expect(seen.includes(JSON.stringify(taskId))).toBe(false)
          expect(output.content[0]?.text).toBe(text)
        },
      ),
    )
  })
})
