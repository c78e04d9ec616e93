/**
 * Every command against the fake server binary, through the built `mcp-handles` binary, with
 * the default SQLite store in a temporary working directory.
 */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { openTaskClient } from "@mcp-handles/core"
import type * as Config from "@mcp-handles/fake-server/Config"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import { describe, expect, it, vi } from "vitest"
import { askTool, fixture, processTestTimeout } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout })

const config: Config.Config = {
  deduplicateByKey: true,
  tools: [
    { name: "quick", shape: "direct", outcome: { kind: "result", text: "quick {{args.n}}" } },
    {
      name: "job",
      shape: "task",
      durationMs: 800,
      pollIntervalMs: 250,
      workingMessage: "working on {{args.n}}",
      outcome: { kind: "result", text: "done {{args.n}}" },
    },
    { name: "long", shape: "task", durationMs: 60_000, pollIntervalMs: 250 },
    askTool({ durationMs: 600, pollIntervalMs: 250, atMs: 200 }),
    { name: "slow_answer", shape: "task", durationMs: 300, pollIntervalMs: 250 },
    {
      name: "render",
      shape: "direct",
      durationMs: 3_000,
      progress: { steps: [0, 25, 50, 75, 100], total: 100, message: "rendering the report in full detail" },
      outcome: { kind: "result", text: "rendered" },
    },
  ],
  // The first two calls of slow_answer launch their tasks at once and are answered only a minute
  // later: the test kills the callers as soon as the ledger shows both launches, however slowly
  // the machine runs, and no answer can come first.
  faults: [
    {
      when: { method: "tools/call", tool: "slow_answer", nth: [1, 2] },
      fault: { kind: "latency", ms: 60_000, phase: "after" },
    },
  ],
}

const fx = fixture(config)

const taskIdOf = async (key: string) =>
  (await fx.server.ledger()).tasks.find((t) => t.idempotencyKey === key)?.taskId

/** Resolves once the server's ledger shows a launch of every key. */
const launched = async (keys: ReadonlyArray<string>): Promise<void> => {
  for (;;) {
    const { launches } = await fx.server.ledger()
    if (keys.every((key) => launches.some((l) => l.idempotencyKey === key))) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe("call", () => {
  it("records the call, follows it, and prints the outcome", async () => {
    const ran = await fx.ws.run("call", fx.server.url, "job", "--args", '{"n":1}', "--key", "j1")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout.trim()).toBe("j1: completed: done 1")
    expect(ran.stderr).toMatch(/^j1: recorded; working, task [0-9a-f]{4}…[0-9a-f]{2}$/m)
    const taskId = await taskIdOf("j1")
    expect(taskId).toBeDefined()
    expect(ran.stdout + ran.stderr).not.toContain(taskId)
    // The server is remembered in the store, by name and URL only; no file beside it.
    const servers = JSON.parse((await fx.ws.run("servers", "--json")).stdout)
    expect(servers.servers).toEqual([expect.objectContaining({ url: fx.server.url })])
    expect(existsSync(join(fx.ws.dir, ".mcp-handles", "tasks.db.servers.json"))).toBe(false)
  })

  it("listens for the call's task where the server offers it; --push off only polls", async () => {
    const listens = async () =>
      (await fx.server.ledger()).requests.filter((r) => r.method === "subscriptions/listen").length
    const job = (n: number, key: string, ...more: Array<string>) =>
      fx.ws.run("call", fx.server.url, "job", "--args", JSON.stringify({ n }), "--key", key, ...more)
    const before = await listens()
    const on = await job(5, "push-on")
    expect(on.code, on.stderr).toBe(0)
    expect(on.stdout.trim()).toBe("push-on: completed: done 5")
    const between = await listens()
    expect(between, "subscriptions/listen sent by call").toBeGreaterThan(before)
    const off = await job(6, "push-off", "--push", "off")
    expect(off.code, off.stderr).toBe(0)
    expect(off.stdout.trim()).toBe("push-off: completed: done 6")
    expect(await listens(), "subscriptions/listen sent with --push off").toBe(between)
    const polled = (await fx.server.ledger()).tasks.find((t) => t.idempotencyKey === "push-off")
    expect(polled?.polls.length).toBeGreaterThan(0)
  })

  it("prints JSON with --json, and attaches to an existing key instead of launching again", async () => {
    const first = await fx.ws.run(
      "call",
      fx.server.url,
      "quick",
      "--args",
      '{"n":2}',
      "--key",
      "q1",
      "--json",
    )
    expect(first.code, first.stderr).toBe(0)
    expect(JSON.parse(first.stdout)).toMatchObject({
      outcome: "Completed",
      key: "q1",
      result: { content: [{ type: "text", text: "quick 2" }] },
    })
    const again = await fx.ws.run("call", fx.server.url, "quick", "--args", '{"n":2}', "--key", "q1")
    expect(again.code).toBe(0)
    expect(again.stderr).toContain("attached to the existing call")
    expect((await fx.server.ledger()).launches.filter((l) => l.idempotencyKey === "q1")).toHaveLength(1)
    const reused = await fx.ws.run("call", fx.server.url, "quick", "--args", '{"n":3}', "--key", "q1")
    expect(reused.code).toBe(2)
    expect(reused.stderr).toMatch(/^mcp-handles: key "q1" is already used/)
  })

  it("off a terminal, the progress of a direct call is a whole line at each change", async () => {
    const ran = await fx.ws.run("call", fx.server.url, "render", "--key", "p1")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout.trim()).toBe("p1: completed: rendered")
    expect(ran.stderr).toContain("p1: sending… · progress 50/100 rendering the report in full detail\n")
  })

  it("answers input requests with --answer", async () => {
    const ran = await fx.ws.run(
      "call",
      fx.server.url,
      "ask",
      "--key",
      "a1",
      "--answer",
      '{"action":"accept","content":{"ok":"yes"}}',
    )
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout.trim()).toBe("a1: completed: answer yes")
    expect(ran.stderr).toContain("the server asks (elicitation/create, ok): OK?")
  })

  it("without --answer and without a terminal, stops at input instead of hanging; resume --answer finishes", async () => {
    const waiting = await fx.ws.run("call", fx.server.url, "ask", "--key", "a2")
    expect(waiting.code, waiting.stderr).toBe(3)
    expect(waiting.stdout.trim()).toMatch(
      /^a2: waiting for input \(ok\); answer with `mcp-handles resume --answer 'ok=\{"action":"accept","content":\{\}\}'`/,
    )
    const resumed = await fx.ws.run("resume", "--answer", '{"action":"accept","content":{"ok":"later"}}')
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain("a2: completed: answer later")
  })
})

describe("detach, list, show, resume", () => {
  it("a detached call is listed open, shown redacted, and finished by resume", async () => {
    const detached = await fx.ws.run(
      "call",
      fx.server.url,
      "job",
      "--args",
      '{"n":4}',
      "--key",
      "j2",
      "--detach",
    )
    expect(detached.code, detached.stderr).toBe(0)
    expect(detached.stdout.trim()).toBe("j2")

    const open = await fx.ws.run("list", "--status", "open")
    expect(open.code, open.stderr).toBe(0)
    const [header, ...rows] = open.stdout.trim().split("\n")
    expect(header).toMatch(
      /^KEY\s+STATUS\s+TOOL\s+SERVER\s+TASK\s+OWNER\s+LAST POLL\s+NEXT POLL\s+POLLS\s+AGE\s+NOTE$/,
    )
    expect(rows).toHaveLength(1)
    // Detached: the lease its caller took runs out; polled once, due again (or overdue: nobody drives it).
    expect(rows[0]).toMatch(
      /^j2\s+working\s+job\s+127\.0\.0\.1:\d+\s+[0-9a-f]{4}…[0-9a-f]{2}\s+-\s+\d+s ago\s+(in \d+s|\d+s ago)\s+\d+\s+\d+s\s+working on 4$/,
    )

    const taskId = await taskIdOf("j2")
    const shown = await fx.ws.run("show", "j2")
    expect(shown.stdout).toMatch(/^status\s+working$/m)
    expect(shown.stdout).not.toContain(taskId)
    const revealed = await fx.ws.run("show", "j2", "--reveal")
    expect(revealed.stdout).toMatch(new RegExp(`^task id\\s+${taskId}$`, "m"))

    const resumed = await fx.ws.run("resume")
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toContain("resumed 1 open call(s): 1 completed")
    expect(resumed.stderr).toContain("j2: completed: done 4")

    const listed = JSON.parse((await fx.ws.run("list", "--json")).stdout) as Array<Record<string, unknown>>
    expect(listed.find((r) => r.key === "j2")).toMatchObject({
      status: "completed",
      taskId: expect.stringMatching(/…/),
    })
    expect(JSON.stringify(listed)).not.toContain(taskId)
  })
})

describe("a call killed before its answer: in doubt, then reissue or abandon", () => {
  it("resume surfaces it; reissue re-sends with the same key; abandon gives up", async () => {
    // One caller after the other: both run under the default id, which one live process holds at
    // a time. Each is killed once the server launched its call (the intent was on disk before the
    // request left), while the server holds the answer back.
    for (const key of ["s1", "s2"]) {
      const caller = fx.ws.start("call", fx.server.url, "slow_answer", "--key", key)
      const exit = new Promise((resolve) => caller.once("exit", resolve))
      await Promise.race([
        launched([key]),
        exit.then((code) => Promise.reject(new Error(`a caller exited (${code}) before its launch`))),
      ])
      caller.kill("SIGKILL")
      await exit
    }
    const pending = (await fx.ws.run("list", "--status", "open")).stdout
    expect(pending).toMatch(/^s1\s+pending/m)
    expect(pending).toMatch(/^s2\s+pending/m)

    const resumed = await fx.ws.run("resume")
    // Calls in doubt need someone to decide: exit 3.
    expect(resumed.code, resumed.stderr).toBe(3)
    expect(resumed.stderr).toContain("2 interrupted call(s) now in doubt")
    expect(resumed.stdout).toContain("2 call(s) in doubt")

    const inDoubt = await fx.ws.run("list", "--status", "in-doubt")
    expect(inDoubt.stdout).toMatch(/^s1\s+in_doubt/m)

    const reissued = await fx.ws.run("reissue", "s1")
    expect(reissued.code, reissued.stderr).toBe(0)
    expect(reissued.stdout.trim()).toBe("s1: completed: ok")
    // The server deduplicates on the key: the re-issue did not launch a second task.
    const ledger = await fx.server.ledger()
    expect(ledger.launches.filter((l) => l.idempotencyKey === "s1")).toHaveLength(1)
    const shown = await fx.ws.run("show", "s1", "--json", "--reveal")
    expect(JSON.parse(shown.stdout)).toMatchObject({
      status: "completed",
      launches: 2,
      taskId: await taskIdOf("s1"),
    })

    const abandoned = await fx.ws.run("abandon", "s2")
    expect(abandoned.code, abandoned.stderr).toBe(0)
    expect(abandoned.stdout.trim()).toBe("s2: abandoned; now cancelled")
    const twice = await fx.ws.run("abandon", "s2")
    expect(twice.code).toBe(2)
    expect(twice.stderr.trim()).toBe("mcp-handles: s2 is not in doubt (it is cancelled); nothing to decide")
  })
})

describe("cancel and gc", () => {
  it("cancel sends tasks/cancel and reports the end; gc deletes settled calls only", async () => {
    await fx.ws.run("call", fx.server.url, "long", "--key", "l1", "--detach")
    const cancelled = await fx.ws.run("cancel", "l1")
    expect(cancelled.code, cancelled.stderr).toBe(0)
    expect(cancelled.stdout.trim()).toMatch(/^l1: cancelled/)
    const task = (await fx.server.ledger()).tasks.find((t) => t.idempotencyKey === "l1")
    expect(task?.cancels).toHaveLength(1)

    await fx.ws.run("call", fx.server.url, "long", "--key", "l2", "--detach")
    const gc = await fx.ws.run("gc", "--older-than", "0s")
    expect(gc.code, gc.stderr).toBe(0)
    expect(gc.stdout).toMatch(/^deleted [1-9]\d* settled call\(s\) older than 0s/)
    const left = await fx.ws.run("list")
    expect(
      left.stdout
        .trim()
        .split("\n")
        .slice(1)
        .map((l) => l.split(/\s+/)[0]),
    ).toEqual(["l2"])
    const older = await fx.ws.run("gc", "--older-than", "7d")
    expect(older.stdout).toMatch(/^deleted 0 settled/)
    await fx.ws.run("cancel", "l2", "--wait", "0")
  })
})

/**
 * An application's client on the workspace's default store, calling the fake server as
 * "research". It does not write that name to the store's servers: the workspace is shared, and
 * a test below expects the store not to know it (servers.test.ts has an app that does).
 */
const openResearchApp = () => {
  mkdirSync(join(fx.ws.dir, ".mcp-handles"), { recursive: true })
  return openTaskClient({
    store: SqliteStore.layer({ filename: join(fx.ws.dir, ".mcp-handles", "tasks.db") }),
    servers: [{ name: "research", url: fx.server.url }],
    background: false,
    recordServers: false,
  })
}

describe("gc and the consumers of outcomes", () => {
  it("keeps a call a consumer has not acknowledged, and lets it go once the consumer is forgotten", async () => {
    const app = await openResearchApp()
    try {
      await (await app.callTool("research", "quick", { n: 1 }, { key: "consumed" })).outcome()
      // Read under consumer "audit", never acknowledged: the store knows the consumer now.
      const feed = app.outcomes({ consumer: "audit", pollInterval: "10 millis" })
      for await (const delivered of feed) {
        if (delivered.key === "consumed") break
      }
    } finally {
      await app.close()
    }
    const kept = await fx.ws.run("gc", "--older-than", "0s", "--json")
    expect(kept.code, kept.stderr).toBe(0)
    expect(JSON.parse(kept.stdout)).toMatchObject({ kept: 1, unacknowledged: [], forgotten: [] })
    const text = await fx.ws.run("gc", "--older-than", "0s")
    expect(text.stdout).toMatch(
      /kept 1 settled call\(s\) a consumer has not acknowledged \(consumers: audit\)/,
    )
    const past = await fx.ws.run("gc", "--older-than", "0s", "--consumer-retention", "1h", "--json")
    expect(JSON.parse(past.stdout)).toMatchObject({ kept: 1 })
    const forgot = await fx.ws.run("gc", "--older-than", "0s", "--forget-consumer", "audit", "--json")
    expect(forgot.code, forgot.stderr).toBe(0)
    expect(JSON.parse(forgot.stdout)).toMatchObject({ kept: 0, forgotten: ["audit"] })
    expect((await fx.ws.run("show", "consumed")).code).not.toBe(0)
  })
})

describe("calls an application made under its own server name", () => {
  it("resume skips them until --server NAME=URL names the server", async () => {
    const app = await openResearchApp()
    await app.callTool("research", "job", { n: 9 }, { key: "app-1" })
    await app.close() // hands the open call off

    const skipped = await fx.ws.run("resume")
    // A skipped call needs someone to name its server: exit 3, and the hint that works.
    expect(skipped.code, skipped.stderr).toBe(3)
    expect(skipped.stderr).toMatch(
      /app-1: skipped; the store knows no URL for its server research \(add it: mcp-handles servers --set research=URL, or pass --server research=URL\)/,
    )
    const resumed = await fx.ws.run("resume", "--server", `research=${fx.server.url}`)
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain("app-1: completed: done 9")
    const listed = await fx.ws.run("list", "--server", `research=${fx.server.url}`)
    expect(listed.stdout).toMatch(/^app-1\s+completed\s+job\s+research\s/m)
  })
})

describe("--store", () => {
  it("takes sqlite:PATH, or MCP_HANDLES_STORE", async () => {
    const path = join(fx.ws.dir, "other.db")
    const ran = await fx.ws.run("call", fx.server.url, "quick", "--key", "o1", "--store", `sqlite:${path}`)
    expect(ran.code, ran.stderr).toBe(0)
    expect(existsSync(path)).toBe(true)
    const listed = await fx.ws.run("list", "--store", `sqlite:${path}`)
    expect(listed.stdout).toMatch(/^o1\s+completed/m)
    fx.ws.env.MCP_HANDLES_STORE = `sqlite:${path}`
    try {
      expect((await fx.ws.run("show", "o1")).code).toBe(0)
    } finally {
      delete fx.ws.env.MCP_HANDLES_STORE
    }
  })
})
