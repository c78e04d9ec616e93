/**
 * `mcp-handles tools` through the built binary, against `fake-mcp-server` as shipped (its
 * conformance profile): each tool with its task support, arguments and description, as a table
 * and as `--json`; a server named from the store; and the failures, each in one line.
 */
import * as Profile from "@mcp-handles/fake-server/Profile"
import * as Schema from "effect/Schema"
import { describe, expect, it, vi } from "vitest"
import * as Output from "../src/Output.js"
import { fixture, processTestTimeout } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout })

const fx = fixture()

const shipped = Profile.conformance.tools

describe("mcp-handles tools", () => {
  it("lists every tool with its task support, arguments and description", async () => {
    const ran = await fx.ws.run("tools", fx.server.url)
    expect(ran.code, ran.stderr).toBe(0)
    const [header, ...rows] = ran.stdout.trimEnd().split("\n")
    expect(header).toMatch(/^NAME\s+TASKS\s+ARGUMENTS\s+DESCRIPTION$/)
    expect(rows.map((row) => row.split(/\s+/)[0])).toEqual(shipped.map((tool) => tool.name))
    expect(ran.stdout).toMatch(
      /^slow_compute\s+optional\s+seconds\?: number, label\?: string\s+Works `seconds`/m,
    )
    expect(ran.stdout).toMatch(/^greet\s+forbidden\s+name\?: string\s+Answers "Hello, \{name\}!" at once$/m)
    expect(ran.stdout).toMatch(/^failing_job\s+required\s+-\s+Works 1 s, then completes with a tool error/m)
    for (const [i, row] of rows.entries()) expect(row.endsWith(` ${shipped[i]?.description}`), row).toBe(true)
    expect(ran.stdout).toMatch(/^test_param_header\s+forbidden\s+region: string\s+/m)
    expect(ran.stderr).toBe("")
  })

  it("--json: one line, each tool's input schema whole", async () => {
    const ran = await fx.ws.run("tools", fx.server.url, "--json")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout.trimEnd().split("\n")).toHaveLength(1)
    const out = Schema.decodeUnknownSync(Output.Tools, { onExcessProperty: "error" })(JSON.parse(ran.stdout))
    expect(out.url).toBe(fx.server.url)
    expect(out.server).toBe(new URL(fx.server.url).host)
    expect(out.tools.map((tool) => tool.name)).toEqual(shipped.map((tool) => tool.name))
    const slow = out.tools.find((tool) => tool.name === "slow_compute")
    expect(slow).toEqual({
      name: "slow_compute",
      title: null,
      description: shipped.find((tool) => tool.name === "slow_compute")?.description,
      taskSupport: "optional",
      idempotent: true,
      inputSchema: shipped.find((tool) => tool.name === "slow_compute")?.inputSchema,
    })
  })

  it("takes the name of a server the store knows, and names the known ones for one it does not", async () => {
    const store = ["--store", `sqlite:${fx.ws.dir}/named.db`]
    const called = await fx.ws.run(
      "call",
      `fake=${fx.server.url}`,
      "greet",
      "--args",
      '{"name":"Ada"}',
      ...store,
    )
    expect(called.code, called.stderr).toBe(0)
    expect(called.stdout).toContain("Hello, Ada!")

    const named = await fx.ws.run("tools", "fake", ...store)
    expect(named.code, named.stderr).toBe(0)
    expect(named.stdout).toMatch(/^slow_compute\s+optional\s+/m)

    const unknown = await fx.ws.run("tools", "fkae", ...store)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr.trim()).toBe(
      `mcp-handles: the store knows no server fkae (fake); pass its URL, or add it with mcp-handles servers --set fkae=URL`,
    )
  })

  it("says in one line when the server cannot be reached (exit 1)", async () => {
    const ran = await fx.ws.run("tools", "http://127.0.0.1:9/mcp")
    expect(ran.code).toBe(1)
    expect(ran.stderr).toMatch(/^mcp-handles: cannot reach http:\/\/127\.0\.0\.1:9\/mcp: /)
    expect(ran.stderr.trim().split("\n")).toHaveLength(1)
    expect(ran.stdout).toBe("")
  })
})
