/**
 * The CLI's text and JSON faces on a store of more than 10,000 calls: `list` reads every page
 * before it prints, so a redaction that kept only the ids it met last would print the oldest
 * rows' ids whole (a legacy `adopted:{taskId}` key, a status message or last problem quoting
 * the id). Redaction must not depend on how many ids the process has seen.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type BigStore, expectNoIds, seedBigStore } from "./bigStore.js"
import { processTestTimeout, type Workspace, workspace } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout, hookTimeout: processTestTimeout })

let ws: Workspace
let store: BigStore

beforeAll(async () => {
  ws = workspace()
  store = await seedBigStore(ws.dir)
})

afterAll(() => {
  ws?.dispose()
})

describe("no full task id in the CLI's output on a store of more than 10,000 calls", () => {
  it("list, as text: the oldest rows' keys and notes are redacted like the newest", async () => {
    const ran = await ws.run("list")
    expect(ran.code, ran.stderr).toBe(0)
    const lines = ran.stdout.trimEnd().split("\n")
    // Every call was listed: the check below had the oldest rows to look at.
    expect(lines).toHaveLength(store.rows + 1)
    expect(lines[1]).toMatch(/^adopted:\S+…\S+\s+working\s/)
    expect(ran.stdout).toContain("no answer about task ")
    expectNoIds(store.ids, ran.stdout + ran.stderr, "list")
  })

  it("list --json: every field of the oldest rows is redacted", async () => {
    const ran = await ws.run("list", "--json")
    expect(ran.code, ran.stderr).toBe(0)
    const rows = JSON.parse(ran.stdout) as ReadonlyArray<{ readonly key: string }>
    expect(rows).toHaveLength(store.rows)
    expectNoIds(store.ids, ran.stdout + ran.stderr, "list --json")
    // With --reveal the ids are there: the search above would have found them.
    const revealed = await ws.run("show", store.quoted.key, "--json", "--reveal")
    expect(revealed.stdout).toContain(`done: task ${store.quoted.taskId}`)
  })

  it("show, as text and --json, and a legacy key it does not find", async () => {
    const outputs: Array<string> = []
    for (const args of [
      ["show", store.legacy.key],
      ["show", store.legacy.key, "--json"],
      ["show", store.quoted.key],
      ["show", store.quoted.key, "--json"],
      ["show", store.failed.key],
    ]) {
      const ran = await ws.run(...args)
      expect(ran.code, ran.stderr).toBe(0)
      outputs.push(ran.stdout + ran.stderr)
    }
    expect(outputs[0]).toMatch(/last problem\s+no answer about task \S+…/)
    // A key naming a task id it has no row for (another scope's, or a typo) is an error that
    // quotes it: redacted by the id's shape, since no row says it is one.
    const missing = await ws.run("show", store.legacy.key, "--scope", "elsewhere")
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("adopted:")
    outputs.push(missing.stdout + missing.stderr)
    expectNoIds(store.ids, outputs.join("\n"), "show")
  })
})
