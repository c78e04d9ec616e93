import { describe, expect, it } from "@effect/vitest"
import * as Cipher from "@mcp-handles/core/Cipher"
import * as Encryption from "@mcp-handles/core/Encryption"
import { NodeCipher } from "@mcp-handles/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import fc from "fast-check"

const bytes = (length: number) => fc.uint8Array({ minLength: length, maxLength: length })
const material = fc.record({ encrypt: bytes(32), index: bytes(32) })
const additionalData = fc.option(fc.uint8Array({ maxLength: 64 }), { nil: undefined })

/** Whether `run` throws or rejects. */
const refuses = async (run: () => Uint8Array | Promise<Uint8Array>): Promise<boolean> => {
  try {
    await run()
    return false
  } catch {
    return true
  }
}

describe("NodeCipher", () => {
  it("answers synchronously: no promise, so a fiber never suspends for it", async () => {
    const key = await NodeCipher.cipher.key({ encrypt: new Uint8Array(32), index: new Uint8Array(32) })
    const iv = new Uint8Array(12)
    const sealed = key.seal(iv, new Uint8Array([1, 2, 3]), undefined)
    expect(sealed).toBeInstanceOf(Uint8Array)
    expect(key.open(iv, sealed as Uint8Array, undefined)).toEqual(Buffer.from([1, 2, 3]))
    expect(key.mac(new Uint8Array([1]))).toBeInstanceOf(Uint8Array)
  })

  it("gives WebCrypto's bytes, and each opens what the other sealed, for any key, IV, value and context", () =>
    fc.assert(
      fc.asyncProperty(
        material,
        bytes(12),
        fc.uint8Array({ maxLength: 2048 }),
        additionalData,
        async (keys, iv, plain, context) => {
          const node = await NodeCipher.cipher.key(keys)
          const web = await Cipher.webCrypto.key(keys)
          const sealed = await node.seal(iv, plain, context)
          expect(Buffer.from(sealed)).toEqual(Buffer.from(await web.seal(iv, plain, context)))
          expect(Buffer.from(await web.open(iv, sealed, context))).toEqual(Buffer.from(plain))
          expect(Buffer.from(await node.open(iv, sealed, context))).toEqual(Buffer.from(plain))
          expect(Buffer.from(await node.mac(plain))).toEqual(Buffer.from(await web.mac(plain)))
        },
      ),
      { numRuns: 200 },
    ))

  it("refuses, as WebCrypto does, a flipped bit, another context, another key or a short value", () =>
    fc.assert(
      fc.asyncProperty(
        material,
        material,
        bytes(12),
        fc.uint8Array({ maxLength: 256 }),
        additionalData,
        fc.nat(),
        async (keys, other, iv, plain, context, at) => {
          const node = await NodeCipher.cipher.key(keys)
          const web = await Cipher.webCrypto.key(keys)
          const sealed = await node.seal(iv, plain, context)
          const flipped = Uint8Array.from(sealed)
          flipped[at % flipped.length] = (flipped[at % flipped.length] ?? 0) ^ 1
          // GCM reads no additional data and empty additional data alike: another context differs
          // in content.
          const elsewhere = Uint8Array.from([...(context ?? []), 0])
          const stranger = await NodeCipher.cipher.key(other)
          const cases: Array<[string, (key: Cipher.CipherKey) => Uint8Array | Promise<Uint8Array>]> = [
            ["flipped", (key) => key.open(iv, flipped, context)],
            ["context", (key) => key.open(iv, sealed, elsewhere)],
            ["short", (key) => key.open(iv, sealed.subarray(0, 15), context)],
          ]
          for (const [, open] of cases) {
            expect(await refuses(() => open(node))).toBe(true)
            expect(await refuses(() => open(web))).toBe(true)
          }
          const sameKey = Buffer.from(keys.encrypt).equals(Buffer.from(other.encrypt))
          expect(await refuses(() => stranger.open(iv, sealed, context))).toBe(!sameKey)
        },
      ),
      { numRuns: 100 },
    ))
})

const keys = (current: string, ...ids: Array<[string, number]>): Encryption.Keys => ({
  current,
  keys: new Map(ids.map(([id, fill]) => [id, new Uint8Array(32).fill(fill)])),
})

describe("Encryption on NodeCipher", () => {
  it.effect("seals task ids and blind indexes as WebCrypto does; envelopes open either way", () =>
    Effect.gen(function* () {
      const node = yield* Encryption.make(keys("k1", ["k1", 1]), NodeCipher.cipher)
      const web = yield* Encryption.make(keys("k1", ["k1", 1]))
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.string({ unit: "grapheme", minLength: 1 }), fc.json(), async (id, json) => {
            const run = Effect.runPromise
            expect(await run(node.encryptTaskId(id))).toBe(await run(web.encryptTaskId(id)))
            expect(await run(node.blindIndex(id))).toBe(await run(web.blindIndex(id)))
            const context = `row:${id}|field:result`
            const fromNode = await run(node.encryptJson(JSON.parse(json), context))
            const fromWeb = await run(web.encryptJson(JSON.parse(json), context))
            expect(await run(web.decryptJson(fromNode, context))).toEqual(JSON.parse(json))
            expect(await run(node.decryptJson(fromWeb, context))).toEqual(JSON.parse(json))
          }),
          { numRuns: 100 },
        ),
      )
    }),
  )

  it.effect(
    "the same typed errors as WebCrypto: MissingKey naming the key, DecryptFailed for a tampered or moved value",
    () =>
      Effect.gen(function* () {
        for (const cipher of [NodeCipher.cipher, Cipher.webCrypto]) {
          const writer = yield* Encryption.make(keys("old", ["old", 3]), cipher)
          const reader = yield* Encryption.make(keys("new", ["new", 4]), cipher)
          const sealed = yield* writer.encryptJson({ a: 1 }, "row:1|field:result")
          expect(yield* Effect.flip(reader.decryptJson(sealed, "row:1|field:result"))).toMatchObject({
            _tag: "MissingKey",
            keyId: "old",
          })
          const moved = yield* Effect.flip(writer.decryptJson(sealed, "row:2|field:result"))
          expect(moved).toMatchObject({ _tag: "DecryptFailed", keyId: "old" })
          expect(moved.message).toContain("copied from another row or field")
          const last = sealed.at(-2) === "A" ? "B" : "A"
          const tampered = `${sealed.slice(0, -2)}${last}${sealed.slice(-1)}`
          expect(yield* Effect.flip(writer.decryptJson(tampered, "row:1|field:result"))).toMatchObject({
            _tag: "DecryptFailed",
            keyId: "old",
          })
          const id = yield* writer.encryptTaskId("t-1")
          expect(yield* Effect.flip(reader.decryptTaskId(id))).toMatchObject({
            _tag: "MissingKey",
            keyId: "old",
          })
        }
      }),
  )

  it.effect("Encryption.layer runs on NodeCipher when its layer is merged into the keys'", () =>
    Effect.gen(function* () {
      let keyed = 0
      const counting: Cipher.Cipher = {
        name: "counting",
        key: (material) => {
          keyed++
          return NodeCipher.cipher.key(material)
        },
      }
      const enc = yield* Encryption.Encryption.pipe(
        Effect.provide(
          Encryption.layer.pipe(
            Layer.provide(
              Layer.merge(Encryption.layerKeys(keys("k1", ["k1", 1], ["k0", 0])), Cipher.layer(counting)),
            ),
          ),
        ),
      )
      expect(keyed).toBe(2)
      expect(yield* enc.decryptString(yield* enc.encryptString("x", "c"), "c")).toBe("x")
      const plain = yield* Encryption.Encryption.pipe(
        Effect.provide(
          Encryption.layer.pipe(
            Layer.provide(NodeCipher.layer.pipe(Layer.merge(Encryption.layerKeys(keys("k1", ["k1", 1]))))),
          ),
        ),
      )
      expect(plain.cipher).toBe("node:crypto")
    }),
  )
})
