/**
 * Bad input gets one clear line on stderr and a non-zero exit code, never a stack trace (unless
 * `--verbose`), and writes nothing.
 */
import { existsSync, writeFileSync } from "node:fs"
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

  it("an unknown key", async () => {
    for (const command of ["show", "cancel", "reissue", "abandon"]) {
      const ran = await ws.run(command, "no-such-key")
      expect(ran.code).toBe(2)
      expect(oneLine(ran)).toBe('mcp-handles: no call with key "no-such-key" in scope "default"')
    }
  })

  it("a store that cannot be opened", async () => {
    const garbage = join(ws.dir, "garbage.db")
    writeFileSync(garbage, "this is not a database")
    const cases = [`sqlite:${garbage}`, `sqlite:${join(ws.dir, "missing-dir", "x.db")}`, `sqlite:${ws.dir}`]
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
