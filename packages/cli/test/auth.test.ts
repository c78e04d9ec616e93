/**
 * Credentials: `--header` and `--header-env` reach the server on every request of the command
 * (discovery, the call, polls, cancel), go only to the server they are for, and are never
 * written anywhere: not the store, not the server list, not the output.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import * as Support from "./support.js"

vi.setConfig({ testTimeout: Support.processTestTimeout })

const secret = "Bearer s3cret-token-value"

let ws: Support.Workspace
let upstream: Support.FakeServer
let proxy: Server
let guarded: string
/** The headers of every request the guarded server saw. */
const seen: Array<IncomingHttpHeaders> = []

/**
 * A server that wants `Authorization: Bearer s3cret-token-value`: 401 without it, else the fake
 * server's answer.
 */
const guard = (target: string): Server =>
  createServer((req, res) => {
    seen.push(req.headers)
    if (req.headers.authorization !== secret) {
      res.writeHead(401).end()
      return
    }
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", async () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(
          (entry): entry is [string, string] => typeof entry[1] === "string" && entry[0] !== "host",
        ),
      )
      const answer = await fetch(new URL(req.url ?? "/", target), {
        method: req.method ?? "POST",
        headers,
        body: req.method === "GET" ? null : Buffer.concat(chunks),
      })
      const answerHeaders: Record<string, string> = {}
      answer.headers.forEach((value, name) => {
        answerHeaders[name] = value
      })
      res.writeHead(answer.status, answerHeaders)
      res.end(Buffer.from(await answer.arrayBuffer()))
    })
  })

beforeAll(async () => {
  ws = Support.workspace()
  upstream = await Support.fakeServer(ws.dir, {
    tools: [
      {
        name: "job",
        shape: "task",
        durationMs: 400,
        pollIntervalMs: 100,
        outcome: { kind: "result", text: "ok" },
      },
      { name: "long", shape: "task", durationMs: 600_000, pollIntervalMs: 100 },
    ],
  })
  proxy = guard(upstream.url)
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  guarded = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`
})

afterAll(() => {
  proxy?.close()
  upstream?.stop()
  ws?.dispose()
})

/** Every file under `dir`, read whole. */
const everything = (dir: string): string =>
  readdirSync(dir)
    .map((name) => join(dir, name))
    .map((path) => (statSync(path).isDirectory() ? everything(path) : readFileSync(path, "latin1")))
    .join("\n")

describe("headers", () => {
  it("without credentials the server refuses, and nothing is recorded", async () => {
    const ran = await ws.run("call", guarded, "job")
    expect(ran.code).toBe(1)
    expect(Support.oneLine(ran)).toMatch(/refused the request \(HTTP 401\): check the credentials/)
  })

  it("--header-env and --header reach the server on every request; nothing is written", async () => {
    ws.env.MCP_TOKEN = secret
    try {
      const seenBefore = seen.length
      const called = await ws.run(
        "call",
        guarded,
        "job",
        "--key",
        "a1",
        "--header-env",
        "Authorization=MCP_TOKEN",
        "--header",
        "X-Tenant: acme",
        "--json",
      )
      expect(called.code, called.stderr).toBe(0)
      const requests = seen.slice(seenBefore)
      // server/discover, tools/call, and at least one poll, each with both headers.
      expect(requests.length).toBeGreaterThanOrEqual(3)
      for (const headers of requests) {
        expect(headers.authorization).toBe(secret)
        expect(headers["x-tenant"]).toBe("acme")
      }

      // A detached call, finished by resume and cancelled: the headers go along every time.
      expect(
        (
          await ws.run(
            "call",
            guarded,
            "long",
            "--key",
            "a2",
            "--detach",
            "--header-env",
            "Authorization=MCP_TOKEN",
          )
        ).code,
      ).toBe(0)
      const refused = await ws.run("cancel", "a2", "--wait", "0")
      expect(refused.code).toBe(3)
      const cancelled = await ws.run("cancel", "a2", "--header-env", "Authorization=MCP_TOKEN")
      expect(cancelled.code, cancelled.stderr).toBe(0)
      expect(cancelled.stdout).toMatch(/^a2: cancelled/)

      const all = [called.stdout, called.stderr, cancelled.stdout, cancelled.stderr, everything(ws.dir)].join(
        "\n",
      )
      expect(all).not.toContain("s3cret-token-value")
    } finally {
      delete ws.env.MCP_TOKEN
    }
  })

  it("an unset variable is named, its value never printed", async () => {
    const ran = await ws.run("call", guarded, "job", "--header-env", "Authorization=NO_SUCH_VAR")
    expect(ran.code).toBe(2)
    expect(Support.oneLine(ran)).toBe(
      "mcp-handles: --header-env Authorization: environment variable NO_SUCH_VAR is not set",
    )
    const bad = await ws.run("call", guarded, "job", "--header", "no colon here")
    expect(bad.code).toBe(2)
    expect(Support.oneLine(bad)).toBe(
      "mcp-handles: --header: expected 'NAME: VALUE', got a value without a colon",
    )
  })
})
