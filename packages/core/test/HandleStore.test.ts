import { describe, expect, it } from "@effect/vitest"
import * as Claiming from "@mcp-handles/core/Claiming"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HandleStoreDriver from "@mcp-handles/core/HandleStoreDriver"
import type { JsonObject } from "@mcp-handles/core/Json"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import fc from "fast-check"

const newHandle: fc.Arbitrary<HandleStore.NewHandle> = fc.record({
  scope: fc.string(),
  key: fc.string(),
  serverId: fc.string(),
  tool: fc.string(),
  arguments: fc.option(
    fc
      .dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 })
      .filter((args) => !JSON.stringify(args).includes('"__proto__":')) as fc.Arbitrary<JsonObject>,
    { nil: null },
  ),
  argumentsHash: fc.string(),
  owner: fc.string(),
  leaseMs: fc.integer({ min: 0, max: 1e7 }),
  now: fc.integer({ min: 0, max: 4e12 }),
})

describe("HandleStore helpers", () => {
  it.effect("initialRecord, built without validation, is always a valid pending record", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(newHandle, (handle) => {
          const record = Effect.runSync(HandleStoreDriver.initialRecord(handle))
          // The validating constructor accepts it and changes nothing.
          expect(new HandleRecord.HandleRecord({ ...record })).toEqual(record)
          expect(record.status).toBe("pending")
          expect(record.leaseOwner).toBe(handle.owner)
          expect(
            Claiming.isClaimable(record, { owner: handle.owner, now: handle.now, leaseMs: 1, limit: 1 }),
          ).toBe(true)
        }),
      ),
    ),
  )

  it.effect("arguments that are not a JSON object are a StoreError, not a defect", () =>
    Effect.gen(function* () {
      const [handle] = fc.sample(newHandle, { numRuns: 1, seed: 1 })
      const bad = { ...(handle as HandleStore.NewHandle), arguments: { f: () => 1 } as unknown as JsonObject }
      expect(yield* Effect.flip(HandleStoreDriver.initialRecord(bad))).toBeInstanceOf(HandleStore.StoreError)
    }),
  )

  it("list order is code-point order, as binary SQL collations sort", () =>
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => {
        const bytes = (s: string) => Array.from(new TextEncoder().encode(s))
        const byUtf8 = Buffer.compare(Buffer.from(bytes(a)), Buffer.from(bytes(b)))
        expect(Math.sign(HandleStoreDriver.compareCodePoints(a, b))).toBe(byUtf8)
      }),
    ))

  it("a cursor round-trips any position", () =>
    fc.assert(
      fc.property(fc.nat(), fc.string({ unit: "grapheme" }), (createdAt, key) => {
        const cursor = HandleStoreDriver.encodeCursor({ createdAt, key })
        expect(HandleStoreDriver.decodeCursor(cursor)).toEqual(Option.some({ createdAt, key }))
      }),
    ))
})
