/**
 * B9: the counting finds each kind of loss in a made-up run, and a tiny real run (two SIGKILLs,
 * server faults on) shows mcp-handles losing nothing while the harness does catch the naive
 * client's losses: were it blind, the second assertion would fail.
 */
import type * as Ledger from "@mcp-handles/fake-server/Ledger"
import { afterEach, describe, expect, it } from "vitest"
import * as B9Count from "../src/b9-count.js"
import * as B9Harness from "../src/b9-harness.js"

const launch = (seq: number, key: string, taskId: string | null, delivered = true): Ledger.Launch => ({
  seq,
  tool: "task",
  arguments: { key, n: 1 },
  idempotencyKey: null,
  taskId,
  resultType: taskId === null ? "complete" : "task",
  at: seq,
  responseDelivered: delivered,
  fault: null,
})

const task = (taskId: string, launchSeq: number, updates: Ledger.Task["updates"] = []): Ledger.Task => ({
  taskId,
  tool: "task",
  launchSeq,
  idempotencyKey: null,
  createdAt: launchSeq,
  polls: [],
  earlyPolls: 0,
  updates,
  cancels: [],
  terminalSeenAt: null,
  terminalStatus: null,
  terminalSeenBy: null,
  lostAt: null,
  purgedAt: null,
})

describe("B9's counting", () => {
  const calls: ReadonlyArray<B9Count.Call> = ["a", "b", "c", "d"].map((key) => ({ key, tool: "task", n: 1 }))

  it("counts nothing when every call launched once and was delivered", () => {
    const ledger: Ledger.Snapshot = {
      launches: calls.map((c, i) => launch(i + 1, c.key, `t-${c.key}`)),
      tasks: calls.map((c, i) => task(`t-${c.key}`, i + 1)),
      requests: [],
      restarts: [],
    }
    const delivered = calls.map((c) => ({ key: c.key, status: "completed", taskId: `t-${c.key}` }))
    expect(B9Count.count(calls, ledger, delivered, []).losses).toEqual({
      orphaned: 0,
      launchedTwice: 0,
      answeredTwice: 0,
      neverFinished: 0,
    })
  })

  it("finds an orphaned task, a cut held answer, a double launch, a second answer and a false failure", () => {
    const ledger: Ledger.Snapshot = {
      launches: [
        // a: launched twice, the first task never read.
        launch(1, "a", "t-a1"),
        launch(2, "a", "t-a2"),
        // b: a held answer whose client went away, then launched again and delivered.
        launch(3, "b", null, false),
        launch(4, "b", null),
        // c: its question answered, then asked again; the server got the answer twice.
        launch(5, "c", "t-c"),
        // d: delivered as failed by a lost poll.
        launch(6, "d", "t-d"),
      ],
      tasks: [
        task("t-a1", 1),
        task("t-a2", 2),
        task("t-c", 5, [
          { at: 100, keys: ["name"], accepted: ["name"] },
          { at: 300, keys: ["name"], accepted: [] },
        ]),
        task("t-d", 6),
      ],
      requests: [],
      restarts: [],
    }
    const delivered: ReadonlyArray<B9Count.Delivered> = [
      { key: "a", status: "completed", taskId: "t-a2" },
      { key: "b", status: "completed", taskId: null },
      { key: "c", status: "completed", taskId: "t-c" },
      { key: "d", status: "failed", taskId: "t-d", reason: "MCP client request failed" },
    ]
    const asked: ReadonlyArray<B9Count.Asked> = [
      { key: "c", question: "name", at: 50 },
      // Asked again before the server had the answer: not counted.
      { key: "c", question: "name", at: 90 },
      { key: "c", question: "name", at: 200 },
    ]
    const counted = B9Count.count(calls, ledger, delivered, asked)
    expect(counted.losses).toEqual({ orphaned: 2, launchedTwice: 2, answeredTwice: 2, neverFinished: 1 })
    expect(counted.failureReasons).toEqual(["1× failed: MCP client request failed"])
  })
})

describe("B9, a tiny run", () => {
  // The run's processes die with the test, however it ends.
  let ended = new AbortController()
  afterEach(() => {
    ended.abort()
    ended = new AbortController()
  })

  it("mcp-handles loses nothing; the naive client's losses are found", async () => {
    // Kills that land while the calls are in flight: a `task` call sent within 600 ms of the
    // app's start is still held 600 ms in (it runs 700 ms), so the naive client's answer is cut.
    const rounds: ReadonlyArray<B9Harness.Round> = [
      { calls: [0, 1, 2].map((i) => ({ key: `k0-${i}`, tool: "task", n: i })), killAfterMs: 600 },
      {
        calls: [
          { key: "k1-0", tool: "ask", n: 10 },
          { key: "k1-1", tool: "task", n: 11 },
          { key: "k1-2", tool: "quick", n: 12 },
        ],
        killAfterMs: 600,
      },
      { calls: [], killAfterMs: null },
    ]
    const results = await B9Harness.run({
      kills: 2,
      seed: 29,
      rounds,
      kinds: ["naive", "mcp-handles"],
      signal: ended.signal,
    })
    const of = (kind: B9Count.Kind) => results.find((r) => r.kind === kind)
    const mh = of("mcp-handles")
    const naive = of("naive")
    expect(mh?.problems).toEqual([])
    expect(mh?.kills).toBe(2)
    expect(mh?.count.losses).toEqual({ orphaned: 0, launchedTwice: 0, answeredTwice: 0, neverFinished: 0 })
    expect(naive?.kills).toBe(2)
    expect(naive?.count.losses.orphaned).toBeGreaterThan(0)
    expect(naive?.count.losses.launchedTwice).toBeGreaterThan(0)
  }, 180_000)
})
