/**
 * Encryption at rest, end to end (issue 32, item 2): calls against the fake server through the
 * client with a key, then the SQLite file and the Postgres table read with plain SQL hold no
 * task id, argument, result or answer in clear; the client still reads everything back; a
 * process without the key gets MissingKey naming the key id.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { EncryptedStore, Encryption, openTaskClient } from "@mcp-handles/core"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { PgStore } from "@mcp-handles/store-postgres"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { afterAll, describe, expect, it } from "vitest"
import { pgDump, sqliteDump } from "./dump.js"
import { workspace } from "./support.js"

const server = FakeServer.unsafeMake({
  tools: [
    {
      name: "slow",
      shape: "task",
      durationMs: 300,
      pollIntervalMs: 100,
      outcome: { kind: "result", text: "result-secret {{args.word}}" },
    },
    {
      name: "ask",
      shape: "task",
      durationMs: 300,
      pollIntervalMs: 100,
      inputSteps: [
        { atMs: 50, requests: { name: { method: "elicitation/create", params: { message: "Name?" } } } },
      ],
      outcome: { kind: "result", text: "hi {{inputs.name.content.name}}" },
    },
  ],
})

const keys = (current: string, fill: number): Encryption.Keys => ({
  current,
  keys: new Map([[current, new Uint8Array(32).fill(fill)]]),
})

const open = (store: Layer.Layer<HandleStore.HandleStore, unknown>, key: Encryption.Keys | undefined) =>
  openTaskClient({
    store,
    ...(key === undefined ? {} : { encryption: Encryption.layerKeys(key) }),
    servers: [{ name: "fake", url: "http://fake.test/mcp" }],
    http: { fetch: (input, init) => server.handler(new Request(input, init)) },
    polling: { minIntervalMs: 50 },
    onInputRequired: async () => ({ action: "accept", content: { name: "answer-secret-7q" } }),
  })

/** Calls both tools with the key; returns what must never be in clear at rest. */
const callWithKey = async (store: Layer.Layer<HandleStore.HandleStore, unknown>) => {
  const client = await open(store, keys("k1", 1))
  try {
    const slow = await client.callTool("fake", "slow", { word: "argument-secret-3x" }, { key: "s1" })
    const done = await slow.outcome()
    expect(done._tag === "Completed" && done.result.content).toEqual([
      { type: "text", text: "result-secret argument-secret-3x" },
    ])
    const ask = await client.callTool("fake", "ask", {}, { key: "a1" })
    const answered = await ask.outcome()
    expect(answered._tag === "Completed" && answered.result.content).toEqual([
      { type: "text", text: "hi answer-secret-7q" },
    ])
    const ids = [(await client.get("s1"))?.taskId, (await client.get("a1"))?.taskId]
    expect(ids.every((id) => typeof id === "string" && id.length > 8)).toBe(true)
    return ids as Array<string>
  } finally {
    await client.close()
  }
}

const secrets = ["argument-secret-3x", "result-secret", "answer-secret-7q"]

/** The client with the key reads everything back; one with another key gets MissingKey for k1. */
const readBack = async (store: Layer.Layer<HandleStore.HandleStore, unknown>, ids: Array<string>) => {
  const client = await open(store, keys("k1", 1))
  try {
    const s1 = await client.get("s1")
    expect(s1?.taskId).toBe(ids[0])
    expect(s1?.arguments).toEqual({ word: "argument-secret-3x" })
    expect(s1?.result?.content).toEqual([{ type: "text", text: "result-secret argument-secret-3x" }])
    const a1 = await client.get("a1")
    expect(a1?.taskId).toBe(ids[1])
    expect(Object.values(a1?.answers ?? {}).map((answer) => answer.response)).toEqual([
      { action: "accept", content: { name: "answer-secret-7q" } },
    ])
    expect((await client.list({})).records.map((record) => record.key).sort()).toEqual(["a1", "s1"])
  } finally {
    await client.close()
  }
  const stranger = await open(store, keys("k2", 2))
  try {
    const error = await stranger.get("s1").then(
      () => undefined,
      (error: unknown) => error as { readonly message: string; readonly cause?: unknown },
    )
    expect(error?.message).toContain('key "k1"')
    expect(error?.cause).toBeInstanceOf(Encryption.MissingKey)
    expect(error?.cause).toMatchObject({ keyId: "k1" })
  } finally {
    await stranger.close()
  }
}

const expectNothingInClear = (dump: string, ids: Array<string>) => {
  expect(dump.length).toBeGreaterThan(100)
  for (const secret of [...ids, ...secrets]) expect(dump).not.toContain(secret)
  // The rows are there, sealed.
  expect(dump).toContain("mhi1.k1.")
  expect(dump).toContain("mhe2.k1.")
}

describe("encryption at rest", () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-handles-crypt-"))
  const schema = `mh_crypt_${process.pid}_${Date.now()}`
  let pgUrl: string | undefined
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true })
    if (pgUrl !== undefined) {
      await Effect.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`),
        ).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(pgUrl) }))),
      )
    }
  })

  it("SQLite: the file read with plain SQL holds nothing in clear; the client reads it all back", async () => {
    const filename = join(dir, "tasks.db")
    const store = SqliteStore.layer({ filename })
    const ids = await callWithKey(store)
    const dump = await sqliteDump(filename)
    expectNothingInClear(dump, ids)
    await readBack(store, ids)
  }, 60_000)

  it("Postgres: the table read with plain SQL holds nothing in clear; the client reads it all back", async () => {
    pgUrl = await Effect.runPromise(TestDatabase.databaseUrl)
    const url = pgUrl
    const store = PgStore.layerUrl(url, { schema })
    const ids = await callWithKey(store)
    expectNothingInClear(await pgDump(url, schema), ids)
    await readBack(store, ids)
  }, 60_000)

  it("the CLI: without the key fields show as encrypted and --reveal refuses; with it they read; rekey rotates", async () => {
    const filename = join(dir, "cli.db")
    const ids = await callWithKey(SqliteStore.layer({ filename }))
    const ws = workspace()
    try {
      const b64 = (fill: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)))
      ws.env.MH_KEY_1 = `k1:${b64(1)}`
      ws.env.MH_KEY_21 = `k2:${b64(2)},k1:${b64(1)}`
      ws.env.MH_KEY_2 = `k2:${b64(2)}`
      const store = `sqlite:${filename}`

      const blind = await ws.run("list", "--store", store, "--json")
      expect(blind.code).toBe(0)
      for (const secret of [...ids, ...secrets]) expect(blind.stdout).not.toContain(secret)
      const rows = JSON.parse(blind.stdout) as Array<{ readonly key: string }>
      expect(rows.find((row) => row.key === "s1")).toMatchObject({
        taskId: "encrypted",
        arguments: "encrypted",
        argumentsHash: "encrypted",
        result: "encrypted",
      })

      const refused = await ws.run("show", "s1", "--store", store, "--reveal")
      expect(refused.code).not.toBe(0)
      expect(refused.stderr).toContain("--reveal: this store is encrypted")
      expect(refused.stdout + refused.stderr).not.toContain(ids[0])

      const cancel = await ws.run("cancel", "s1", "--store", store)
      expect(cancel.code).not.toBe(0)
      expect(cancel.stderr).toContain("this command: this store is encrypted")

      const read = await ws.run("show", "s1", "--store", store, "--json", "--reveal", "--key-env", "MH_KEY_1")
      expect(read.code).toBe(0)
      expect(read.stdout).toContain(ids[0])
      expect(read.stdout).toContain("argument-secret-3x")
      // The key itself is never printed.
      expect(read.stdout + read.stderr).not.toContain(b64(1))

      const rekeyed = await ws.run(
        "rekey",
        "--store",
        store,
        "--key-env",
        "MH_KEY_21",
        "--batch",
        "1",
        "--json",
      )
      expect(rekeyed.code).toBe(0)
      const last = JSON.parse(rekeyed.stdout.trim().split("\n").at(-1) ?? "{}")
      expect(last).toMatchObject({
        keyId: "k2",
        examined: 2,
        rekeyed: 2,
        skipped: 0,
        cursor: null,
        done: true,
      })
      const dump = await sqliteDump(filename)
      expect(dump).toContain("mhi1.k2.")
      expect(dump).not.toContain(".k1.")
      const after = await ws.run("list", "--store", store, "--json", "--reveal", "--key-env", "MH_KEY_2")
      expect(after.code).toBe(0)
      expect(after.stdout).toContain(ids[1])
      const noKey = await ws.run("rekey", "--store", store)
      expect(noKey.stderr).toContain("--key-env NAME or --key-file PATH")
    } finally {
      ws.dispose()
    }
  }, 120_000)

  it("encryption turned on later: --reveal and the commands that write refuse on any sealed row, not only the first", async () => {
    const filename = join(dir, "mixed.db")
    // The oldest row is clear (written before encryption was on); the later ones are sealed.
    const before = await open(SqliteStore.layer({ filename }), undefined)
    try {
      await (await before.callTool("fake", "slow", { word: "clear-before" }, { key: "s0" })).outcome()
    } finally {
      await before.close()
    }
    const ids = await callWithKey(SqliteStore.layer({ filename }))
    const ws = workspace()
    try {
      const store = `sqlite:${filename}`
      for (const args of [
        ["show", "s1", "--reveal"],
        ["list", "--reveal"],
        ["list", "--json", "--reveal"],
      ]) {
        const refused = await ws.run(...args, "--store", store)
        expect(refused.code, args.join(" ")).toBe(2)
        expect(refused.stderr).toContain("--reveal: this store is encrypted")
        for (const id of ids) expect(refused.stdout + refused.stderr).not.toContain(id)
      }
      const cancel = await ws.run("cancel", "a1", "--store", store)
      expect(cancel.code).toBe(2)
      expect(cancel.stderr).toContain("this command: this store is encrypted")
      // The clear row alone is still revealed.
      const clear = await ws.run("show", "s0", "--store", store, "--reveal", "--json")
      expect(clear.code, clear.stderr).toBe(0)
      expect(clear.stdout).toContain("clear-before")
    } finally {
      ws.dispose()
    }
  }, 120_000)

  it("off by default: the same calls without a key are stored as they are", async () => {
    const filename = join(dir, "plain.db")
    const client = await open(SqliteStore.layer({ filename }), undefined)
    try {
      await (await client.callTool("fake", "slow", { word: "argument-secret-3x" }, { key: "s1" })).outcome()
    } finally {
      await client.close()
    }
    const dump = await sqliteDump(filename)
    expect(dump).toContain("argument-secret-3x")
    expect(dump).not.toMatch(/mhe\d\./)
    expect(EncryptedStore.sealedField).toBe("mcp-handles/sealed")
  }, 60_000)
})
