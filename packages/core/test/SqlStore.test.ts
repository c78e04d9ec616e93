import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as SqlStore from "../src/SqlStore.js"

const columns = fc.record({
  scope: fc.jsonValue(),
  key: fc.jsonValue(),
  server_id: fc.jsonValue(),
  status: fc.jsonValue(),
  next_poll_at: fc.jsonValue(),
  lease_owner: fc.jsonValue(),
  lease_expires_at: fc.jsonValue(),
  version: fc.jsonValue(),
  created_at: fc.jsonValue(),
  settled_at: fc.jsonValue(),
})

/** What `fromColumns` promises, written the plain way: the body spread, the columns over it. */
const spread = (body: object, row: SqlStore.IndexedColumns): Record<string, unknown> => ({
  ...body,
  scope: row.scope,
  key: row.key,
  serverId: row.server_id,
  status: row.status,
  nextPollAt: row.next_poll_at,
  leaseOwner: row.lease_owner,
  leaseExpiresAt: row.lease_expires_at,
  version: row.version,
  createdAt: row.created_at,
  settledAt: row.settled_at,
})

describe("SqlStore.fromColumns", () => {
  it.prop(
    "lays the columns over a parsed body exactly as a spread would, keys in the same order",
    // Bodies as the stores get them: parsed JSON text, so `__proto__` can be an own key.
    [
      fc.dictionary(fc.oneof(fc.string(), fc.constantFrom("__proto__", "scope", "status")), fc.jsonValue()),
      columns,
    ],
    ([dictionary, row]) => {
      const body = JSON.parse(JSON.stringify(dictionary)) as object
      const fields = SqlStore.fromColumns(body, row)
      const expected = spread(body, row)
      expect(Object.getPrototypeOf(fields)).toBe(Object.prototype)
      expect(Object.keys(fields)).toEqual(Object.keys(expected))
      expect(fields).toStrictEqual(expected)
    },
  )

  it("keeps a parsed `__proto__` key a plain field: the copy's prototype is untouched", () => {
    const body = JSON.parse('{"tool": "job", "__proto__": {"taskId": "from-the-prototype"}}') as object
    const fields = SqlStore.fromColumns(body, {
      scope: "s",
      key: "k",
      server_id: "a",
      status: "working",
      next_poll_at: null,
      lease_owner: null,
      lease_expires_at: null,
      version: 1,
      created_at: 0,
      settled_at: null,
    })
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype)
    expect("taskId" in fields).toBe(false)
    expect(Object.hasOwn(fields, "__proto__")).toBe(true)
    expect(fields.tool).toBe("job")
  })
})
