/**
 * Output a script can trust: a long `list --json` arrives whole through a pipe, and logs go to
 * stderr only, so stdout stays one JSON document even when a poll fails.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { describe, expect, it, vi } from "vitest"
import { runGroup } from "../../../scripts/testing/process-groups.mjs"
import * as Output from "../src/Output.js"
import { bin, fixture, processTestTimeout, seedCall } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout })

const fx = fixture({
  tools: [{ name: "job", shape: "task", durationMs: 300, pollIntervalMs: 50, outcome: { kind: "result" } }],
  // The first poll gets an answer that is not JSON: the client logs a warning and keeps the
  // task open.
  faults: [{ when: { method: "tasks/get", nth: 1 }, fault: { kind: "malformed-json" } }],
})

// A server without faults, whose task says a lot while it works.
const talkative = fixture({
  tools: [
    {
      name: "talky",
      shape: "task",
      durationMs: 300,
      pollIntervalMs: 50,
      workingMessage: `${"step by step, ".repeat(8)}and the last words of a long status message`,
      outcome: { kind: "result" },
    },
  ],
})

describe("piped output", () => {
  it("10,000 rows of list --json pass through cat whole", async () => {
    const dir = join(fx.ws.dir, "big")
    mkdirSync(join(dir, ".mcp-handles"), { recursive: true })
    const rows = 10_000
    await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* HandleStore.HandleStore
        yield* Effect.forEach(
          Array.from({ length: rows }, (_, i) => i),
          (i) =>
            store.insertOrGet(
              seedCall(`row-${String(i).padStart(5, "0")}`, 1_700_000_000_000 + i, {
                chapter: i,
                topic: "tides and the moon, chapter by chapter",
              }),
            ),
          { concurrency: 64, discard: true },
        )
      }).pipe(Effect.provide(SqliteStore.layer({ filename: join(dir, ".mcp-handles", "tasks.db") }))),
    )
    const ran = await runGroup(
      "bash",
      ["-o", "pipefail", "-c", `"${process.execPath}" "${bin}" list --json | cat`],
      {
        cwd: dir,
        env: fx.ws.env,
      },
    )
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stderr).toBe("")
    expect(ran.stdout.length).toBeGreaterThan(10 * 65_536)
    const listed = Schema.decodeUnknownSync(Output.List)(JSON.parse(ran.stdout))
    expect(listed).toHaveLength(rows)
    expect(listed[rows - 1]?.key).toBe(`row-${String(rows - 1).padStart(5, "0")}`)
    expect(new Set(listed.map((r) => r.server))).toEqual(new Set(["research"]))
  })

  it("a failed poll is logged on stderr; stdout is only the JSON document", async () => {
    // The failed poll is the point: no stream brings the task's end instead.
    const ran = await fx.ws.run("call", fx.server.url, "job", "--key", "p1", "--json", "--push", "off")
    expect(ran.code, ran.stderr).toBe(0)
    expect(Schema.decodeUnknownSync(Output.Call)(JSON.parse(ran.stdout))).toMatchObject({
      outcome: "Completed",
    })
    expect(ran.stdout.trimEnd().split("\n")).toHaveLength(1)
    expect(ran.stderr).toMatch(/^mcp-handles: warning: /m)
  })

  it("off a terminal, a status line keeps the server's whole message (a log must not lose it)", async () => {
    const ran = await talkative.ws.run("call", talkative.server.url, "talky", "--key", "p2")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stderr).toMatch(
      /^p2: working · "(step by step, ){8}and the last words of a long status message"$/m,
    )
  })
})
