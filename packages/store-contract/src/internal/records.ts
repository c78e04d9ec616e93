/**
 * Arbitrary records: every field of a row populated with unicode, nested and large values.
 *
 * @internal
 */
import {
  CancelIntent,
  InputAnswer,
  RpcError,
  type Status,
  Status as StatusSchema,
  TaskSnapshot,
} from "@mcp-handles/core/HandleRecord"
import type { JsonObject } from "@mcp-handles/core/Json"
import fc from "fast-check"

const jsonObject = fc.dictionary(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.jsonValue({ maxDepth: 3 }),
  {
    maxKeys: 6,
  },
) as fc.Arbitrary<JsonObject>

const statuses: ReadonlyArray<Status> = StatusSchema.literals

/** Every field populated with arbitrary (unicode, nested, large) values. */
export const fullRecordFields = fc.record({
  tool: fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
  arguments: fc.option(jsonObject, { nil: null }),
  taskId: fc.option(fc.string({ unit: "grapheme", minLength: 1, maxLength: 80 }), { nil: null }),
  status: fc.constantFrom(...statuses),
  snapshot: fc.option(
    fc
      .record({
        statusMessage: fc.option(fc.string({ unit: "grapheme" }), { nil: undefined }),
        pollIntervalMs: fc.option(fc.integer({ min: 0, max: 10_000_000 }), { nil: undefined }),
        ttlMs: fc.option(fc.integer({ min: 0, max: 1e9 }), { nil: null }),
        createdAt: fc.integer({ min: 0, max: 4e12 }),
        lastUpdatedAt: fc.integer({ min: 0, max: 4e12 }),
        receivedAt: fc.integer({ min: 0, max: 4e12 }),
      })
      .map(({ statusMessage, pollIntervalMs, ...rest }) =>
        TaskSnapshot.make({
          ...rest,
          ...(statusMessage === undefined ? {} : { statusMessage }),
          ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
        }),
      ),
    { nil: null },
  ),
  result: fc.option(jsonObject, { nil: null }),
  error: fc.option(
    fc
      .record({ code: fc.integer({ min: -33000, max: 0 }), message: fc.string({ unit: "grapheme" }) })
      .map((e) => RpcError.make(e)),
    { nil: null },
  ),
  inputRequests: fc.option(jsonObject, { nil: null }),
  answers: fc.dictionary(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 10 }),
    fc
      .record({ response: fc.jsonValue({ maxDepth: 2 }), acknowledged: fc.boolean() })
      .map((a) => InputAnswer.make(a as InputAnswer)),
    { maxKeys: 4 },
  ),
  stuckSince: fc.option(fc.integer({ min: 0, max: 4e12 }), { nil: null }),
  cancel: fc.option(
    fc
      .record({ requestedAt: fc.integer({ min: 0, max: 4e12 }), sent: fc.boolean() })
      .map((c) => CancelIntent.make(c)),
    { nil: null },
  ),
  nextPollAt: fc.option(fc.integer({ min: 0, max: 4e12 }), { nil: null }),
  attempts: fc.nat(1000),
  pollsWithoutInterval: fc.nat(1000),
  launches: fc.integer({ min: 1, max: 5 }),
  polls: fc.nat(100_000),
  lastProblem: fc.option(fc.string({ unit: "grapheme" }), { nil: null }),
  settledAt: fc.option(fc.integer({ min: 0, max: 4e12 }), { nil: null }),
})
