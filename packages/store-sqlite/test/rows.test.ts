import { describe, expect, it } from "@effect/vitest"
import { initialRecord as coreInitialRecord, type NewHandle, StoreError } from "@mcp-handles/core/HandleStore"
import type { JsonObject } from "@mcp-handles/core/Json"
import * as Effect from "effect/Effect"
import fc from "fast-check"
import * as Rows from "../src/internal/rows.js"

const newHandle: fc.Arbitrary<NewHandle> = fc.record({
  scope: fc.string(),
  key: fc.string(),
  serverId: fc.string(),
  tool: fc.string(),
  arguments: fc.option(
    fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }) as fc.Arbitrary<JsonObject>,
    { nil: null },
  ),
  argumentsHash: fc.string(),
  owner: fc.string(),
  leaseMs: fc.integer({ min: 0, max: 1e7 }),
  now: fc.integer({ min: 0, max: 4e12 }),
})

describe("rows", () => {
  it.effect("the fast initial record is exactly core's initialRecord", () =>
    Effect.gen(function* () {
      for (const handle of fc.sample(newHandle, { numRuns: 200, seed: 7 })) {
        expect(yield* Rows.initialRecord(handle)).toEqual(coreInitialRecord(handle))
      }
    }),
  )

  it.effect("arguments that are not a JSON object are a StoreError, not a defect", () =>
    Effect.gen(function* () {
      const [handle] = fc.sample(newHandle, { numRuns: 1, seed: 1 })
      const bad = {
        ...(handle as NewHandle),
        arguments: { f: (() => 1) as unknown } as unknown as JsonObject,
      }
      expect(yield* Effect.flip(Rows.initialRecord(bad))).toBeInstanceOf(StoreError)
    }),
  )
})
