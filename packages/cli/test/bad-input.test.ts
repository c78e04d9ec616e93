/**
 * Bad input gets one clear line on stderr and a non-zero exit code, never a stack trace (unless
 * `--verbose`), and writes nothing.
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import {
  type FakeServer,
  fakeServer,
  oneLine,
  processTestTimeout,
  type Workspace,
  workspace,
} from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout })

let ws: Workspace
let server: FakeServer
let web: Server
let webUrl: string
let closedPort: number

const listen = (s: Server) =>
  new Promise<number>((resolve) => s.listen(0, "127.0.0.1", () => resolve((s.address() as AddressInfo).port)))

beforeAll(async () => {
  ws = workspace()
  server = await fakeServer(ws.dir, { tools: [{ name: "job", shape: "direct" }] })
  // A web server that is not an MCP server.
  web = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" })
    res.end("<html><body>hello</body></html>")
  })
  webUrl = `http://127.0.0.1:${await listen(web)}/mcp`
  const closed = createServer()
  closedPort = await listen(closed)
  await new Promise((resolve) => closed.close(resolve))
})

afterAll(() => {
  server?.stop()
  web?.close()
  ws?.dispose()
})

const noStore = () => expect(existsSync(join(ws.dir, ".mcp-handles"))).toBe(false)

describe("bad input", () => {
  it("an unreachable server", async () => {
    const ran = await ws.run("call", `http://127.0.0.1:${closedPort}/mcp`, "job")
    expect(ran.code).toBe(1)
    expect(oneLine(ran)).toMatch(/^mcp-handles: cannot reach http:\/\/127\.0\.0\.1:\d+\/mcp: /)
  })

  it("a URL that is not an MCP server", async () => {
    const ran = await ws.run("call", webUrl, "job")
    expect(ran.code).toBe(1)
    expect(oneLine(ran)).toMatch(/MCP server/)
  })

  it("malformed --args, before anything is written", async () => {
    for (const args of ["{bad", "[1,2]", "@/no/such/file.json"]) {
      const ran = await ws.run("call", server.url, "job", "--args", args)
      expect(ran.code).toBe(2)
      expect(oneLine(ran)).toMatch(/^mcp-handles: --args: /)
    }
    noStore()
  })

  it("a server URL that is not a URL", async () => {
    const ran = await ws.run("call", "not-a-url", "job")
    expect(ran.code).toBe(2)
    expect(oneLine(ran)).toBe("mcp-handles: invalid server URL not-a-url: not a URL")
  })

  it("an unknown key, in a store that exists", async () => {
    const made = await ws.run("call", server.url, "job", "--key", "made")
    expect(made.code, made.stderr).toBe(0)
    for (const command of ["show", "cancel", "reissue", "abandon"]) {
      const ran = await ws.run(command, "no-such-key")
      expect(ran.code).toBe(2)
      expect(oneLine(ran)).toBe('mcp-handles: no call with key "no-such-key" in scope "default"')
    }
  })

  it("a store that cannot be opened", async () => {
    const garbage = join(ws.dir, "garbage.db")
    writeFileSync(garbage, "this is not a database")
    const cases = [`sqlite:${garbage}`, `sqlite:${ws.dir}`]
    for (const store of cases) {
      const ran = await ws.run("list", "--store", store)
      expect(ran.code).toBe(1)
      expect(oneLine(ran)).toMatch(/^mcp-handles: cannot open store /)
    }
    const scheme = await ws.run("list", "--store", "mysql://db/x")
    expect(scheme.code).toBe(2)
    expect(oneLine(scheme)).toMatch(/^mcp-handles: --store: expected sqlite:PATH or postgres/)
  })

  it("a PostgreSQL URL with wrong credentials (the password never printed)", async () => {
    const base = process.env.DATABASE_URL
    let url: string
    if (base !== undefined && base !== "") {
      const wrong = new URL(base)
      wrong.username = "mcp_handles_no_such_role"
      wrong.password = "s3cret-pw"
      url = wrong.toString()
    } else {
      // No server here: the same path, ending in a refused connection.
      url = `postgres://mcp_handles_no_such_role:s3cret-pw@127.0.0.1:${closedPort}/x`
    }
    const ran = await ws.run("list", "--store", url)
    expect(ran.code).toBe(1)
    const line = oneLine(ran)
    expect(line).toMatch(/^mcp-handles: cannot open store postgres(ql)?:\/\/mcp_handles_no_such_role:\*\*\*@/)
    expect(line).not.toContain("s3cret-pw")
    if (base !== undefined && base !== "") expect(line).toMatch(/mcp_handles_no_such_role|authentication/)
  })

  it("--verbose adds the cause; unknown commands and options are usage errors", async () => {
    const verbose = await ws.run("list", "--store", `sqlite:${ws.dir}`, "--verbose")
    expect(verbose.code).toBe(1)
    expect(verbose.stderr.split("\n").filter((l) => l !== "").length).toBeGreaterThan(1)
    const unknown = await ws.run("frobnicate")
    expect(unknown.code).toBe(2)
    const age = await ws.run("gc", "--older-than", "soon")
    expect(age.code).toBe(2)
    expect(oneLine(age)).toMatch(/^mcp-handles: --older-than: /)
  })
})

describe("large arguments", () => {
  let big: Workspace
  beforeAll(() => {
    big = workspace()
  })
  afterAll(() => big?.dispose())

  it("are refused over 1 MiB with a way out, and sent under --max-args-bytes", async () => {
    const file = join(big.dir, "big.json")
    writeFileSync(file, JSON.stringify({ text: "x".repeat(2 * 1024 * 1024) }))
    const refused = await big.run("call", server.url, "job", "--args", `@${file}`, "--key", "big-1")
    expect(refused.code, refused.stderr).toBe(2)
    expect(oneLine(refused)).toMatch(/exceeds the limit of 1048576.*--max-args-bytes/)
    // Nothing was recorded: the same key is free for the call that raises the limit.
    const sent = await big.run(
      "call",
      server.url,
      "job",
      "--args",
      `@${file}`,
      "--key",
      "big-1",
      "--max-args-bytes",
      String(4 * 1024 * 1024),
    )
    expect(sent.code, sent.stderr).toBe(0)
    expect(sent.stderr).toMatch(/^big-1: recorded/m)
  })
})

describe("reading never creates a store", () => {
  let fresh: Workspace
  beforeAll(() => {
    fresh = workspace()
  })
  afterAll(() => fresh?.dispose())

  it.each([["list"], ["show", "k"], ["resume"], ["gc"], ["cancel", "k"], ["reissue", "k"], ["abandon", "k"]])(
    "%s fails on a missing store, naming it, and creates nothing",
    async (...command) => {
      const ran = await fresh.run(...command)
      expect(ran.code, ran.stderr).toBe(1)
      expect(oneLine(ran)).toBe(
        `mcp-handles: no store at ${join(fresh.dir, ".mcp-handles", "tasks.db")}: nothing was called with it yet (only mcp-handles call creates a store). Pass --store, or set $MCP_HANDLES_STORE, to point at yours`,
      )
      expect(readdirSync(fresh.dir)).toEqual([])
    },
  )

  it.each(["x.db", "./sub/x.db", "sqlite:y.db"])(
    "--store %s: a missing file is named, not created",
    async (store) => {
      const ran = await fresh.run("list", "--store", store)
      expect(ran.code).toBe(1)
      expect(oneLine(ran)).toMatch(/^mcp-handles: no store at \/.*\/(x|y)\.db: /)
      expect(readdirSync(fresh.dir)).toEqual([])
    },
  )

  it("--store with a bare word is refused as a likely mistake", async () => {
    const word = await fresh.run("list", "--store", "tasks")
    expect(word.code).toBe(2)
    expect(oneLine(word)).toMatch(/^mcp-handles: --store: expected sqlite:PATH, a path like \.\/tasks\.db/)
  })
})

describe("usage mistakes", () => {
  it.each([
    [["list", "--jsn"], "mcp-handles: unknown option --jsn (did you mean --json?)"],
    [["list", "--bogus"], "mcp-handles: unknown option --bogus (see mcp-handles list --help)"],
    [["call", "--stor=x", "u", "t"], "mcp-handles: unknown option --stor (did you mean --store?)"],
    [["lsit"], "mcp-handles: unknown command lsit (did you mean list?)"],
    [["frobnicate"], "mcp-handles: unknown command frobnicate (see mcp-handles --help)"],
    [["--json", "list"], "mcp-handles: --json goes after the command, e.g. mcp-handles list --json"],
    [
      ["show"],
      "mcp-handles: show: missing KEY, e.g. mcp-handles show report-2 (see mcp-handles show --help)",
    ],
    [["list", "extra"], "mcp-handles: list: unexpected argument extra (see mcp-handles list --help)"],
    [["list", "--json=yes"], "mcp-handles: --json takes no value (see mcp-handles list --help)"],
    [["list", "--status"], "mcp-handles: --status needs a value: --status open"],
    [
      ["list", "--status", "sleeping"],
      'mcp-handles: --status: "sleeping" is not one of open, terminal, in-doubt, all (see mcp-handles list --help)',
    ],
    [
      ["list", "--status=opn"],
      'mcp-handles: --status: "opn" is not one of open, terminal, in-doubt, all (did you mean open?)',
    ],
    [["list", "--interval", "-1"], "mcp-handles: --interval: must be at least 1, not -1"],
    [
      ["list", "--interval", "abc"],
      'mcp-handles: --interval: "abc" is not a whole number, e.g. --interval 5',
    ],
    [["cancel", "k", "--wait", "-3"], "mcp-handles: --wait: must be at least 0, not -3"],
  ] as const)("%j: one line, exit 2", async (args, line) => {
    const ran = await ws.run(...args)
    expect(ran.code).toBe(2)
    expect(oneLine(ran)).toBe(line)
    expect(ran.stdout).toBe("")
  })
})

describe("credentials in a server URL", () => {
  it("are refused before anything is written, and never echoed", async () => {
    const fresh = workspace()
    try {
      const cases = [
        `${server.url}?token=s3cret-value`,
        `${server.url}?api_key=s3cret-value&x=1`,
        server.url.replace("http://", "http://user:s3cret-value@"),
      ]
      for (const url of cases) {
        const ran = await fresh.run("call", url, "job")
        expect(ran.code, ran.stderr).toBe(2)
        const line = oneLine(ran)
        expect(line).toMatch(
          /^mcp-handles: the server URL .* carries (a secret in its query string|credentials)/,
        )
        expect(line).toContain("--header-env")
        expect(line).not.toContain("s3cret-value")
      }
      expect(readdirSync(fresh.dir)).toEqual([])
    } finally {
      fresh.dispose()
    }
  })
})
