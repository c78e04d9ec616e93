/**
 * Reading never creates a store on PostgreSQL either: in a database nobody called with, `list`
 * fails naming it (no schema is set up), and `call` sets the store up.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { afterAll, describe, expect, it, vi } from "vitest"
import { fixture, oneLine, processTestTimeout } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout })

const fx = fixture({
  tools: [{ name: "quick", shape: "direct", outcome: { kind: "result", text: "quick" } }],
})

const database = `mcp_handles_cli_${process.pid}_${Date.now()}`
let server: string | undefined

/** Runs one statement as the test database's user, outside any store. */
const admin = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url) })),
    ),
  )

afterAll(async () => {
  if (server !== undefined) await admin(server, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
})

describe("a PostgreSQL store", () => {
  it("is not created by list, and is by call", async () => {
    server = await Effect.runPromise(TestDatabase.databaseUrl)
    await admin(server, `CREATE DATABASE ${database}`)
    const url = new URL(server)
    url.pathname = `/${database}`
    const store = url.toString()

    const listed = await fx.ws.run("list", "--store", store)
    expect(listed.code, listed.stderr).toBe(1)
    expect(oneLine(listed)).toMatch(
      new RegExp(
        `^mcp-handles: no store at postgres(ql)?://.*/${database} \\(schema mcp_handles\\): nothing was called with it yet`,
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
