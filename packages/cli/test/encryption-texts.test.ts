/**
 * Encryption at rest covers the free texts of a row too: a server whose status messages, errors
 * and error bodies quote the task id leaves no copy of the id in the SQLite file (every byte of
 * it, the WAL included) or the Postgres table, while the client with the key reads every text
 * back as the server sent it, and the CLI shows them with the id shortened (with the key) or as
 * a placeholder (without it).
 */
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Encryption, openTaskClient, Redaction } from "@mcp-handles/core"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { PgStore } from "@mcp-handles/store-postgres"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { afterAll, describe, expect, it } from "vitest"
import { pgDump } from "./dump.js"
import { workspace } from "./support.js"

const server = FakeServer.unsafeMake({
  tools: [
    {
      name: "quoting",
      shape: "task",
      durationMs: 400,
      pollIntervalMs: 100,
      workingMessage: "working on {{taskId}}",
      outcome: {
        kind: "error",
        code: -32001,
        message: "task {{taskId}} failed",
        data: { task: "{{taskId}}", detail: "see {{taskId}} ⟪in brackets⟫" },
      },
    },
    {
      name: "iserror",
      shape: "task",
      durationMs: 200,
      pollIntervalMs: 100,
      outcome: { kind: "result", text: "no luck for {{taskId}}", isError: true },
    },
    { name: "forever", shape: "task", durationMs: 600_000, pollIntervalMs: 100 },
  ],
})

/** Every `tasks/get` of a task of `forever` is answered with an error quoting its id. */
const fetchWithTroubledPolls = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const request = new Request(input, init)
  const body = (await request
    .clone()
    .json()
    .catch(() => undefined)) as
    | { readonly id?: unknown; readonly method?: string; readonly params?: { readonly taskId?: string } }
    | undefined
  const taskId = body?.params?.taskId
  if (body?.method === "tasks/get" && taskId !== undefined && troubled.has(taskId)) {
    return Response.json({
      jsonrpc: "2.0",
      id: body.id,
      error: { code: -32603, message: `the backend lost track of task ${taskId}` },
    })
  }
  return server.handler(request)
}
const troubled = new Set<string>()

const keys: Encryption.Keys = { current: "k1", keys: new Map([["k1", new Uint8Array(32).fill(1)]]) }

const open = (store: Layer.Layer<HandleStore.HandleStore, unknown>) =>
  openTaskClient({
    store,
    encryption: Encryption.layerKeys(keys),
    servers: [{ name: "fake", url: "http://fake.test/mcp" }],
    http: { fetch: fetchWithTroubledPolls },
    polling: { minIntervalMs: 50 },
    // Polled, so that every answer (the troubled ones too) goes through `tasks/get`.
    push: false,
  })

const until = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 200; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** Runs the three calls; returns their task ids. The `forever` call is left open with its problem. */
const callQuoting = async (store: Layer.Layer<HandleStore.HandleStore, unknown>) => {
  const client = await open(store)
  try {
    const quoting = await client.callTool("fake", "quoting", {}, { key: "q1" })
    const failed = await quoting.outcome()
    expect(failed._tag).toBe("Failed")
    const iserror = await client.callTool("fake", "iserror", {}, { key: "e1" })
    expect((await iserror.outcome())._tag).toBe("Completed")
    const forever = await client.callTool("fake", "forever", {}, { key: "p1" })
    await forever.launched
    const p1 = await client.get("p1")
    troubled.add(p1?.taskId as string)
    await until(async () => ((await client.get("p1"))?.lastProblem ?? null) !== null, "p1's problem")
    const ids = await Promise.all(["q1", "e1", "p1"].map(async (key) => (await client.get(key))?.taskId))
    expect(ids.every((id) => typeof id === "string" && id.length > 8)).toBe(true)
    return ids as Array<string>
  } finally {
    await client.close()
  }
}

/** The client with the key reads each text back exactly as the server sent it. */
const readBack = async (store: Layer.Layer<HandleStore.HandleStore, unknown>, ids: Array<string>) => {
  const client = await open(store)
  try {
    const [q1, p1] = [ids[0] as string, ids[2] as string]
    const failed = await client.get("q1")
    expect(failed?.error?.message).toBe(`task ${q1} failed`)
    expect(failed?.error?.data).toEqual({ task: q1, detail: `see ${q1} ⟪in brackets⟫` })
    expect(failed?.snapshot?.statusMessage).toBe(`Tool execution failed: task ${q1} failed`)
    const problem = await client.get("p1")
    expect(problem?.lastProblem).toContain(`the backend lost track of task ${p1}`)
  } finally {
    await client.close()
  }
}

const expectNoId = (bytes: string, ids: Array<string>) => {
  expect(bytes.length).toBeGreaterThan(100)
  for (const id of ids) expect(bytes).not.toContain(id)
}

describe("encryption at rest: status messages, errors and problems", () => {
  const dir = fs.mkdtempSync(join(tmpdir(), "mcp-handles-crypt-texts-"))
  const schema = `mh_crypt_texts_${process.pid}_${Date.now()}`
  let pgUrl: string | undefined
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true })
    if (pgUrl !== undefined) {
      await Effect.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`),
        ).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(pgUrl) }))),
      )
    }
  })

  it("SQLite: no byte of the database's files holds a task id; the texts read back; the CLI redacts", async () => {
    const filename = join(dir, "tasks.db")
    const store = SqliteStore.layer({ filename })
    const ids = await callQuoting(store)
    // Every byte of the database's files, the WAL and any page an update freed included.
    const bytes = fs
      .readdirSync(dir)
      .filter((name) => name.startsWith("tasks.db"))
      .map((name) => fs.readFileSync(join(dir, name)).toString("latin1"))
      .join("\n")
    expectNoId(bytes, ids)
    await readBack(store, ids)

    const ws = workspace()
    try {
      ws.env.MH_KEY = `k1:${btoa(String.fromCharCode(...new Uint8Array(32).fill(1)))}`
      const storeSpec = `sqlite:${filename}`
      const q1 = ids[0] as string
      for (const format of [[], ["--json"]]) {
        const withKey = await ws.run("show", "q1", "--store", storeSpec, "--key-env", "MH_KEY", ...format)
        expect(withKey.code, withKey.stderr).toBe(0)
        expect(withKey.stdout).not.toContain(q1)
        expect(withKey.stdout).toContain(`task ${Redaction.taskId(q1)} failed`)
        const blind = await ws.run("show", "q1", "--store", storeSpec, ...format)
        expect(blind.code, blind.stderr).toBe(0)
        expect(blind.stdout).not.toContain(q1)
        expect(blind.stdout).toContain("task ⟪task id⟫ failed")
      }
      const list = await ws.run("list", "--store", storeSpec, "--key-env", "MH_KEY", "--json")
      expect(list.code, list.stderr).toBe(0)
      for (const id of ids) expect(list.stdout).not.toContain(id)
    } finally {
      ws.dispose()
    }
  }, 120_000)

  it("Postgres: the table read with plain SQL holds no task id; the texts read back", async () => {
    pgUrl = await Effect.runPromise(TestDatabase.databaseUrl)
    const store = PgStore.layerUrl(pgUrl, { schema })
    const ids = await callQuoting(store)
    expectNoId(await pgDump(pgUrl, schema), ids)
    await readBack(store, ids)
  }, 60_000)
})
