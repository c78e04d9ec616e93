/**
 * Outcome delivery (issue 15, item 1) with real processes and SIGKILL on one SQLite file: an
 * instance calls and is killed; another instance finishes the call; the first, restarted, gets
 * that outcome through `outcomes()` once it acknowledges it, and never again; an outcome not
 * acknowledged before a kill is delivered again to the restarted instance.
 */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type JsonLines, type Line, readJsonLines } from "../../../scripts/testing/json-lines.mjs"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import { processTestTimeout } from "./support.js"

const app = fileURLToPath(new URL("./fixtures/outcomes-app.mjs", import.meta.url))

interface Running extends JsonLines {
  readonly child: ChildProcess
  readonly kill: () => Promise<void>
}

let dir = ""
let listening: NodeHttp.Listening
let server: FakeServer.FakeServer

const start = (instance: string, ...args: ReadonlyArray<string>): Running => {
  const child = spawnGroup(
    process.execPath,
    [app, path.join(dir, "app.db"), listening.url, instance, ...args],
    {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    },
  )
  const { lines, next, exited } = readJsonLines(child, "the app")
  const kill = async () => {
    killGroup(child, "SIGKILL")
    await exited
  }
  return { child, lines, next, kill, exited }
}

const delivered = (line: Line) => "delivered" in line

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-outcomes-"))
  server = FakeServer.unsafeMake({
    tools: [
      { name: "slow", shape: "task", durationMs: 3_000, pollIntervalMs: 100 },
      { name: "quick", shape: "direct", outcome: { kind: "result", text: "ok" } },
    ],
  })
  listening = await NodeHttp.listen(server)
})

afterAll(async () => {
  await listening?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("outcomes across processes killed with SIGKILL", () => {
  it(
    "an outcome settled by another instance reaches the restarted caller once it is acknowledged; an unacknowledged one comes again",
    async () => {
      // A calls and is killed once the task id is durable.
      const a = start("a", "call", "k1", "slow")
      await a.next((line) => "recorded" in line)
      await a.kill()

      // B (another instance) finishes the call.
      const b = start("b", "settle", "k1")
      expect((await b.next((line) => "settled" in line)).settled).toBe("Completed")
      expect(await b.exited).toBe(0)

      // A restarts, reads its outcomes and acknowledges k1; a later call k2 comes next.
      const a2 = start("a", "feed", "ack")
      const first = await a2.next(delivered)
      expect(first).toEqual({ delivered: "k1", deliveries: 1, outcome: "Completed" })
      expect(await a2.next((line) => line.acked === "k1")).toEqual({ acked: "k1", ok: true })
      await a2.kill()
      const quick = start("a", "call", "k2", "quick")
      await quick.next((line) => "outcome" in line)
      expect(await quick.exited).toBe(0)

      // Read again without acknowledging: only k2 (outcomes come oldest call first, so a
      // k1 delivered again would come before it), and the reader is killed.
      const a3 = start("a", "feed", "keep")
      expect(await a3.next(delivered)).toEqual({ delivered: "k2", deliveries: 1, outcome: "Completed" })
      await a3.kill()

      // Restarted: k2 is delivered again, k1 still not.
      const a4 = start("a", "feed", "ack")
      expect(await a4.next(delivered)).toEqual({ delivered: "k2", deliveries: 2, outcome: "Completed" })
      await a4.next((line) => line.acked === "k2")
      await a4.kill()
      expect([...a2.lines, ...a3.lines, ...a4.lines].filter(delivered).map((line) => line.delivered)).toEqual(
        ["k1", "k2", "k2"],
      )
      // Launched once each, across four processes.
      expect(server.ledger.snapshot().launches.map((launch) => launch.idempotencyKey)).toEqual(["k1", "k2"])
    },
    processTestTimeout,
  )
})
