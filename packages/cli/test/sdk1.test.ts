/**
 * The CLI against a server no one here wrote (issue 17): a 2025-11-25 task server built on the
 * official SDK 1.x experimental task API (store-sqlite's test/fixtures/sdk1-server.mjs, which
 * counts launches by idempotency key), driven through the built `mcp-handles` binary. A slow task
 * completes under `call`; a `call` killed with SIGKILL once its task id is on disk is finished by
 * `resume`, launched once; a question the server asks mid-task is answered with `--answer` on
 * `resume`, asked once; `cancel` ends a task cancelled; a task whose session the server dropped
 * ends `session_lost` under `resume`, never launched again.
 */
import type { ChildProcess } from "node:child_process"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import { processTestTimeout, type Ran, type Workspace, waitForStderr, workspace } from "./support.js"

/**
 * The fixture stays in store-sqlite, whose devDependency `@modelcontextprotocol/sdk` it imports:
 * run from there, the SDK resolves without the cli package depending on it.
 */
const storeSqliteDir = fileURLToPath(new URL("../../store-sqlite/", import.meta.url))
const serverScript = path.join(storeSqliteDir, "test", "fixtures", "sdk1-server.mjs")

let server: ChildProcess | undefined
let base = ""
let url = ""

beforeAll(async () => {
  const child = spawnGroup(process.execPath, [serverScript], {
    cwd: storeSqliteDir,
    stdio: ["ignore", "pipe", "inherit"],
  })
  server = child
  const port = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the SDK 1.x server exited with ${code} before listening`)))
    createInterface({ input: child.stdout }).on("line", (line) => {
      const match = /^listening (\d+)$/.exec(line.trim())
      if (match?.[1] !== undefined) resolve(match[1])
    })
  })
  base = `http://127.0.0.1:${port}`
  url = `${base}/mcp`
}, 60_000)

afterAll(() => {
  if (server !== undefined) killGroup(server, "SIGKILL")
})

/** Each test on a store of its own, so one test's open call is never another's `resume`. */
let ws: Workspace | undefined
const fresh = (): Workspace => {
  ws = workspace()
  return ws
}
afterEach(() => {
  ws?.dispose()
  ws = undefined
})

/** How many times the server launched each call, by idempotency key: the server's own count. */
const launches = async (): Promise<Record<string, number>> =>
  (await (await fetch(`${base}/launches`)).json()) as Record<string, number>

/** By idempotency key: how often the server asked its question, and the answers it got. */
const questions = async (): Promise<Record<string, { asked: number; answers: ReadonlyArray<unknown> }>> =>
  (await (await fetch(`${base}/questions`)).json()) as Record<
    string,
    { asked: number; answers: ReadonlyArray<unknown> }
  >

const json = (ran: Ran): Record<string, unknown> => {
  expect(ran.stdout.trimEnd().split("\n"), `one line on stdout: ${ran.stdout}`).toHaveLength(1)
  return JSON.parse(ran.stdout) as Record<string, unknown>
}

describe("mcp-handles against a 2025-11-25 server on the official SDK 1.x task API", () => {
  it(
    "call: a slow task completes (exit 0), launched once",
    async () => {
      const w = fresh()
      const ran = await w.run("call", url, "sleep_1500", "--key", "slow-1", "--json")
      expect(ran.code, ran.stderr).toBe(0)
      const out = json(ran)
      expect(out).toMatchObject({ key: "slow-1", status: "completed", outcome: "Completed", launches: 1 })
      expect(JSON.stringify(out.result)).toContain("slept 1500")
      expect((await launches())["slow-1"]).toBe(1)
    },
    processTestTimeout,
  )

  it(
    "call killed with SIGKILL mid-task, then resume: the call completes, launched once",
    async () => {
      const w = fresh()
      const caller = w.start("call", url, "sleep_4000", "--key", "kill-1")
      const exited = new Promise((resolve) => caller.once("exit", resolve))
      // The line comes once the task id is on disk (callTool returned it).
      await waitForStderr(caller, /kill-1: recorded; working, task /)
      killGroup(caller, "SIGKILL")
      await exited
      expect((await launches())["kill-1"]).toBe(1)

      // Nobody drives the row now: it holds the task id, the task still runs on the server.
      const listed = await w.run("list", "--json")
      expect(listed.code, listed.stderr).toBe(0)
      const rows = JSON.parse(listed.stdout) as Array<Record<string, unknown>>
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ key: "kill-1", status: "working", launches: 1 })
      expect(rows[0]?.taskId).toEqual(expect.any(String))

      const resumed = await w.run("resume", "--json")
      expect(resumed.code, resumed.stderr).toBe(0)
      const report = json(resumed)
      expect(report).toMatchObject({
        reconciled: { resumed: 1, inDoubt: 0, reissued: 0 },
        calls: [{ key: "kill-1", status: "completed", outcome: "Completed" }],
        inDoubt: [],
        skipped: [],
      })

      const shown = await w.run("show", "kill-1", "--json")
      expect(shown.code, shown.stderr).toBe(0)
      const row = json(shown)
      expect(row).toMatchObject({ key: "kill-1", status: "completed", launches: 1 })
      expect(JSON.stringify(row.result)).toContain("slept 4000")
      expect((await launches())["kill-1"]).toBe(1)
    },
    processTestTimeout,
  )

  it(
    "a question mid-task: call stops waiting for input (exit 3); resume --answer KEY=JSON answers it, asked once, launched once",
    async () => {
      const w = fresh()
      const waiting = await w.run("call", url, "ask", "--key", "ask-1", "--json")
      expect(waiting.code, waiting.stderr).toBe(3)
      const out = json(waiting)
      expect(out).toMatchObject({ key: "ask-1", status: "input_required", outcome: "WaitingForInput" })
      const waitingFor = out.waitingFor as ReadonlyArray<string>
      expect(waitingFor).toHaveLength(1)
      const [inputKey] = waitingFor
      expect((await questions())["ask-1"]).toEqual({ asked: 1, answers: [] })

      const answer = { action: "accept", content: { answer: "yes" } }
      const resumed = await w.run("resume", "--answer", `${inputKey}=${JSON.stringify(answer)}`, "--json")
      expect(resumed.code, resumed.stderr).toBe(0)
      const report = json(resumed)
      expect(report).toMatchObject({
        calls: [{ key: "ask-1", status: "completed", outcome: "Completed", launches: 1 }],
      })
      expect(JSON.stringify(report.calls)).toContain("answered yes")

      const shown = json(await w.run("show", "ask-1", "--json"))
      expect(shown).toMatchObject({ status: "completed", answeredInputKeys: [inputKey] })
      expect((await questions())["ask-1"]).toEqual({ asked: 1, answers: [answer] })
      expect((await launches())["ask-1"]).toBe(1)
    },
    processTestTimeout,
  )

  it(
    "cancel: tasks/cancel ends a detached call cancelled (exit 0), launched once",
    async () => {
      const w = fresh()
      const detached = await w.run("call", url, "sleep_60000", "--key", "cancel-1", "--detach", "--json")
      expect(detached.code, detached.stderr).toBe(0)
      expect(json(detached)).toMatchObject({ key: "cancel-1", status: "working", outcome: null })
      const cancelled = await w.run("cancel", "cancel-1", "--json")
      expect(cancelled.code, cancelled.stderr).toBe(0)
      expect(json(cancelled)).toMatchObject({ key: "cancel-1", status: "cancelled", cancel: { sent: true } })
      expect((await launches())["cancel-1"]).toBe(1)
    },
    processTestTimeout,
  )

  // Last: the server forgets every session, which no other test may see.
  it(
    "after the server dropped the session, resume ends the call session_lost (exit 1), never launched again",
    async () => {
      const w = fresh()
      const detached = await w.run("call", url, "sleep_60000", "--key", "lost-1", "--detach")
      expect(detached.code, detached.stderr).toBe(0)
      expect((await fetch(`${base}/drop-sessions`, { method: "POST" })).ok).toBe(true)
      const resumed = await w.run("resume", "--json")
      expect(resumed.code, resumed.stderr).toBe(1)
      expect(json(resumed)).toMatchObject({
        calls: [
          {
            key: "lost-1",
            status: "failed",
            outcome: "Failed",
            launches: 1,
            error: { data: { "mcp-handles/local": "session_lost" } },
          },
        ],
      })
      expect((await launches())["lost-1"]).toBe(1)
    },
    processTestTimeout,
  )
})
