// The adapters' redaction property: a completed call whose result carries a related-task
// reference wherever a server may put one (the result's `_meta`, a content block's, structured
// content). One generator, so every adapter's output is held to the same places.
import * as fc from "fast-check"

/** `{ taskId, text, outcome }`: a Completed outcome referring to `taskId` under `metaKey`. */
export const completedWithReference = (metaKey) =>
  fc
    .tuple(
      fc.string({ minLength: 9, maxLength: 40 }).filter((id) => !id.includes("…")),
      fc.constantFrom("result", "block", "structured"),
      fc.string(),
    )
    .map(([taskId, where, text]) => {
      const related = { [metaKey]: { taskId } }
      const result = {
        content: [{ type: "text", text, ...(where === "block" ? { _meta: related } : {}) }],
        ...(where === "result" ? { _meta: related } : {}),
        ...(where === "structured" ? { structuredContent: { ok: true, _meta: related } } : {}),
      }
      return { taskId, text, outcome: { _tag: "Completed", key: "k", result } }
    })
