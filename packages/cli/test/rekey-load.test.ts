/**
 * Key rotation under load (issue 32): an application with calls in flight on a SQLite file and
 * on PostgreSQL, `mcp-handles rekey` (the real binary) SIGKILLed mid-run at a point the test
 * chose, then run again to completion. Every call reaches its outcome exactly once, nothing is
 * left under the old key, no call is launched twice.
 *
 * The fake server runs on a clock moved by hand, so every slow call stays in flight until the
 * test moves it; the first rekey run is stopped after each line it prints (`gate-stdout.mjs`),
 * so it is killed exactly after its second batch, never at a moment chosen by a timer.
 */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import * as ServerClock from "@mcp-handles/fake-server/ServerClock"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type JsonLines, type Line, readJsonLines } from "../../../scripts/testing/json-lines.mjs"
import { killGroup, runGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import { pgDump, sqliteDump } from "./dump.js"
import { bin, processTestTimeout } from "./support.js"

const app = fileURLToPath(new URL("./fixtures/rekey-app.mjs", import.meta.url))
const gate = fileURLToPath(new URL("./fixtures/gate-stdout.mjs", import.meta.url))

const b64 = (fill: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)))
const oldKey = `k1:${b64(1)}`
const bothKeys = `k2:${b64(2)},k1:${b64(1)}`

const clock = ServerClock.manual(Date.now())
let server: FakeServer.FakeServer
let listening: NodeHttp.Listening
let dir = ""
const database = `mcp_handles_rekey_${process.pid}_${Date.now()}`
let pgServer: string | undefined

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-rekey-"))
  server = FakeServer.unsafeMake(
    {
      tools: [
        { name: "slow", shape: "task", durationMs: 60_000, pollIntervalMs: 100 },
        { name: "quick", shape: "direct", outcome: { kind: "result", text: "result-secret" } },
      ],
    },
    { clock, sleep: clock.sleep },
  )
  listening = await NodeHttp.listen(server)
})

/** Runs one statement on PostgreSQL as the test database's user, outside any store. */
const admin = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url) })),
    ),
  )

afterAll(async () => {
  await listening?.close()
  fs.rmSync(dir, { recursive: true, force: true })
  if (pgServer !== undefined) await admin(pgServer, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
})

interface Running extends JsonLines {
  readonly child: ChildProcess
  readonly send: (line: string) => void
}

const env = (key: string): NodeJS.ProcessEnv => ({ ...process.env, MH_KEY: key, MH_KEYS: key })

const startApp = (store: string, key: string): Running => {
  const child = spawnGroup(process.execPath, [app, store, listening.url, "a"], {
    cwd: dir,
    env: env(key),
    stdio: ["pipe", "pipe", "pipe"],
  })
  return { child, send: (line) => child.stdin?.write(`${line}\n`), ...readJsonLines(child, "the app") }
}

const call = async (running: Running, key: string, tool: string) => {
  running.send(`call ${key} ${tool}`)
  await running.next((line) => line.recorded === key)
}

const kill = async (running: { readonly child: ChildProcess; readonly exited: Promise<unknown> }) => {
  killGroup(running.child, "SIGKILL")
  await running.exited
}

const rekeyArgs = (store: string) => [bin, "rekey", "--store", store, "--key-env", "MH_KEYS", "--json"]

const seeded = ["s1", "s2", "s3", "s4", "s5", "s6"]
const seededQuick = ["q1", "q2", "q3", "q4"]
const during = ["b1", "b2", "b3", "b4"]

/** The whole store as plain SQL reads it. */
const rotateUnderLoad = async (store: string, dump: () => Promise<string>) => {
  const launchesBefore = server.ledger.snapshot().launches.length
  // Before the rotation: an app under the old key alone calls, and is killed with six calls in
  // flight (the slow tool only ends when the test moves the server's clock).
  const old = startApp(store, oldKey)
  await old.next((line) => line.ready === true)
  for (const key of seeded) await call(old, key, "slow")
  for (const key of seededQuick) await call(old, key, "quick")
  await kill(old)
  expect(await dump()).toContain(".k1.")

  // The app restarts with the new key first, takes the calls over and reads outcomes.
  const live = startApp(store, bothKeys)
  await live.next((line) => line.ready === true)
  live.send("feed")

  // The first rekey run, stopped after each line it prints: one call is made between its first
  // and second batch, and it is SIGKILLed on its second line, with rows still to do.
  const first = spawnGroup(process.execPath, ["--import", gate, ...rekeyArgs(store), "--batch", "3"], {
    cwd: dir,
    env: env(bothKeys),
    stdio: ["pipe", "pipe", "pipe"],
  })
  const firstRun = readJsonLines(first, "rekey")
  const batch = (n: number) => (line: Line) => line.done === false && line.examined === 3 * n
  const one = await firstRun.next(batch(1))
  expect(one).toMatchObject({ keyId: "k2", cursor: expect.any(String) })
  await call(live, "b1", "slow")
  first.stdin?.write("x")
  const two = await firstRun.next(batch(2))
  expect(two.cursor).toEqual(expect.any(String))
  await kill({ child: first, exited: firstRun.exited })
  const mid = await dump()
  expect(mid).toContain(".k1.")
  expect(mid).toContain(".k2.")

  // Calls go on, and the rekey is run again beside them until it reports every row done.
  await call(live, "b2", "slow")
  const rerun = runGroup(process.execPath, [...rekeyArgs(store), "--batch", "2"], {
    cwd: dir,
    env: env(bothKeys),
  })
  await call(live, "b3", "slow")
  await call(live, "b4", "quick")
  let last = JSON.parse((await rerun).stdout.trim().split("\n").at(-1) ?? "{}")
  for (let run = 0; run < 5 && last.skipped !== 0; run++) {
    const again = await runGroup(process.execPath, rekeyArgs(store), { cwd: dir, env: env(bothKeys) })
    expect(again.code, again.stderr).toBe(0)
    last = JSON.parse(again.stdout.trim().split("\n").at(-1) ?? "{}")
  }
  expect(last).toMatchObject({ keyId: "k2", skipped: 0, cursor: null, done: true })
  const rotated = await dump()
  expect(rotated).not.toContain(".k1.")
  for (const key of [...seeded, ...seededQuick, ...during])
    expect(rotated).not.toContain(`argument-secret-${key}`)

  // The slow calls end: every call's outcome reaches the app once, and was launched once.
  clock.advance(120_000)
  const all = [...seeded, ...seededQuick, ...during]
  for (const key of all) await live.next((line) => line.delivered === key)
  const delivered = live.lines.filter((line) => "delivered" in line)
  expect(delivered.map((line) => line.delivered).sort()).toEqual([...all].sort())
  expect(delivered.every((line) => line.deliveries === 1 && line.outcome === "Completed")).toBe(true)
  await kill(live)
  const launches = server.ledger
    .snapshot()
    .launches.slice(launchesBefore)
    .map((launch) => launch.idempotencyKey)
  expect([...launches].sort()).toEqual([...all].sort())
  const after = await dump()
  expect(after).not.toContain(".k1.")
  expect(after).not.toContain("result-secret")
}

describe("rekey under load, SIGKILLed mid-run", () => {
  it(
    "SQLite: calls in flight and a killed rekey lose nothing; nothing is left under the old key",
    async () => {
      const filename = path.join(dir, "app.db")
      await rotateUnderLoad(`sqlite:${filename}`, () => sqliteDump(filename))
    },
    processTestTimeout,
  )

  it(
    "PostgreSQL: the same",
    async () => {
      pgServer = await Effect.runPromise(TestDatabase.databaseUrl)
      await admin(pgServer, `CREATE DATABASE ${database}`)
      const url = new URL(pgServer)
      url.pathname = `/${database}`
      await rotateUnderLoad(url.toString(), () => pgDump(url.toString()))
    },
    processTestTimeout,
  )
})
