import { type ChildProcessByStdio, execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import type { Readable } from "node:stream"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import type * as Config from "../src/Config.js"
import { request } from "./helpers.js"

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..")
const bin = join(packageDir, "dist/bin.js")
const work = mkdtempSync(join(tmpdir(), "fake-mcp-server-"))

type Child = ChildProcessByStdio<null, Readable, Readable>

/** Start the built binary; resolves with the URL it prints on its first line. */
const launch = (args: string[]): Promise<{ child: Child; url: string }> =>
  new Promise((resolve, reject) => {
    const child = spawnGroup(process.execPath, [bin, "--port", "0", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    })
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`exited with ${code}`)))
    createInterface({ input: child.stdout }).once("line", (url) => resolve({ child, url }))
  })

const exitOf = (child: Child) =>
  new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))

/** A conforming request sent to a real URL. */
const post = (url: string, method: string, params: Record<string, unknown>) => {
  const template = request(method, params)
  return fetch(url, {
    method: "POST",
    headers: template.headers,
    body: template.body,
    duplex: "half",
  } as RequestInit)
}

beforeAll(() => {
  // The test runs the real binary, so build it from the current sources first.
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-b", join(packageDir, "tsconfig.src.json")], { stdio: "inherit" })
}, 120_000)

afterAll(() => rmSync(work, { recursive: true, force: true }))

describe("fake-mcp-server binary", () => {
  it("prints its URL first, serves MCP and the ledger, and exits cleanly on SIGTERM", async () => {
    const { child, url } = await launch(["--profile", "conformance"])
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const created = await (
      await post(url, "tools/call", { name: "slow_compute", arguments: { seconds: 60 } })
    ).json()
    expect(created.result.resultType).toBe("task")
    const ledger = await (await fetch(new URL("/_ledger", url))).json()
    expect(ledger.launches[0]).toMatchObject({ tool: "slow_compute", taskId: created.result.taskId })
    const exited = exitOf(child)
    child.kill("SIGTERM")
    expect(await exited).toBe(0)
  })

  it("accepts the names --allowed-host adds, and refuses other origins with 403", async () => {
    const { child, url } = await launch(["--profile", "conformance", "--allowed-host", "mcp.test"])
    const from = (origin: string) => {
      const template = request("tools/list")
      const headers = new Headers(template.headers)
      headers.set("origin", origin)
      return fetch(url, { method: "POST", headers, body: template.body, duplex: "half" } as RequestInit)
    }
    expect((await from("http://mcp.test:8080")).status).toBe(200)
    expect((await from("http://localhost")).status).toBe(200)
    expect((await from("http://evil.example.com")).status).toBe(403)
    const exited = exitOf(child)
    child.kill("SIGTERM")
    expect(await exited).toBe(0)
  })

  it("reads --config, and a drop fault cuts the socket after creating the task", async () => {
    const config: Config.Config = {
      tools: [{ name: "job", durationMs: 60_000 }],
      faults: [{ when: { method: "tools/call", nth: 1 }, fault: { kind: "drop" } }],
    }
    const file = join(work, "config.json")
    writeFileSync(file, JSON.stringify(config))
    const { child, url } = await launch(["--config", file])
    await expect(post(url, "tools/call", { name: "job" })).rejects.toThrow()
    const ledger = await (await fetch(new URL("/_ledger", url))).json()
    expect(ledger.launches).toEqual([expect.objectContaining({ tool: "job", responseDelivered: false })])
    child.kill("SIGTERM")
    await exitOf(child)
  })

  it("keeps tasks across a process restart with --state", async () => {
    const state = join(work, "state.json")
    const first = await launch(["--profile", "conformance", "--state", state])
    const created = await (
      await post(first.url, "tools/call", { name: "slow_compute", arguments: { seconds: 60 } })
    ).json()
    const taskId = created.result.taskId as string
    first.child.kill("SIGKILL")
    await exitOf(first.child)

    const second = await launch(["--profile", "conformance", "--state", state])
    const got = await (await post(second.url, "tasks/get", { taskId })).json()
    expect(got.result).toMatchObject({ taskId, status: "working" })
    second.child.kill("SIGTERM")
    await exitOf(second.child)
  })

  it("fails with a message on a bad config", async () => {
    const file = join(work, "bad.json")
    writeFileSync(file, "{}")
    const child = spawnGroup(process.execPath, [bin, "--config", file], { stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => {
      stderr += chunk
    })
    expect(await exitOf(child)).toBe(1)
    expect(stderr).toContain('needs a "tools" array')
  })

  it("refuses a config with an unknown key, naming its path and the key meant, and serves nothing", async () => {
    const file = join(work, "misspelt.json")
    writeFileSync(
      file,
      JSON.stringify({ tools: [{ name: "job", durationMs: 60_000, statusMessage: "working on it" }] }),
    )
    const child = spawnGroup(process.execPath, [bin, "--port", "0", "--config", file], {
      stdio: ["ignore", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk) => {
      stderr += chunk
    })
    expect(await exitOf(child)).toBe(1)
    expect(stdout).toBe("")
    expect(stderr.trim()).toBe(
      `fake-mcp-server: ${file}: tools[0].statusMessage: unknown key (did you mean workingMessage?)`,
    )
  })

  describe("--exit-with-parent", () => {
    /**
     * A parent process (in a group of its own) that starts the server as a plain child, prints
     * the server's pid, and is then killed alone with SIGKILL: it runs no cleanup at all.
     */
    const orphan = async (flags: ReadonlyArray<string>) => {
      const script = `
        const { spawn } = require("node:child_process")
        const server = spawn(process.execPath, ${JSON.stringify([bin, "--port", "0", "--profile", "conformance", ...flags])}, { stdio: ["ignore", "pipe", "inherit"] })
        server.stdout.once("data", (url) => console.log(JSON.stringify({ pid: server.pid, url: String(url).trim() })))
        setInterval(() => {}, 1000)
      `
      const parent = spawnGroup(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "pipe"] })
      const line = await new Promise<string>((resolve) =>
        createInterface({ input: parent.stdout }).once("line", resolve),
      )
      const { pid, url } = JSON.parse(line) as { pid: number; url: string }
      // Alive and serving before its parent goes.
      expect((await fetch(new URL("/_ledger", url))).status).toBe(200)
      const parentGone = exitOf(parent)
      process.kill(parent.pid as number, "SIGKILL")
      await parentGone
      return { pid, stop: () => killGroup(parent) }
    }

    /** Whether `pid` is still a running process (a zombie nobody reaped has ended). */
    const running = (pid: number) => {
      try {
        process.kill(pid, 0)
      } catch {
        return false
      }
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
      } catch {
        return false
      }
    }

    const runningAfter = async (pid: number, ms: number) => {
      const deadline = Date.now() + ms
      while (Date.now() < deadline && running(pid)) await new Promise((resolve) => setTimeout(resolve, 50))
      return running(pid)
    }

    it("stops once its parent was killed with SIGKILL", async () => {
      const { pid, stop } = await orphan(["--exit-with-parent"])
      try {
        expect(await runningAfter(pid, 10_000)).toBe(false)
      } finally {
        stop()
      }
    })

    it("without it, outlives a parent killed with SIGKILL (what the flag is for)", async () => {
      const { pid, stop } = await orphan([])
      try {
        expect(await runningAfter(pid, 1_500)).toBe(true)
      } finally {
        stop()
      }
    })
  })
})
