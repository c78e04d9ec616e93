/**
 * Real processes, real SIGKILL: a child streams durable writes and reports each one it got an
 * acknowledgement for; we kill it at a random moment, then check the database opens cleanly and
 * holds every acknowledged write. Seeded: set CRASH_SEED to replay a failing run.
 */
import { type ChildProcess, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawnGroup } from "../../../scripts/testing/process-groups.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const packageDir = path.resolve(here, "..")
const fixture = path.join(here, "fixtures", "crash-writer.mjs")

const seed = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31))
const trials = Number(process.env.CRASH_TRIALS ?? 24)

/** mulberry32: small, seedable, good enough to pick kill moments. */
const random = (() => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
})()

/** The child runs against `dist`: build it when it is missing or older than the sources. */
const ensureBuilt = () => {
  const built = path.join(packageDir, "dist", "index.js")
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...fs.readdirSync(dir, { withFileTypes: true }).map((entry) => {
        const full = path.join(dir, entry.name)
        return entry.isDirectory() ? newest(full) : fs.statSync(full).mtimeMs
      }),
    )
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= newest(path.join(packageDir, "src"))) return
  execFileSync("npx", ["tsc", "-b", path.join(packageDir, "tsconfig.src.json")], { stdio: "inherit" })
}

let dir = ""
beforeAll(() => {
  ensureBuilt()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-crash-"))
})
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

interface Acknowledged {
  readonly begun: Array<string>
  readonly updated: Array<string>
}

/** Runs one child, kills it with SIGKILL after a random delay, returns what it acknowledged. */
const killedRun = (filename: string, trial: number, duringStartup: boolean) =>
  new Promise<Acknowledged>((resolve, reject) => {
    const child: ChildProcess = spawnGroup(process.execPath, [fixture, filename, String(trial), "4"], {
      stdio: ["ignore", "pipe", "pipe"],
    })
    const acked: Acknowledged = { begun: [], updated: [] }
    let buffered = ""
    let stderr = ""
    let timer: NodeJS.Timeout | undefined
    const kill = (ms: number) => {
      timer = setTimeout(() => child.kill("SIGKILL"), ms)
    }
    // Some trials die while the store is opening (or migrating); most die mid-stream.
    if (duringStartup) kill(Math.floor(random() * 400))
    child.stdout?.setEncoding("utf8")
    child.stdout?.on("data", (chunk: string) => {
      buffered += chunk
      const lines = buffered.split("\n")
      // A line without its newline was cut by the kill: it does not count as acknowledged.
      buffered = lines.pop() ?? ""
      for (const line of lines) {
        if (line === "ready") {
          if (!duringStartup) kill(5 + Math.floor(random() * 150))
        } else if (line.startsWith("B ")) acked.begun.push(line.slice(2))
        else if (line.startsWith("U ")) acked.updated.push(line.slice(2))
      }
    })
    child.stderr?.on("data", (chunk) => {
      stderr += String(chunk)
    })
    child.on("error", reject)
    child.on("exit", (code, signal) => {
      if (timer) clearTimeout(timer)
      if (signal !== "SIGKILL") {
        reject(new Error(`child exited on its own (code ${code}): ${stderr}`))
      } else resolve(acked)
    })
  })

const verify = (filename: string, acked: Acknowledged) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* SqliteStore.make({ filename })
        const missing: Array<string> = []
        for (const key of acked.begun) {
          if (Option.isNone(yield* store.get("crash", key))) missing.push(`begin ${key}`)
        }
        for (const key of acked.updated) {
          const record = yield* store.get("crash", key)
          if (Option.isNone(record) || record.value.taskId !== `task-${key}`) missing.push(`update ${key}`)
        }
        return missing
      }),
    ),
  )

describe("crash test (SIGKILL of a real writer process)", () => {
  it(`every acknowledged write survives (seed ${seed}, ${trials} trials)`, { timeout: 90_000 }, async () => {
    const filename = path.join(dir, "handles.db")
    let acknowledged = 0
    for (let trial = 0; trial < trials; trial++) {
      const duringStartup = trial % 6 === 5
      const acked = await killedRun(filename, trial, duringStartup)
      acknowledged += acked.updated.length
      const context = `seed ${seed} (CRASH_SEED=${seed} to replay), trial ${trial}`
      const missing = await verify(filename, acked).catch((error: unknown) => {
        throw new Error(`${context}: the database did not open after the kill: ${String(error)}`)
      })
      expect(missing, `${context}: acknowledged writes lost`).toEqual([])
      const db = new Database(filename, { readonly: true })
      const integrity = db.pragma("integrity_check", { simple: true })
      db.close()
      expect(integrity, context).toBe("ok")
    }
    // The kills must have landed mid-stream, or the test proves nothing.
    expect(acknowledged, `seed ${seed}: too few writes were acknowledged`).toBeGreaterThan(trials)
  })
})
