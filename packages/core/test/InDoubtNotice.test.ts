/**
 * A call in doubt is never sent again by itself, so whoever meets it must be told how to decide
 * it: calling the same key again (an application's rerun) logs one warning that names
 * `reissue(key)` and `abandon(key)` and the troubleshooting section, annotated `notice` so a
 * front end with its own words can leave it out.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { makeHarness, runFor, slowTool, startProcess } from "./support/harness.js"

const capture = () => {
  const warnings: Array<{ readonly line: string; readonly notice: unknown }> = []
  const logger = Logger.make(({ message, logLevel, annotations }) => {
    if (logLevel._tag !== "Warning") return
    const parts: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    const line = parts.map((part) => (typeof part === "string" ? part : JSON.stringify(part))).join(" ")
    warnings.push({ line, notice: Option.getOrUndefined(HashMap.get(annotations, "notice")) })
  })
  return { warnings, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("a call in doubt", () => {
  it.effect(
    "called again by its key, says how to decide it (reissue or abandon) and where to read more",
    () => {
      const logs = capture()
      return Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [slowTool()],
          faults: [{ when: { method: "tools/call", nth: 1 }, fault: { kind: "drop", phase: "after" } }],
        })
        const p = yield* startProcess(h, { background: false })
        const first = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "tides-1" }), 1_000)
        expect(first.record.status).toBe("in_doubt")
        expect(logs.warnings.filter((w) => w.notice === "in_doubt")).toEqual([])

        // The rerun: the same key attaches to the undecided call.
        const again = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "tides-1" }), 1_000)
        expect((yield* runFor(again.outcome, 1_000))._tag).toBe("InDoubt")
        const notices = logs.warnings.filter((w) => w.notice === "in_doubt")
        expect(notices).toHaveLength(1)
        const line = notices[0]?.line ?? ""
        expect(line).toContain('client.reissue("tides-1")')
        expect(line).toContain('client.abandon("tides-1")')
        expect(line).toContain("mcp-handles reissue tides-1")
        expect(line).toContain("docs/troubleshooting.md#a-call-is-in-doubt")
        // Nothing was sent again.
        expect(h.server.ledger.snapshot().tasks).toHaveLength(1)
      }).pipe(Effect.provide(logs.layer))
    },
  )
})
