/**
 * Against a server no one here wrote: a 2025-11-25 task server built on the official SDK 1.x
 * experimental task API (test/fixtures/sdk1-server.mjs), spoken to by real client processes on
 * a SQLite store. A slow task completes; a cancel ends in cancelled; a client killed with
 * SIGKILL while its task runs is resumed from the store by the next process and the call
 * completes, launched once; a question the server asks mid-task is answered through the durable
 * input path, also by the next process when the first was killed while it waited (the server
 * asks once); a task whose session the server dropped ends `session_lost`, never launched again.
 */
import type { ChildProcess } from "node:child_process"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readJsonLines } from "../../../scripts/testing/json-lines.mjs"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const packageDir = path.resolve(here, "..")
const serverScript = path.join(here, "fixtures", "sdk1-server.mjs")
const clientScript = path.join(here, "fixtures", "sdk1-client.mjs")

interface Lines {
  readonly child: ChildProcess
  /** Resolves with the first line (parsed) that `pick` accepts; rejects when the child ends first. */
  readonly next: (pick: (line: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>
}

/** Starts a child in its own process group and reads its stdout as JSON lines. */
const start = (args: ReadonlyArray<string>): Lines => {
  const child = spawnGroup("node", [...args], { cwd: packageDir, stdio: ["ignore", "pipe", "pipe"] })
  const { next } = readJsonLines(child)
  return { child, next }
}

let dir = ""
let server: Lines | undefined
let url = ""
let base = ""

const launches = async (): Promise<Record<string, number>> =>
  (await (await fetch(`${base}/launches`)).json()) as Record<string, number>

const client = (db: string, mode: string, key: string, tool?: string) =>
  start([clientScript, path.join(dir, db), url, mode, key, ...(tool === undefined ? [] : [tool])])

interface Questions {
  readonly asked: number
  readonly answers: ReadonlyArray<unknown>
}

const questions = async (): Promise<Record<string, Questions>> =>
  (await (await fetch(`${base}/questions`)).json()) as Record<string, Questions>

/** A client calls `tool` and is killed with SIGKILL once the line `pick` accepts is out. */
const killedAt = async (
  db: string,
  mode: string,
  key: string,
  tool: string,
  pick: (line: Record<string, unknown>) => boolean,
) => {
  const first = client(db, mode, key, tool)
  const seen = await first.next(pick)
  const exited = new Promise((resolve) => first.child.once("exit", resolve))
  killGroup(first.child, "SIGKILL")
  await exited
  return seen
}

/** A client calls `tool` and is killed with SIGKILL once its task id is durable. */
const killedOnceRecorded = (db: string, key: string, tool: string) =>
  killedAt(db, "call", key, tool, (line) => "recorded" in line)

beforeAll(async () => {
  // The client processes run against `dist`; tsc -b rebuilds only what changed.
  execFileSync("npx", ["tsc", "-b", path.join(packageDir, "tsconfig.src.json")], { stdio: "inherit" })
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-sdk1-"))
  server = start([serverScript])
  const listening = await server.next(
    (line) => typeof line.text === "string" && line.text.startsWith("listening"),
  )
  const port = String(listening.text).split(" ")[1]
  base = `http://127.0.0.1:${port}`
  url = `${base}/mcp`
}, 120_000)

afterAll(() => {
  if (server?.child.pid !== undefined) killGroup(server.child, "SIGKILL")
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("a 2025-11-25 server on the official SDK 1.x task API", () => {
  it("a slow task completes through tasks/get and tasks/result, launched once", async () => {
    const run = client("slow.db", "call", "slow-1", "sleep_1500")
    const recorded = await run.next((line) => "recorded" in line)
    expect(typeof recorded.recorded).toBe("string")
    expect(recorded.generation).toBe("2025-11-25")
    const done = await run.next((line) => "outcome" in line)
    expect(done.status).toBe("completed")
    expect(JSON.stringify(done.outcome)).toContain("slept 1500")
    expect((await launches())["slow-1"]).toBe(1)
  }, 60_000)

  it("adopting a task id the server never handed out is UnknownTask (-32602), nothing recorded, the id not shown", async () => {
    const unknown = "00000000000000000000000000000000"
    const run = client("adopt-unknown.db", "adopt-unknown", unknown)
    const done = await run.next((line) => "rejected" in line)
    expect(done.rejected).toMatchObject({ _tag: "UnknownTask" })
    expect(JSON.stringify(done.rejected)).not.toContain(unknown)
    expect(done.rows).toBe(0)
  }, 60_000)

  it("a cancel ends the call cancelled (tasks/cancel)", async () => {
    const run = client("cancel.db", "cancel", "cancel-1", "sleep_60000")
    const done = await run.next((line) => "outcome" in line)
    expect(done.status).toBe("cancelled")
    expect((await launches())["cancel-1"]).toBe(1)
  }, 60_000)

  it("a client killed with SIGKILL mid-task is resumed from the store: the call completes, launched once", async () => {
    await killedOnceRecorded("kill.db", "kill-1", "sleep_4000")
    const second = client("kill.db", "resume", "kill-1")
    const done = await second.next((line) => "outcome" in line)
    expect(done.status).toBe("completed")
    expect(JSON.stringify(done.outcome)).toContain("slept 4000")
    expect(done.launches).toBe(1)
    expect((await launches())["kill-1"]).toBe(1)
  }, 60_000)

  it("a question the server asks mid-task (elicitation/create on tasks/result) is answered through the durable input path", async () => {
    const run = client("ask.db", "call", "ask-1", "ask")
    const asked = await run.next((line) => "asked" in line)
    expect(asked.request).toMatchObject({
      method: "elicitation/create",
      params: { message: "Proceed?" },
    })
    const done = await run.next((line) => "outcome" in line)
    expect(done.status).toBe("completed")
    expect(JSON.stringify(done.outcome)).toContain("answered yes")
    expect((await launches())["ask-1"]).toBe(1)
    expect((await questions())["ask-1"]).toEqual({
      asked: 1,
      answers: [{ action: "accept", content: { answer: "yes" } }],
    })
  }, 60_000)

  it("a client killed while a question waits for its answer: the next one answers it from the store, asked once, launched once", async () => {
    // The first client reports the question (it is durable by then) and never answers it.
    const asked = await killedAt("held.db", "hold", "held-1", "ask", (line) => "asked" in line)
    expect((await questions())["held-1"]).toEqual({ asked: 1, answers: [] })
    // The server never sends a question twice: only the row still knows it.
    const second = client("held.db", "resume", "held-1")
    const again = await second.next((line) => "asked" in line)
    expect(again.asked).toBe(asked.asked)
    const done = await second.next((line) => "outcome" in line)
    expect(done.status).toBe("completed")
    expect(JSON.stringify(done.outcome)).toContain("answered yes")
    expect(done.launches).toBe(1)
    expect((await launches())["held-1"]).toBe(1)
    expect((await questions())["held-1"]).toEqual({
      asked: 1,
      answers: [{ action: "accept", content: { answer: "yes" } }],
    })
  }, 60_000)

  it("a cancel while the task waits for input ends the call cancelled", async () => {
    const run = client("ask-cancel.db", "hold-cancel", "ask-cancel-1", "ask")
    await run.next((line) => "asked" in line)
    const done = await run.next((line) => "outcome" in line)
    expect(done.status).toBe("cancelled")
    expect((await launches())["ask-cancel-1"]).toBe(1)
  }, 60_000)

  it("after a restart, a task whose session the server dropped ends session_lost, never launched again", async () => {
    await killedOnceRecorded("lost.db", "lost-1", "sleep_60000")
    await fetch(`${base}/drop-sessions`, { method: "POST" })
    const second = client("lost.db", "resume", "lost-1")
    const done = await second.next((line) => "outcome" in line)
    expect(done.status).toBe("failed")
    expect(done.error).toMatchObject({ data: { "mcp-handles/local": "session_lost" } })
    expect(done.launches).toBe(1)
    expect((await launches())["lost-1"]).toBe(1)
  }, 60_000)
})
