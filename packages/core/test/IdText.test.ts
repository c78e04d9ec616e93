/**
 * A row's free texts with its task ids taken out read back exactly as written, and hold no id
 * once taken out, whatever the texts and ids (placeholders and brackets in them included).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as IdText from "../src/internal/idText.js"

const piece = fc.oneof(
  fc.string(),
  fc.constantFrom("⟪", "⟫", "⟪⟪", "⟪task id⟫", "⟪stray task 1⟫", "⟪stray task 9⟫", "task id"),
)

describe("IdText", () => {
  it("reveal(hide(text)) is the text; a hidden text holds no id of six characters or more", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.uuid(), fc.string({ minLength: 6, maxLength: 12 }), fc.constant("⟪weird⟫id")), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.boolean(),
        fc.array(fc.oneof(piece, fc.nat(2)), { maxLength: 8 }),
        (ids, withoutTaskId, parts) => {
          const rowIds = new IdText.RowIds(withoutTaskId ? [null, ...ids] : ids)
          const text = parts.map((part) => (typeof part === "number" ? (ids[part] ?? "") : part)).join("")
          const hidden = rowIds.hide(text)
          expect(rowIds.reveal(hidden)).toBe(text)
          // An id made of the placeholders' own characters may remain in them; a uuid never does.
          for (const id of ids) if (/^[0-9a-f-]{36}$/.test(id)) expect(hidden).not.toContain(id)
        },
      ),
      { numRuns: 2_000 },
    )
  })

  it("says where the id was, readable without the key; a short id only as the whole text", () => {
    const ids = new IdText.RowIds(["0f3c9a7e-task", "stray-1234"])
    expect(ids.hide("task 0f3c9a7e-task failed; late answer stray-1234")).toBe(
      "task ⟪task id⟫ failed; late answer ⟪stray task 1⟫",
    )
    expect(ids.hide("nothing to see")).toBe("nothing to see")
    const short = new IdText.RowIds(["42"])
    expect(short.hide("error 42 at line 42")).toBe("error 42 at line 42")
    expect(short.hide("42")).toBe("⟪task id⟫")
    expect(short.reveal("⟪task id⟫")).toBe("42")
  })

  it("mapStrings reaches every string of a JSON value, keys too, and keeps an unchanged value as it is", () => {
    const value = { a: ["x", { x: 1 }], x: "y" }
    expect(IdText.mapStrings(value, (text) => text.replaceAll("x", "z"))).toEqual({
      a: ["z", { z: 1 }],
      z: "y",
    })
    expect(IdText.mapStrings(value, (text) => text)).toBe(value)
  })
})
