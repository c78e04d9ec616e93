/**
 * SEP-2243 tool definitions under the client, against the fake server (issue 14, item 2): a
 * definition that must not be called is refused on every path that would send the call (a
 * reissue, a row resumed after a restart, not only the first call), and the definitions a call
 * relies on are learnt again when the server says they changed (a `-32020` header mismatch).
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Harness, makeHarness, runFor, startProcess, withStore } from "./support/harness.js"

/** A slow task tool mirroring `region` into `Mcp-Param-{header}`, or into nothing. */
const deploy = (header: string | undefined): Config.Tool => ({
  name: "deploy",
  shape: "task",
  durationMs: 1_000,
  inputSchema: {
    type: "object",
    properties: { region: { type: "string", ...(header === undefined ? {} : { "x-mcp-header": header }) } },
  },
})

/** `deploy` declared on an array: a definition no client may call. */
const invalidDeploy: Config.Tool = {
  name: "deploy",
  shape: "task",
  durationMs: 1_000,
  inputSchema: {
    type: "object",
    properties: { region: { type: "array", items: { type: "string" }, "x-mcp-header": "Region" } },
  },
}

const toolCalls = (h: Harness) => h.server.ledger.snapshot().requests.filter((r) => r.method === "tools/call")

/**
 * The same URL served first by `before`'s server and then by `after`'s: a server redeployed with
 * other tool definitions. The harness looks its server up on every request.
 */
const redeployable = (before: Harness, after: Harness) => {
  let current = before
  const harness: Harness = {
    get server() {
      return current.server
    },
    store: before.store,
  }
  return { harness, redeploy: () => (current = withStore(after, before.store)) }
}

describe("a tool whose definition became invalid", () => {
  it.effect("is refused on reissue with InvalidToolDefinition: nothing written, nothing sent", () =>
    Effect.gen(function* () {
      const first = yield* makeHarness({
        tools: [deploy(undefined)],
        faults: [{ when: { method: "tools/call", nth: 1 }, fault: { kind: "drop", phase: "after" } }],
      })
      const p = yield* startProcess(first, { background: false })
      const handle = yield* runFor(p.client.callTool("fake", "deploy", { region: "eu" }, { key: "d" }), 1_000)
      expect(handle.record.status).toBe("in_doubt")
      yield* p.close

      // Redeployed with a definition that must not be called; a new process reissues.
      const second = withStore(yield* makeHarness({ tools: [invalidDeploy] }), first.store)
      const q = yield* startProcess(second, { background: false })
      const before = yield* q.client.get("d")
      const error = yield* Effect.flip(runFor(q.client.reissue("d"), 1_000))
      expect(error._tag).toBe("InvalidToolDefinition")
      if (error._tag === "InvalidToolDefinition") expect(error.tool).toBe("deploy")
      const after = yield* q.client.get("d")
      expect(after).toEqual(before)
      expect(toolCalls(second)).toHaveLength(0)
      yield* q.close
    }),
  )

  it.effect("is not re-sent when a row is resumed after a restart: the call stays in doubt, unsent", () =>
    Effect.gen(function* () {
      const idempotent = { annotations: { idempotentHint: true } }
      const first = yield* makeHarness({ tools: [{ ...deploy(undefined), ...idempotent }] })
      // The process dies as its tools/call is about to leave: the row is pending in the store.
      const p = yield* startProcess(
        first,
        { background: false },
        { at: "fetch", method: "tools/call", phase: "before-send" },
      )
      yield* Effect.fork(p.client.callTool("fake", "deploy", { region: "eu" }, { key: "r" }))
      yield* runFor(Effect.repeat(Effect.sync(p.crashed), { until: (dead) => dead }), 1_000)
      const pending = yield* first.store.get("default", "r")
      expect(Option.map(pending, (row) => row.status)).toEqual(Option.some("pending"))

      // A new process whose policy re-sends in-doubt calls of idempotent tools: the server now
      // defines the tool in a way that must not be called.
      const second = withStore(
        yield* makeHarness({ tools: [{ ...invalidDeploy, ...idempotent }] }),
        first.store,
      )
      const q = yield* startProcess(second, { background: false, inDoubtPolicy: "reissue-if-idempotent" })
      // The sweep finds the row its dead process left pending: it may have launched.
      const report = yield* runFor(q.client.reconcile, 60_000)
      expect(report.inDoubt).toBe(1)
      expect(report.reissued).toBe(0)
      const outcome = yield* runFor(q.client.settle("r"), 5_000)
      expect(outcome._tag).toBe("InDoubt")
      expect((yield* q.client.get("r")).launches).toBe(1)
      expect(toolCalls(second)).toHaveLength(0)
      expect(second.server.ledger.snapshot().tasks).toHaveLength(0)
      yield* q.close
    }),
  )
})

describe("definitions learnt again on a header mismatch", () => {
  it.effect(
    "a server that now mirrors an argument answers -32020; the client lists again and retries once",
    () =>
      Effect.gen(function* () {
        const { harness, redeploy } = redeployable(
          yield* makeHarness({ tools: [deploy(undefined)] }),
          yield* makeHarness({ tools: [deploy("Region")] }),
        )
        // The requests are listed exactly: no listen stream among them.
        const p = yield* startProcess(harness, { background: false, push: false })
        const first = yield* runFor(
          p.client.callTool("fake", "deploy", { region: "eu" }, { key: "a" }),
          1_000,
        )
        expect((yield* runFor(first.outcome, 20_000))._tag).toBe("Completed")

        redeploy()
        const second = yield* runFor(
          p.client.callTool("fake", "deploy", { region: "eu" }, { key: "b" }),
          1_000,
        )
        expect((yield* runFor(second.outcome, 20_000))._tag).toBe("Completed")
        const requests = harness.server.ledger.snapshot().requests.map((r) => [r.method, r.errorCode])
        // The call without the header is refused (not processed), the tools listed, the call sent again.
        expect(requests.filter(([method]) => method !== "tasks/get")).toEqual([
          ["tools/call", -32020],
          ["tools/list", null],
          ["tools/call", null],
        ])
        expect(harness.server.ledger.snapshot().tasks).toHaveLength(1)
        expect((yield* p.client.get("b")).launches).toBe(1)
        yield* p.close
      }),
  )

  it.effect("a mismatch whose new definitions are invalid is not sent again", () =>
    Effect.gen(function* () {
      const { harness, redeploy } = redeployable(
        yield* makeHarness({ tools: [deploy(undefined)] }),
        // Its own declaration asks for Mcp-Param-Region: the call without it is a mismatch.
        yield* makeHarness({ tools: [invalidDeploy] }),
      )
      const p = yield* startProcess(harness, { background: false })
      const first = yield* runFor(p.client.callTool("fake", "deploy", { region: "eu" }, { key: "a" }), 1_000)
      expect((yield* runFor(first.outcome, 20_000))._tag).toBe("Completed")
      redeploy()
      const second = yield* runFor(p.client.callTool("fake", "deploy", { region: "eu" }, { key: "b" }), 1_000)
      const outcome = yield* runFor(second.outcome, 20_000)
      expect(outcome._tag).toBe("Failed")
      if (outcome._tag === "Failed") expect(outcome.error.code).toBe(-32020)
      const calls = harness.server.ledger.snapshot().requests.filter((r) => r.method === "tools/call")
      expect(calls).toHaveLength(1)
      yield* p.close
    }),
  )
})
