/**
 * B3 (issue 29 item 5): the boot spread's cost was SQLite parsing JSON bodies, once per JSON
 * function handed the body: six times a row at first, then three. Since migration 11 the interval
 * and the cancel check are columns and the statement hands the body to no function at all.
 * Counted in the statement's bytecode: reads of `body` from `handles` that go into a function.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import { spreadStatement } from "../src/internal/writes.js"
import { withStore } from "./stores.js"

let dir = ""
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-spread-"))
})
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

interface Op {
  readonly opcode: string
  readonly p1: number
  readonly p2: number
}

describe("spreadDue's statement", () => {
  it.effect("parses no row's JSON body", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "spread.db")
      yield* withStore(filename, () => Effect.void)
      const db = new Database(filename, { readonly: true })
      try {
        const columns = db.pragma("table_info(handles)") as Array<{
          readonly name: string
          readonly cid: number
        }>
        const body = columns.find((column) => column.name === "body")?.cid
        const { rootpage } = db
          .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'handles'")
          .get() as {
          readonly rootpage: number
        }
        const parses = (statement: string) => {
          // EXPLAIN runs nothing; the parameters only have to be bound.
          const params = Object.fromEntries(
            [...new Set(statement.match(/@\w+/g))].map((name) => [
              name.slice(1),
              name === "@takeOver" ? "[]" : 0,
            ]),
          )
          const program = db.prepare(`EXPLAIN ${statement}`).all(params) as Array<Op>
          // Cursors on the table itself (not on its indexes or on temporary tables).
          const onHandles = new Set(
            program.filter((op) => op.opcode.startsWith("Open") && op.p2 === rootpage).map((op) => op.p1),
          )
          // A read handed straight to a function (json_type, json_extract, ->): a parse. The
          // UPDATE's own copy of the row reads the body too, into the new record.
          const bodyParses = program.filter(
            (op, at) =>
              op.opcode === "Column" &&
              onHandles.has(op.p1) &&
              op.p2 === body &&
              program[at + 1]?.opcode === "Function",
          ).length
          expect(onHandles.size).toBeGreaterThan(0)
          return bodyParses
        }
        // The count finds a parse where there is one (the cancel check as the spread made it).
        expect(
          parses(
            "UPDATE handles SET version = version + 1 WHERE json_type(body, '$.cancel') IS NOT 'object' AND next_poll_at <= @now",
          ),
        ).toBe(1)
        expect(parses(spreadStatement)).toBe(0)
      } finally {
        db.close()
      }
    }),
  )
})
