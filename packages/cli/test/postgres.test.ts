/**
 * Reading never creates a store on PostgreSQL either: in a database nobody called with, `list`
 * fails naming it (no schema is set up), and `call` sets the store up.
 */
import { afterAll, describe, expect, it, vi } from "vitest"
import { type FreshDatabase, freshDatabase } from "./pg.js"
import { fixture, oneLine, processTestTimeout } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout })

const fx = fixture({
  tools: [{ name: "quick", shape: "direct", outcome: { kind: "result", text: "quick" } }],
})

let database: FreshDatabase | undefined

afterAll(async () => {
  await database?.drop()
})

describe("a PostgreSQL store", () => {
  it("is not created by list, and is by call", async () => {
    database = await freshDatabase("mcp_handles_cli")
    const store = database.url

    const listed = await fx.ws.run("list", "--store", store)
    expect(listed.code, listed.stderr).toBe(1)
    expect(oneLine(listed)).toMatch(
      new RegExp(
        `^mcp-handles: no store at postgres(ql)?://.*/${database.name} \\(schema mcp_handles\\): nothing was called with it yet`,
      ),
    )
    // Still nothing there: list did not set the schema up.
    const again = await fx.ws.run("show", "k", "--store", store)
    expect(oneLine(again)).toMatch(/^mcp-handles: no store at /)

    const called = await fx.ws.run("call", fx.server.url, "quick", "--key", "k", "--store", store)
    expect(called.code, called.stderr).toBe(0)
    const shown = await fx.ws.run("list", "--store", store)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/^k\s+completed\s+quick\s/m)
  })
})
