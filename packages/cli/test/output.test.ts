/**
 * Each command's `--json` output against its schema in `Output` (no field missing, none extra,
 * one line), and each command's exit codes as the README gives them.
 */
import type * as Config from "@mcp-handles/fake-server/Config"
import * as Schema from "effect/Schema"
import { describe, expect, it, vi } from "vitest"
import * as Output from "../src/Output.js"
import { askTool, fixture, processTestTimeout, type Ran } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout })

const config: Config.Config = {
  deduplicateByKey: true,
  tools: [
    {
      name: "job",
      shape: "task",
      durationMs: 300,
      pollIntervalMs: 100,
      outcome: { kind: "result", text: "done" },
    },
    {
      name: "broken",
      shape: "task",
      durationMs: 200,
      pollIntervalMs: 100,
      outcome: { kind: "error", code: -32000, message: "it broke" },
    },
    { name: "refused", shape: "direct", outcome: { kind: "result", text: "no", isError: true } },
    { name: "long", shape: "task", durationMs: 600_000, pollIntervalMs: 100, cancelDelayMs: 600_000 },
    { name: "quits", shape: "task", durationMs: 600_000, pollIntervalMs: 100 },
    askTool({ durationMs: 300, pollIntervalMs: 100, atMs: 100 }),
    { name: "slow_a", shape: "task", durationMs: 200, pollIntervalMs: 100 },
    { name: "slow_b", shape: "task", durationMs: 200, pollIntervalMs: 100 },
  ],
  // The first call of each launches its task at once and is answered only much later: its caller
  // is killed first, which leaves the call in doubt.
  faults: ["slow_a", "slow_b"].map((tool) => ({
    when: { method: "tools/call", tool, nth: 1 },
    fault: { kind: "latency", ms: 600_000, phase: "after" } as const,
  })),
}

const fx = fixture(config)

/** Decodes stdout with the command's schema: one line, every field, nothing else. */
const decode = <A, I>(schema: Schema.Schema<A, I>, ran: Ran): A => {
  expect(ran.stdout.endsWith("\n"), ran.stdout).toBe(true)
  expect(ran.stdout.trimEnd().split("\n"), "one line").toHaveLength(1)
  return Schema.decodeUnknownSync(schema, { onExcessProperty: "error" })(JSON.parse(ran.stdout))
}

const serverName = () => new URL(fx.server.url).host

/** Calls `tool` and kills the caller once the server launched it, before its answer: in doubt. */
const killedInFlight = async (tool: string, key: string): Promise<void> => {
  const caller = fx.ws.start("call", fx.server.url, tool, "--key", key)
  const exited = new Promise((resolve) => caller.once("exit", resolve))
  while (!(await fx.server.ledger()).launches.some((l) => l.idempotencyKey === key)) {
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  caller.kill("SIGKILL")
  await exited
}

describe("call --json", () => {
  it("completed: exit 0, the row and the outcome, the server by name", async () => {
    const ran = await fx.ws.run("call", fx.server.url, "job", "--key", "c1", "--json")
    expect(ran.code, ran.stderr).toBe(0)
    const out = decode(Output.Call, ran)
    expect(out).toMatchObject({ key: "c1", outcome: "Completed", status: "completed", server: serverName() })
    expect(out.serverUrl).toBe(fx.server.url)
    expect(out.result).toMatchObject({ content: [{ type: "text", text: "done" }] })
  })

  it("--detach: the same shape, outcome null", async () => {
    // In a scope of its own: this call stays open for good, and resume must not follow it.
    const slow = ["--scope", "slow"]
    const ran = await fx.ws.run("call", fx.server.url, "long", "--key", "c2", ...slow, "--detach", "--json")
    expect(ran.code, ran.stderr).toBe(0)
    const out = decode(Output.Call, ran)
    expect(out).toMatchObject({ key: "c2", outcome: null, status: "working", server: serverName() })
    expect(out.taskId).toMatch(/…/)
  })

  it("failed and isError: exit 1", async () => {
    const failed = await fx.ws.run("call", fx.server.url, "broken", "--key", "c3", "--json")
    expect(failed.code, failed.stderr).toBe(1)
    expect(decode(Output.Call, failed)).toMatchObject({ outcome: "Failed", error: { message: "it broke" } })
    const refused = await fx.ws.run("call", fx.server.url, "refused", "--key", "c4", "--json")
    expect(refused.code, refused.stderr).toBe(1)
    expect(decode(Output.Call, refused)).toMatchObject({ outcome: "Completed", result: { isError: true } })
  })

  it("input nobody here can give: exit 3; --answer KEY=JSON answers that key", async () => {
    const waiting = await fx.ws.run("call", fx.server.url, "ask", "--key", "c5", "--json")
    expect(waiting.code, waiting.stderr).toBe(3)
    expect(decode(Output.Call, waiting)).toMatchObject({
      outcome: "WaitingForInput",
      status: "input_required",
      waitingFor: ["ok"],
    })
    // An answer for another key does not answer this one.
    const other = await fx.ws.run("resume", "--answer", 'nope={"action":"decline"}', "--json")
    expect(other.code, other.stderr).toBe(3)
    const accept = 'ok={"action":"accept","content":{"ok":"yes"}}'
    const answered = await fx.ws.run("resume", "--answer", accept, "--json")
    expect(answered.code, answered.stderr).toBe(0)
    const report = decode(Output.Resume, answered)
    expect(report.calls).toEqual([
      expect.objectContaining({ key: "c5", outcome: "Completed", result: expect.anything() }),
    ])
  })
})

describe("the other commands' --json", () => {
  it("list, show, gc: exit 0", async () => {
    const list = await fx.ws.run("list", "--json")
    expect(list.code, list.stderr).toBe(0)
    const rows = decode(Output.List, list)
    // c2 is in a scope of its own.
    expect(rows.map((r) => r.key)).toEqual(["c1", "c3", "c4", "c5"])
    expect(new Set(rows.map((r) => r.server))).toEqual(new Set([serverName()]))
    const show = await fx.ws.run("show", "c1", "--json")
    expect(show.code, show.stderr).toBe(0)
    const { history, ...shown } = decode(Output.Show, show)
    expect(shown).toEqual(rows.find((r) => r.key === "c1"))
    // The call's status changes, oldest first, each with its cause and instance.
    expect(history.map((entry) => [entry.from, entry.to, entry.cause])).toEqual([
      [null, "pending", "call"],
      ["pending", "working", "TaskCreated"],
      ["working", "completed", "Polled"],
    ])
    expect(history.every((entry) => entry.instance !== null && !Number.isNaN(Date.parse(entry.at)))).toBe(
      true,
    )
    const human = await fx.ws.run("show", "c1")
    expect(human.stdout).toMatch(/^history\s+\S+Z {2}pending {2}\(call, \S+\)$/m)
    expect(human.stdout).toMatch(/^\s+\S+Z {2}working -> completed {2}\(Polled, \S+\)$/m)
    const gc = await fx.ws.run("gc", "--older-than", "1d", "--json")
    expect(gc.code, gc.stderr).toBe(0)
    expect(decode(Output.Gc, gc)).toEqual({
      deleted: 0,
      olderThan: "1d",
      scope: "default",
      kept: 0,
      unacknowledged: [],
      forgotten: [],
    })
  })

  it("cancel: exit 0 once it ended, 3 while it still runs", async () => {
    // The server acknowledges this cancel but keeps the task running for a long time.
    const running = await fx.ws.run("cancel", "c2", "--scope", "slow", "--wait", "0", "--json")
    expect(running.code, running.stderr).toBe(3)
    expect(decode(Output.Cancel, running)).toMatchObject({ key: "c2", cancel: { sent: true } })
    await fx.ws.run("call", fx.server.url, "quits", "--key", "c6", "--detach")
    const cancelled = await fx.ws.run("cancel", "c6", "--json")
    expect(cancelled.code, cancelled.stderr).toBe(0)
    expect(decode(Output.Cancel, cancelled)).toMatchObject({
      key: "c6",
      status: "cancelled",
      server: serverName(),
    })
    const again = await fx.ws.run("cancel", "c6", "--json")
    expect(again.code, again.stderr).toBe(0)
  })

  it("resume exits 3 with a call in doubt; reissue and abandon print their shapes", async () => {
    await killedInFlight("slow_a", "d1")
    const resumed = await fx.ws.run("resume", "--json")
    expect(resumed.code, resumed.stderr).toBe(3)
    const report = decode(Output.Resume, resumed)
    expect(report.inDoubt.map((r) => r.key)).toContain("d1")
    expect(report.inDoubt[0]?.server).toBe(serverName())

    const reissued = await fx.ws.run("reissue", "d1", "--json")
    expect(reissued.code, reissued.stderr).toBe(0)
    expect(decode(Output.Reissue, reissued)).toMatchObject({ key: "d1", outcome: "Completed", launches: 2 })
    const abandoned = await fx.ws.run("abandon", "d1", "--json")
    expect(abandoned.code).toBe(2)
    expect(abandoned.stdout).toBe("")
  })

  it("abandon: exit 0", async () => {
    await killedInFlight("slow_b", "d2")
    expect((await fx.ws.run("resume")).code).toBe(3)
    const abandoned = await fx.ws.run("abandon", "d2", "--json")
    expect(abandoned.code, abandoned.stderr).toBe(0)
    expect(decode(Output.Abandon, abandoned)).toMatchObject({ key: "d2", status: "cancelled" })
  })

  it("resume exits 1 when a followed call failed, 0 when all completed", async () => {
    await fx.ws.run("call", fx.server.url, "broken", "--key", "f1", "--scope", "r1", "--detach")
    const failed = await fx.ws.run("resume", "--scope", "r1", "--json")
    expect(failed.code, failed.stderr).toBe(1)
    expect(decode(Output.Resume, failed).calls).toEqual([
      expect.objectContaining({ key: "f1", outcome: "Failed" }),
    ])
    await fx.ws.run("call", fx.server.url, "job", "--key", "f2", "--scope", "r2", "--detach")
    const completed = await fx.ws.run("resume", "--scope", "r2", "--json")
    expect(completed.code, completed.stderr).toBe(0)
    expect(decode(Output.Resume, completed)).toMatchObject({ inDoubt: [], skipped: [] })
  })
})

describe("tool errors in text", () => {
  it("a tool error reads as one: the outcome line and list say completed (tool error)", async () => {
    const refused = await fx.ws.run("call", fx.server.url, "refused", "--key", "c4t")
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stdout).toContain("c4t: completed (tool error): no")
    const listed = await fx.ws.run("list", "--status", "all")
    expect(listed.stdout.split("\n").find((line) => line.startsWith("c4t "))).toMatch(
      / completed \(tool error\) /,
    )
  })
})
