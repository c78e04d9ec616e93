/**
 * What a newcomer meets in a first hour with the binary, against the fake server as shipped (the
 * one the docs tell them to start): the help's examples run as printed, a word for a command that
 * is an option elsewhere is pointed there, a shell user is told the command that answers input
 * (with the shape the server's form expects), an unknown server name is an error, and a call in
 * doubt says how to decide it and where to read more.
 */
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { runGroup } from "../../../scripts/testing/process-groups.mjs"
import { bin, fakeServer, fixture, oneLine, processTestTimeout } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout })

const fx = fixture()

/** `text` run by sh in the workspace, `mcp-handles` being the built binary. */
const shell = (text: string) =>
  runGroup("sh", ["-c", text.replaceAll("mcp-handles ", `'${process.execPath}' '${bin}' `)], {
    cwd: fx.ws.dir,
    env: fx.ws.env,
  })

/** The lines `$ mcp-handles …` of a help text that talk to the documented local server. */
const localExamples = (help: string): ReadonlyArray<string> =>
  help
    .split("\n")
    .map((line) => /^\s*\$ (mcp-handles .*http:\/\/127\.0\.0\.1:3000\/mcp.*)$/.exec(line)?.[1])
    .filter((line) => line !== undefined)

describe("the help's examples", () => {
  it("that call the fake server run as printed against it as shipped (npx fake-mcp-server)", async () => {
    const helps = [
      (await fx.ws.run("--help")).stdout,
      (await fx.ws.run("call", "--help")).stdout,
      (await fx.ws.run("tools", "--help")).stdout,
    ]
    const examples = helps.flatMap(localExamples)
    expect(examples.filter((e) => e.startsWith("mcp-handles call ")).length).toBeGreaterThanOrEqual(2)
    for (const example of examples) {
      const ran = await shell(example.replaceAll("http://127.0.0.1:3000/mcp", fx.server.url))
      expect(ran.code, `${example}\n${ran.stderr}`).toBe(0)
    }
    // Nothing they left behind failed.
    const listed = JSON.parse((await fx.ws.run("list", "--json")).stdout) as ReadonlyArray<{
      readonly key: string
      readonly status: string
    }>
    expect(listed.filter((row) => row.status !== "completed")).toEqual([])
  })
})

describe("a word for a command that is an option of another", () => {
  it.each([
    [["watch"], "mcp-handles: unknown command watch (did you mean mcp-handles list --watch?)"],
    [["answer"], "mcp-handles: unknown command answer (did you mean mcp-handles resume --answer KEY=JSON?)"],
    [["wacth"], "mcp-handles: unknown command wacth (did you mean mcp-handles list --watch?)"],
    [
      ["help", "answer"],
      "mcp-handles: unknown command answer (did you mean mcp-handles resume --answer KEY=JSON?)",
    ],
    [["shwo"], "mcp-handles: unknown command shwo (did you mean show?)"],
  ] as const)("%j points to the command line that does it (exit 2)", async (args, line) => {
    const ran = await fx.ws.run(...args)
    expect(ran.code).toBe(2)
    expect(oneLine(ran)).toBe(line)
  })
})

const confirmAnswer = `'confirm={"action":"accept","content":{"confirm":true}}'`

describe("input, off a terminal", () => {
  it("is answered with a command, not the library's answer(): the warning and the stop say mcp-handles resume --answer", async () => {
    const ran = await fx.ws.run(
      "call",
      fx.server.url,
      "confirm_delete",
      "--args",
      '{"filename":"a.txt"}',
      "--key",
      "in-1",
    )
    expect(ran.code, ran.stderr).toBe(3)
    expect(ran.stderr).not.toContain("answer(key, inputKey, response)")
    expect(ran.stderr).not.toContain("onInputRequired")
    expect(ran.stderr).toMatch(/^mcp-handles: warning: .*`mcp-handles resume --answer confirm=JSON`/m)
    // The stop names the answer with the shape the server's form expects.
    expect(ran.stdout).toContain(
      `in-1: waiting for input (confirm); answer with \`mcp-handles resume --answer ${confirmAnswer}\``,
    )
  })

  it("an --answer without the expected shape is refused with the shape to give, and that shape answers it", async () => {
    const ran = await fx.ws.run(
      "call",
      fx.server.url,
      "confirm_delete",
      "--args",
      '{"filename":"b.txt"}',
      "--key",
      "in-2",
      "--answer",
      'confirm={"confirm":true}',
    )
    expect(ran.code, ran.stderr).toBe(3)
    expect(ran.stderr).toContain("--answer for confirm does not fit the request")
    expect(ran.stderr).toContain(`expected, e.g.: --answer ${confirmAnswer}`)
    const answered = await shell(`mcp-handles resume --answer ${confirmAnswer}`)
    expect(answered.stderr).toContain("in-2: completed: Deleted b.txt")
  })
})

describe("list --server", () => {
  it("a name the store does not know is an error naming the servers it knows (exit 2)", async () => {
    await fx.ws.run("call", fx.server.url, "greet", "--key", "named-1")
    const known = JSON.parse((await fx.ws.run("servers", "--json")).stdout) as {
      readonly servers: ReadonlyArray<{ readonly name: string }>
    }
    const name = known.servers[0]?.name ?? ""
    expect(name).not.toBe("")
    const ran = await fx.ws.run("list", "--server", "nosuch")
    expect(ran.code).toBe(2)
    expect(ran.stdout).toBe("")
    const line = oneLine(ran)
    expect(line).toMatch(/^mcp-handles: list --server nosuch: no server of that name in this store/)
    expect(line).toContain(name)
    expect(line).toContain("docs/troubleshooting.md#an-unknown-server-name")
    const listed = await fx.ws.run("list", "--server", name)
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(/^named-1\s+completed/m)
  })
})

describe("a tool the server does not have", () => {
  it("fails with -32602 and a pointer to the server's tools", async () => {
    const ran = await fx.ws.run("call", fx.server.url, "report", "--key", "typo-1")
    expect(ran.code).toBe(1)
    expect(ran.stdout).toMatch(/typo-1: failed: .*\(JSON-RPC -32602\); mcp-handles tools SERVER-URL lists/)
    expect(ran.stdout).toContain("docs/troubleshooting.md#a-call-fails-with--32602")
  })
})

describe("a call in doubt", () => {
  it("says on every run how to decide it, in commands, and where to read more", async () => {
    // A server that creates the task and loses its answer: the call may or may not have run.
    const lossy = await fakeServer(join(fx.ws.dir), {
      tools: [{ name: "job", shape: "task", durationMs: 200, pollIntervalMs: 100 }],
      faults: [{ when: { method: "tools/call", nth: 1 }, fault: { kind: "drop", phase: "after" } }],
    })
    try {
      for (const run of [1, 2]) {
        const ran = await fx.ws.run("call", lossy.url, "job", "--key", "lost-1")
        expect(ran.code, `run ${run}: ${ran.stderr}`).toBe(3)
        expect(ran.stdout).toContain(
          "lost-1: in doubt: connection failed, the request may have been delivered",
        )
        expect(ran.stdout).toContain(
          "decide with `mcp-handles reissue lost-1` (send it again) or `mcp-handles abandon lost-1`",
        )
        expect(ran.stdout).toContain("docs/troubleshooting.md#a-call-is-in-doubt")
        // The library's own notice names its API, for code: the CLI says it in commands instead.
        expect(`${ran.stdout}${ran.stderr}`).not.toContain("client.reissue")
      }
      const resumed = await fx.ws.run("resume", "--server", lossy.url)
      expect(resumed.code).toBe(3)
      expect(resumed.stdout).toContain("docs/troubleshooting.md#a-call-is-in-doubt")
      const reissued = await fx.ws.run("reissue", "lost-1")
      expect(reissued.code, reissued.stderr).toBe(0)
    } finally {
      lossy.stop()
    }
  })
})
