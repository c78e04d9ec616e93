import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as HttpWire from "../src/HttpWire.js"
import * as Envelope from "../src/internal/wire/envelope.js"
import * as Protocol from "../src/internal/wire/protocol.js"
import * as Timestamp from "../src/internal/wire/timestamp.js"
import { idempotencyKeyMeta, type ServerEndpoint } from "../src/Wire.js"
import {
  answerWith,
  endpointUrl,
  mswServer,
  recorded,
  resetRecorder,
  result,
  taskFields,
} from "./support/wire.js"

const server: ServerEndpoint = { name: "test", url: endpointUrl }

beforeAll(() => mswServer.listen({ onUnhandledRequest: "bypass" }))
afterAll(() => mswServer.close())

describe("clientCapabilities", () => {
  it("keeps every extension the caller declared, and the Tasks extension", () => {
    expect(
      Envelope.withTasksExtension({
        elicitation: {},
        extensions: { "com.example/ui": { version: 2 }, "io.modelcontextprotocol/tasks": { a: 1 } },
      }),
    ).toEqual({
      elicitation: {},
      extensions: { "com.example/ui": { version: 2 }, "io.modelcontextprotocol/tasks": { a: 1 } },
    })
    expect(Envelope.withTasksExtension({ extensions: { "com.example/ui": {} } })).toEqual({
      extensions: { "com.example/ui": {}, "io.modelcontextprotocol/tasks": {} },
    })
    expect(Envelope.withTasksExtension({ extensions: [] as never })).toEqual({
      extensions: { "io.modelcontextprotocol/tasks": {} },
    })
  })

  it.live("travel on every request", () =>
    Effect.gen(function* () {
      resetRecorder()
      answerWith((request) => result(request, {}))
      const wire = yield* HttpWire.make({
        clientCapabilities: { extensions: { "com.example/ui": { v: 1 } } },
      })
      yield* wire.cancelTask(server, "t1")
      expect(recorded[0]?.body.params._meta["io.modelcontextprotocol/clientCapabilities"]).toEqual({
        extensions: { "com.example/ui": { v: 1 }, "io.modelcontextprotocol/tasks": {} },
      })
      resetRecorder()
    }),
  )
})

describe("the idempotency key", () => {
  it("is a reverse-DNS _meta key outside the reserved prefixes", () => {
    // The schema's rules for a `_meta` key prefix: dot-separated labels, each starting with a
    // letter and ending with a letter or digit, then a slash; a second label of
    // `modelcontextprotocol` or `mcp` is reserved.
    const [prefix = "", name = ""] = idempotencyKeyMeta.split("/")
    const labels = prefix.split(".")
    for (const label of labels) expect(label).toMatch(/^[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?$/)
    expect(labels.length).toBeGreaterThan(1)
    expect(["modelcontextprotocol", "mcp"]).not.toContain(labels[1])
    expect(name).toMatch(/^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/)
  })

  it.live("travels in tools/call's _meta", () =>
    Effect.gen(function* () {
      resetRecorder()
      answerWith((request) => result(request, { content: [] }))
      const wire = yield* HttpWire.make()
      yield* wire.callTool(server, { name: "t", arguments: {}, idempotencyKey: "k-1" })
      expect(recorded[0]?.body.params._meta["io.github.mcp-handles/key"]).toBe("k-1")
      expect(recorded[0]?.body.params._meta["mcp-handles/key"]).toBeUndefined()
      resetRecorder()
    }),
  )
})

describe("ISO 8601 timestamps", () => {
  const at = Date.UTC(2026, 6, 28, 10, 30, 0)
  it.each([
    ["2026-07-28T10:30:00Z", at],
    ["2026-07-28t10:30:00z", at],
    ["2026-07-28 10:30:00Z", at],
    ["20260728T103000Z", at],
    ["20260728T103000.250Z", at + 250],
    ["2026-07-28T10:30:00,5Z", at + 500],
    ["2026-07-28T10:30Z", at],
    ["20260728T1030Z", at],
    ["2026-07-28T10Z", Date.UTC(2026, 6, 28, 10)],
    ["2026-07-28T10,5Z", at],
    ["2026-07-28T12:30:00+02:00", at],
    ["20260728T123000+0200", at],
    ["2026-07-28T12:30:00+02", at],
    ["2026-07-28T05:00:00-05:30", at],
    ["2026-07-28T10:30:00", at],
    ["2026-07-28", Date.UTC(2026, 6, 28)],
    ["20260728", Date.UTC(2026, 6, 28)],
    ["2026-209T10:30:00Z", at],
    ["2026209T103000Z", at],
    ["2026-W31-2T10:30:00Z", at],
    ["2026W312T103000Z", at],
    ["2026-W31", Date.UTC(2026, 6, 27)],
    ["2026-07-27T24:00:00Z", Date.UTC(2026, 6, 28)],
    ["2016-12-31T23:59:60Z", Date.UTC(2016, 11, 31, 23, 59, 59, 999)],
    ["2020-W53-5", Date.UTC(2021, 0, 1)],
    ["0099-01-01", new Date("0099-01-01T00:00:00Z").getTime()],
  ])("%s", (text, expected) => {
    expect(Timestamp.parse(text)).toBe(expected)
  })

  it.each([
    "yesterday",
    "",
    "2026-13-01",
    "2026-02-29",
    "2026-07-32T00:00:00Z",
    "2026-07-28T25:00:00Z",
    "2026-07-28T24:30:00Z",
    "2026-07-28T10:61:00Z",
    "2026-07-28T10:30:00+25:00",
    "2026-367",
    "2025-W53-1",
    "2026-W31-8",
    "2026-07-28T",
    "2026-07-28T10:30:00Zjunk",
    "1785234600000",
  ])("refuses %j", (text) => {
    expect(Timestamp.parse(text)).toBeUndefined()
  })

  it("every instant written as RFC 3339, in any zone and precision, reads back as itself", () => {
    const pad = (n: number, width = 2) => String(n).padStart(width, "0")
    fc.assert(
      fc.property(
        // A day's margin either side, so the local date keeps a four-digit year in every zone.
        fc.integer({ min: Date.UTC(1000, 0, 2), max: Date.UTC(9999, 11, 30, 23, 59, 59, 999) }),
        fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
        fc.constantFrom(0, 1, 3, 6, 9),
        (instant, offsetMinutes, digits) => {
          // The wall-clock time in that zone, written with that offset.
          const local = new Date(instant + offsetMinutes * 60_000)
          const ms = local.getUTCMilliseconds()
          const fraction = digits === 0 ? "" : `.${`${pad(ms, 3)}000000`.slice(0, digits)}`
          const zone =
            offsetMinutes === 0
              ? "Z"
              : `${offsetMinutes < 0 ? "-" : "+"}${pad(Math.floor(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}`
          const text = `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}${fraction}${zone}`
          const kept = digits === 0 ? 0 : ms - (ms % 10 ** (3 - Math.min(digits, 3)))
          expect(Timestamp.parse(text)).toBe(instant - ms + kept)
        },
      ),
    )
  })

  it.each(["2026-02-30T00:00:00Z", "2026-04-31T10:00:00.5+02:00", "2100-02-29T00:00:00Z"])(
    "refuses a day its month does not have: %s",
    (text) => {
      expect(Timestamp.parse(text)).toBeUndefined()
    },
  )

  it("a basic-format createdAt decodes in a tasks/get answer", () => {
    const decoded = Protocol.decodeTaskState(
      { ...taskFields("t1", { createdAt: "20260728T103000Z", lastUpdatedAt: "20260728T103100Z" }) },
      "t1",
    )
    expect(Either.isRight(decoded) && decoded.right.createdAt).toBe(at)
  })
})
