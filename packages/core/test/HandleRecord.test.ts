/**
 * Records keep V8's fast properties (issue 32: B1 with encryption on; issue 29: CPU per poll).
 * A class of 30 fields filled by `Object.assign` fell into dictionary mode, where each of the
 * several copies per poll cost four times as much. Whichever way a record is made (checked,
 * unchecked, decoded from a row, copied by a transition), it must stay fast.
 */
import * as v8 from "node:v8"
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { HandleRecord, HistoryEntry, withHistoryEntry, withTransition } from "../src/HandleRecord.js"

v8.setFlagsFromString("--allow-natives-syntax")
// Compiled after the flag is set, so that V8 parses the intrinsic.
const hasFastProperties = new Function("o", "return %HasFastProperties(o)") as (o: object) => boolean

const fields = {
  scope: "s",
  key: "k",
  serverId: "server",
  tool: "slow",
  arguments: { a: 1 },
  argumentsHash: "hash",
  taskId: "t-1",
  status: "working",
  snapshot: null,
  result: null,
  error: null,
  inputRequests: null,
  answers: {},
  stuckSince: null,
  cancel: null,
  nextPollAt: 1_000,
  attempts: 0,
  pollsWithoutInterval: 0,
  launches: 1,
  lastProblem: null,
  leaseOwner: "a",
  leaseExpiresAt: 2_000,
  version: 3,
  createdAt: 0,
  updatedAt: 10,
  settledAt: null,
} as const

describe("HandleRecord", () => {
  const checked = HandleRecord.make(fields)

  it("is made with fast properties, checked or not", () => {
    expect(hasFastProperties(checked)).toBe(true)
    expect(hasFastProperties(new HandleRecord({ ...checked, version: 4 }, true))).toBe(true)
  })

  it("is decoded from a row with fast properties", () => {
    const encoded = Schema.encodeSync(HandleRecord)(checked)
    const decoded = Schema.decodeUnknownSync(HandleRecord)(JSON.parse(JSON.stringify(encoded)))
    expect(hasFastProperties(decoded)).toBe(true)
    expect(Schema.encodeSync(HandleRecord)(decoded)).toEqual(encoded)
  })

  it("keeps fast properties through a transition and a history note", () => {
    const next = withTransition(checked, new HandleRecord({ ...checked, status: "completed" }, true), {
      at: 20,
      cause: "Polled",
      instance: "a",
    })
    const noted = withHistoryEntry(
      next,
      new HistoryEntry({ at: 30, from: "completed", to: "completed", cause: "ui:me", instance: null }),
    )
    expect(hasFastProperties(next)).toBe(true)
    expect(hasFastProperties(noted)).toBe(true)
  })

  it("keeps its fields in declaration order, each once", () => {
    expect(Object.keys(checked)).toEqual(Object.keys(HandleRecord.fields))
  })
})
