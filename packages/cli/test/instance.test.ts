/**
 * The CLI is a process like any other (issue 28, finding 3): a command that drives calls takes
 * its instance id, so `resume` on the store of a live application under the same id (`local`, both
 * defaults) is refused, naming the holder and `--instance`, instead of polling the app's calls
 * beside it. Under another id it runs; a command that only reads runs beside the app; and once the
 * app is killed the id is free at once.
 */
import type { ChildProcess } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import { fixture, oneLine, processTestTimeout } from "./support.js"

const app = fileURLToPath(new URL("./fixtures/live-app.mjs", import.meta.url))

const fx = fixture({ tools: [{ name: "slow", shape: "task", durationMs: 60_000, pollIntervalMs: 1_000 }] })

/** Starts the app and resolves once it holds its id. */
const startApp = (filename: string, instanceId: string) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawnGroup(process.execPath, [app, filename, fx.server.url, instanceId], {
      stdio: ["ignore", "pipe", "inherit"],
    })
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) =>
      line === "ready" ? resolve(child) : reject(new Error(`the app said ${line}`)),
    )
    child.once("exit", (code) => reject(new Error(`the app exited with ${code}`)))
  })

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
  })

describe("instance id", () => {
  it(
    "resume is refused while a live app holds its id, runs under another id, and once the app is gone",
    async () => {
      const filename = join(fx.ws.dir, "app.db")
      const store = `sqlite:${filename}`
      const live = await startApp(filename, "local")

      const refused = await fx.ws.run("resume", "--store", store)
      expect(refused.code, refused.stderr).toBe(2)
      const line = oneLine(refused)
      expect(line).toContain(`instance id "local" is held by process ${live.pid} on this host`)
      expect(line).toContain("--instance")
      // The other driving commands are refused the same way.
      const cancel = await fx.ws.run("cancel", "--store", store, "some-key")
      expect(cancel.code, cancel.stderr).toBe(2)
      expect(cancel.stderr).toContain(`is held by process ${live.pid}`)

      // A command that only reads runs beside the app.
      const listed = await fx.ws.run("list", "--store", store)
      expect(listed.code, listed.stderr).toBe(0)
      // Under an id of its own, resume runs.
      const beside = await fx.ws.run("resume", "--store", store, "--instance", "other")
      expect(beside.code, beside.stderr).toBe(0)

      // A dead process frees its id at once: resume under `local` takes the app's rows over.
      killGroup(live, "SIGKILL")
      await exited(live)
      const after = await fx.ws.run("resume", "--store", store)
      expect(after.code, after.stderr).toBe(0)
    },
    processTestTimeout,
  )
})
