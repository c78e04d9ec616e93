/**
 * Each fleet check flags a hand-built state that breaks it, and passes its lawful neighbour.
 */
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as Ledger from "@mcp-handles/fake-server/Ledger"
import { describe, expect, it } from "vitest"
import {
  type Ask,
  cancelsSent,
  deliveryGraceMs,
  doubleLaunches,
  emptyTerminalMemory,
  inputOnce,
  orphans,
  pollDiscipline,
  sharedTaskIds,
  terminalFinal,
} from "../src/FleetCheck.js"
import { violations } from "../src/Model.js"

const row = (fields: Partial<HandleRecord.HandleRecord> & { key: string }): HandleRecord.HandleRecord =>
  ({
    scope: "default",
    serverId: "s",
    tool: "task",
    arguments: {},
    argumentsHash: "h",
    taskId: null,
    status: "working",
    snapshot: null,
    result: null,
    error: null,
    inputRequests: null,
    answers: {},
    stuckSince: null,
    cancel: null,
    nextPollAt: null,
    attempts: 0,
    pollsWithoutInterval: 0,
    launches: 1,
    lastProblem: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    version: 1,
    createdAt: 0,
    updatedAt: 0,
    settledAt: null,
    ...fields,
  }) as HandleRecord.HandleRecord

const task = (taskId: string, key: string, fields: Partial<Ledger.Task> = {}): Ledger.Task => ({
  taskId,
  tool: "task",
  launchSeq: 1,
  idempotencyKey: key,
  createdAt: 0,
  polls: [],
  earlyPolls: 0,
  updates: [],
  cancels: [],
  terminalSeenAt: null,
  terminalStatus: null,
  terminalSeenBy: null,
  lostAt: null,
  purgedAt: null,
  ...fields,
})

const launch = (seq: number, key: string, taskId: string | null): Ledger.Launch => ({
  seq,
  tool: "task",
  arguments: {},
  idempotencyKey: key,
  taskId,
  resultType: taskId === null ? "complete" : "task",
  at: 0,
  responseDelivered: true,
  fault: null,
})

const request = (
  method: string,
  startedAt: number,
  endedAt: number,
  fields: Partial<Ledger.Request> = {},
): Ledger.Request => ({
  seq: 1,
  at: startedAt,
  startedAt,
  endedAt,
  method,
  tool: null,
  taskId: null,
  idempotencyKey: null,
  client: "a",
  httpStatus: 200,
  outcome: "result",
  errorCode: null,
  fault: null,
  ...fields,
})

const ledger = (fields: Partial<Ledger.Snapshot>): Ledger.Snapshot => ({
  launches: [],
  tasks: [],
  requests: [],
  restarts: [],
  ...fields,
})

const nothingSeen = { now: 10_000, delivered: new Map(), final: false }

describe("fleet checks", () => {
  describe("no orphan, per task", () => {
    // The reproduced orphan of the engine issue: a call in doubt after its call timeout, reissued;
    // the first answer arrives late and is dropped. Two server tasks, one recorded.
    const state = {
      ledger: ledger({
        launches: [launch(1, "k", "t1"), launch(2, "k", "t2")],
        tasks: [task("t1", "k"), task("t2", "k", { launchSeq: 2 })],
      }),
      rows: [row({ key: "k", taskId: "t2", launches: 2 })],
    }
    const lateAnswer = { at: 5_000, client: "node-0#1", alive: true }

    it("the old count-based checker saw no violation", () => {
      expect(violations({ keys: new Map() }, state.ledger, state.rows)).toEqual([])
    })

    it("flags a task id that reached a live client and was neither recorded nor cancelled", () => {
      const found = orphans(state.ledger, state.rows, {
        ...nothingSeen,
        delivered: new Map([["t1", lateAnswer]]),
      })
      expect(found).toEqual([expect.stringContaining("task …t1 of k reached node-0#1")])
    })

    it("gives the write a moment, and excuses a process that died holding it", () => {
      const delivered = new Map([["t1", { ...lateAnswer, at: 10_000 - deliveryGraceMs + 1 }]])
      expect(orphans(state.ledger, state.rows, { ...nothingSeen, delivered })).toEqual([])
      const died = new Map([["t1", { ...lateAnswer, alive: false }]])
      // The reissue's own launch covers the one the process took with it.
      expect(orphans(state.ledger, state.rows, { ...nothingSeen, delivered: died })).toEqual([])
    })

    it("a task the client cancelled is not an orphan", () => {
      const cancelled = ledger({
        ...state.ledger,
        tasks: [task("t1", "k", { cancels: [6_000] }), task("t2", "k")],
      })
      expect(
        orphans(cancelled, state.rows, { ...nothingSeen, delivered: new Map([["t1", lateAnswer]]) }),
      ).toEqual([])
    })

    it("an in-doubt row covers exactly one unrecorded launch, not two", () => {
      const rows = [row({ key: "k", status: "in_doubt" })]
      const one = ledger({ tasks: [task("t1", "k")] })
      const two = ledger({ tasks: [task("t1", "k"), task("t2", "k")] })
      expect(orphans(one, rows, nothingSeen)).toEqual([])
      expect(orphans(two, rows, nothingSeen)).toEqual([expect.stringContaining("covers 1")])
      // The old checker let an in-doubt row cover any number.
      expect(violations({ keys: new Map() }, two, rows).filter((v) => v.includes("orphan"))).toEqual([])
    })

    it("a settled row without a task id covers nothing", () => {
      const rows = [row({ key: "k", status: "failed" })]
      expect(orphans(ledger({ tasks: [task("t1", "k")] }), rows, nothingSeen)).toEqual([
        expect.stringContaining("covers 0"),
      ])
    })
  })

  describe("no double launch", () => {
    it("flags more launches than the row's launches", () => {
      const found = doubleLaunches(
        ledger({ launches: [launch(1, "k", "t1"), launch(2, "k", "t2")] }),
        [row({ key: "k", taskId: "t1" })],
        { gone: new Map() },
      )
      expect(found).toEqual([expect.stringContaining("launched 2×")])
    })

    it("flags two tools/call of one key in flight at once, even when only one launched", () => {
      const requests = [
        request("tools/call", 0, 3_000, { idempotencyKey: "k", client: "a" }),
        request("tools/call", 2_000, 2_000, { idempotencyKey: "k", client: "b" }),
      ]
      expect(doubleLaunches(ledger({ requests }), [row({ key: "k" })], { gone: new Map() })).toEqual([
        expect.stringContaining("in flight at once"),
      ])
      // A request left in the network by a process that has since died is nobody's to stop.
      expect(
        doubleLaunches(ledger({ requests }), [row({ key: "k" })], { gone: new Map([["a", 1_500]]) }),
      ).toEqual([])
      const oneAfterTheOther = [
        requests[0] as Ledger.Request,
        { ...(requests[1] as Ledger.Request), startedAt: 3_000 },
      ]
      expect(
        doubleLaunches(ledger({ requests: oneAfterTheOther }), [row({ key: "k" })], { gone: new Map() }),
      ).toEqual([])
    })
  })

  it("one row per task id", () => {
    expect(sharedTaskIds([row({ key: "a", taskId: "t" }), row({ key: "b", taskId: "t" })])).toEqual([
      expect.stringContaining("held by a, b"),
    ])
  })

  describe("poll discipline across instances", () => {
    const seen = { garbledCreates: new Set<string>(), lostPollAnswers: new Set<string>(), gone: new Map() }
    it("flags two instances polling one task at once", () => {
      const requests = [
        request("tasks/get", 1_000, 4_000, { taskId: "t1", client: "a" }),
        request("tasks/get", 3_500, 3_500, { taskId: "t1", client: "b" }),
      ]
      expect(pollDiscipline(ledger({ requests }), seen)).toEqual([
        expect.stringContaining("polled twice at once"),
      ])
    })

    it("flags a poll sooner than the task's interval, whoever sent it", () => {
      const tasks = [task("t1", "k", { polls: [1_000, 1_400], earlyPolls: 1 })]
      expect(pollDiscipline(ledger({ tasks }), seen)).toEqual([expect.stringContaining("polled early")])
    })
  })

  describe("input once", () => {
    const ask = (fields: Partial<Ask>): Ask => ({
      key: "k",
      inputKey: "name",
      client: "a",
      at: 0,
      endedAt: undefined,
      diedAt: undefined,
      alreadyAnswered: false,
      ...fields,
    })

    it("flags a second instance asking while the first still asks", () => {
      const asks = [ask({ at: 1_000, endedAt: 9_000 }), ask({ client: "b", at: 5_000, endedAt: 6_000 })]
      expect(inputOnce(ledger({}), { asks })).toEqual([expect.stringContaining("while a was still asking")])
    })

    it("allows asking again after the first handler failed or its process died", () => {
      const failed = [ask({ at: 1_000, endedAt: 2_000 }), ask({ client: "b", at: 5_000 })]
      const died = [ask({ at: 1_000, diedAt: 3_000 }), ask({ client: "b", at: 5_000 })]
      expect(inputOnce(ledger({}), { asks: failed })).toEqual([])
      expect(inputOnce(ledger({}), { asks: died })).toEqual([])
    })

    it("flags asking once the answer is stored", () => {
      expect(inputOnce(ledger({}), { asks: [ask({ alreadyAnswered: true })] })).toEqual([
        expect.stringContaining("already stored"),
      ])
    })

    it("flags an answer sent again after the server accepted it", () => {
      const updates = [
        { at: 1_000, keys: ["name"], accepted: ["name"] },
        { at: 2_000, keys: ["name"], accepted: [] },
      ]
      expect(inputOnce(ledger({ tasks: [task("t1", "k", { updates })] }), { asks: [] })).toEqual([
        expect.stringContaining("answered again"),
      ])
    })

    it("excuses an update a dead client left in the network, but not one from a live client", () => {
      const updates = [
        { at: 3_000, keys: ["name"], accepted: ["name"] },
        { at: 4_500, keys: ["name"], accepted: [] },
      ]
      const requests = [
        request("tasks/update", 3_000, 3_000, { taskId: "t1", client: "b" }),
        request("tasks/update", 1_500, 4_500, { taskId: "t1", client: "a" }),
      ]
      const state = ledger({ tasks: [task("t1", "k", { updates })], requests })
      expect(inputOnce(state, { asks: [], gone: new Map([["a", 2_000]]) })).toEqual([])
      expect(inputOnce(state, { asks: [], gone: new Map() })).toEqual([
        expect.stringContaining("answered again"),
      ])
    })
  })

  describe("a requested cancel reaches the server", () => {
    const state = ledger({ tasks: [task("t1", "k", { createdAt: 0 })] })
    const rows = [row({ key: "k", taskId: "t1", status: "completed" })]
    const cancels = [{ key: "k", at: 1_000, how: "cancel" as const }]

    it("flags a cancel of a running task that never sent tasks/cancel, at the end", () => {
      expect(cancelsSent(state, rows, { cancels, delivered: new Map(), final: true })).toEqual([
        expect.stringContaining("never got tasks/cancel"),
      ])
      expect(cancelsSent(state, rows, { cancels, delivered: new Map(), final: false })).toEqual([])
    })

    it("accepts a poll already on its way when the cancel came, not one sent after it", () => {
      const polled = (startedAt: number) =>
        ledger({
          tasks: [task("t1", "k", { createdAt: 0, terminalSeenAt: 2_500, terminalStatus: "completed" })],
          requests: [request("tasks/get", startedAt, 2_500, { taskId: "t1", at: 2_500 })],
        })
      expect(cancelsSent(polled(900), rows, { cancels, delivered: new Map(), final: true })).toEqual([])
      expect(cancelsSent(polled(1_100), rows, { cancels, delivered: new Map(), final: true })).toEqual([
        expect.stringContaining("never got tasks/cancel"),
      ])
    })

    it("holds a live process to an id it was handed, not one that died before writing it", () => {
      // The id's first write failed; the cancel was asked for; the holder died before the retry.
      const unrecorded = [row({ key: "k", status: "in_doubt" })]
      const handed = (alive: boolean) => new Map([["t1", { at: 0, client: "node-0#1", alive }]])
      expect(cancelsSent(state, unrecorded, { cancels, delivered: handed(true), final: true })).toEqual([
        expect.stringContaining("never got tasks/cancel (row in_doubt)"),
      ])
      expect(cancelsSent(state, unrecorded, { cancels, delivered: handed(false), final: true })).toEqual([])
    })

    it("accepts a task that ended on its own before the cancel", () => {
      const late = [{ ...cancels[0], at: 3_000 } as (typeof cancels)[number]]
      expect(cancelsSent(state, rows, { cancels: late, delivered: new Map(), final: true })).toEqual([])
    })
  })

  describe("terminal is final, and every settle agrees", () => {
    it("flags a rested row that changes, and a settle that saw something else", () => {
      const memory = emptyTerminalMemory()
      const done = row({ key: "k", status: "failed", error: { code: 1, message: "x" } as never })
      expect(terminalFinal(memory, ledger({}), [done])).toEqual([])
      memory.settles.set("k", ['{"_tag":"Completed"}'])
      const changed = row({ key: "k", status: "completed", result: { content: [] } })
      const found = terminalFinal(memory, ledger({}), [changed])
      expect(found).toEqual([
        expect.stringContaining("changed from"),
        expect.stringContaining("settle agrees"),
      ])
    })
  })
})
