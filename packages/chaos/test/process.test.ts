import { describe, expect, it } from "vitest"
import * as ProcessChaos from "../src/ProcessChaos.js"
import { killsFor, seedFrom } from "../src/Settings.js"

describe("chaos: real processes killed with SIGKILL (SQLite store, fake-mcp-server binary)", () => {
  it("after every kill, nothing is orphaned or launched twice, and every row rests once a client runs to the end", async () => {
    const seed = seedFrom()
    const result = await ProcessChaos.run({ kills: killsFor(), seed })
    console.log(
      `chaos processes: seed ${seed}: ${result.kills} SIGKILLs, ${result.runs} client processes, ${result.calls} calls, ${result.checks} checks from outside in ${result.millis} ms`,
    )
    expect(result.kills).toBeGreaterThanOrEqual(killsFor())
  }, 600_000)
})
