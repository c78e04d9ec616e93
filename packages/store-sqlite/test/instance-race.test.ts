/**
 * Taking over a stale instance lock has no race: of many processes that find the holder dead and
 * try at the same moment, exactly one gets the id; the others are refused.
 */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))

/** Resolves with the child's first line of output. */
const firstLine = (child: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    let buffered = ""
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8")
      const end = buffered.indexOf("\n")
      if (end < 0) return
      child.stdout?.off("data", onData)
      resolve(buffered.slice(0, end))
    }
    child.stdout?.on("data", onData)
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`child exited (${code}) before a line: ${buffered}`)))
  })

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
  })

const fixture = (name: string) => path.join(here, "fixtures", name)

describe("instance lock race", () => {
  it.live(
    "many processes taking over a stale lock at once: exactly one wins, every round",
    () =>
      Effect.promise(async () => {
        const racers = 8
        for (let round = 0; round < 4; round++) {
          const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-race-"))
          const filename = path.join(dir, "tasks.db")
          // A holder killed by SIGKILL leaves its lock behind: stale, for whoever comes next.
          const holder = spawnGroup(process.execPath, [fixture("hold-instance.mjs"), filename, "racy"], {
            stdio: ["ignore", "pipe", "inherit"],
          })
          expect(await firstLine(holder)).toBe("held")
          killGroup(holder, "SIGKILL")
          await exited(holder)
          const children = Array.from({ length: racers }, () =>
            spawnGroup(process.execPath, [fixture("race-instance.mjs"), filename, "racy"], {
              stdio: ["pipe", "pipe", "inherit"],
            }),
          )
          const ready = await Promise.all(children.map(firstLine))
          expect(ready.every((line) => line === "ready")).toBe(true)
          const answers = children.map(firstLine)
          for (const child of children) child.stdin?.write("go\n")
          const outcomes = await Promise.all(answers)
          for (const child of children) killGroup(child, "SIGKILL")
          expect(
            outcomes.filter((line) => line === "won"),
            outcomes.join("\n"),
          ).toHaveLength(1)
          expect(outcomes.filter((line) => line.startsWith("refused"))).toHaveLength(racers - 1)
        }
      }),
    120_000,
  )
})
