import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { runGroup } from "../../../scripts/testing/process-groups.mjs"
import { bin, oneLine, processTestTimeout, workspace } from "./support.js"

describe("mcp-handles demo", () => {
  it(
    "kills a client mid-task, restarts it, and every invariant holds against the ledger",
    async () => {
      const ws = workspace()
      try {
        const started = Date.now()
        const ran = await ws.run("demo")
        expect(ran.code, ran.stdout + ran.stderr).toBe(0)
        expect(Date.now() - started).toBeLessThan(45_000)
        const out = ran.stdout
        expect(out).toContain("SIGKILL")
        expect(out).toMatch(/✓ no orphan/)
        expect(out).toMatch(/✓ no double launch: at most one server launch per key \(max 1\)/)
        expect(out).toMatch(/✓ every call rests: 8 of 8/)
        expect(out).toMatch(/✓ no input request answered twice/)
        expect(out).not.toContain("✗")
        // The restarted process resumed the tasks and surfaced the call that was in flight.
        expect(out).toMatch(/reconcile: [1-9]\d* task\(s\) resumed, \d+ interrupted call\(s\) now in doubt/)
        expect(out).toMatch(/render-1\s+.*expired/)
        // The naive client lost what the durable one kept.
        expect(out).toMatch(/restarted: 0 task id\(s\) to resume/)
        expect(out).toMatch(/orphaned: [1-9]\d*/)
        expect(out).toMatch(/^OK: /m)
        // Task ids are redacted unless --reveal.
        expect(out).toMatch(/[0-9a-f]{4}…[0-9a-f]{2} = server's/)
      } finally {
        ws.dispose()
      }
    },
    processTestTimeout,
  )

  it(
    "without the fake server (a development dependency) says so in one line",
    async () => {
      const hide = fileURLToPath(new URL("./fixtures/without-fake-server.mjs", import.meta.url))
      const ws = workspace()
      try {
        const ran = await runGroup(process.execPath, ["--import", hide, bin, "demo"], {
          cwd: ws.dir,
          env: ws.env,
        })
        expect(ran.code).toBe(1)
        expect(oneLine(ran)).toBe(
          "mcp-handles: demo: the demo needs the fake MCP server (@mcp-handles/fake-server), a development dependency of @mcp-handles/cli that is not installed here; run the demo from the repository: pnpm install && pnpm demo",
        )
        expect(ran.stdout).toBe("")
      } finally {
        ws.dispose()
      }
    },
    processTestTimeout,
  )
})
