import { describe, expect, it } from "@effect/vitest"
import * as Encryption from "@mcp-handles/core/Encryption"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"

const key = (fill: number) => new Uint8Array(32).fill(fill)
const keys = (current: string, ...ids: Array<[string, number]>): Encryption.Keys => ({
  current,
  keys: new Map(ids.map(([id, fill]) => [id, key(fill)])),
})
const b64 = (fill: number) => btoa(String.fromCharCode(...key(fill)))

describe("Encryption", () => {
  it.effect("opens values written before the cipher was a port, and seals task ids as it did", () =>
    Effect.gen(function* () {
      // Written by 85611b9's Encryption (WebCrypto deriveKey) under this key: the raw subkeys that
      // `Cipher` backends receive must be the bytes deriveKey imported, or stored rows would not open.
      const material = new Uint8Array(32).map((_, i) => i * 7 + 3)
      const enc = yield* Encryption.make({ current: "kat", keys: new Map([["kat", material]]) })
      expect(
        yield* enc.decryptJson(
          "mhe2.kat.ts6jZvkEZ_Mj0A4U.lWnxbASXNrNYCjmDEVHHlZjzRwvGDY9KojOEV2jW4RBwuExTEsa69t7y0y7J_A",
          "row:a|field:arguments",
        ),
      ).toEqual({ secret: "hunter2", n: [1, 2] })
      expect(
        yield* enc.decryptString("mhe1.kat.HvXC2wxrLjEtMB6w.zOjwiO8V6RRlsyrUvEZdsPHyTIz_8lr5CcGKcg"),
      ).toBe("é ✓ plain")
      expect(yield* enc.encryptTaskId("task-0123456789")).toBe(
        "mhi1.kat.5IOrWX3h9yySgo50WzVKuNCrhxw2qfu4vjylzrvfdgs.9mqdLiKVcnSe7ncSenl8k5Utg2JfmjAcyeAcCwyxYg",
      )
      expect(yield* enc.blindIndex("task-0123456789")).toBe("5IOrWX3h9yySgo50WzVKuNCrhxw2qfu4vjylzrvfdgs")
    }),
  )

  it.effect("round-trips strings and JSON; every envelope is fresh and names its key", () =>
    Effect.gen(function* () {
      const enc = yield* Encryption.make(keys("k1", ["k1", 1]))
      const a = yield* enc.encryptJson({ secret: "hunter2", n: [1, 2] })
      const b = yield* enc.encryptJson({ secret: "hunter2", n: [1, 2] })
      expect(a).not.toEqual(b)
      expect(a).not.toContain("hunter2")
      expect(a.startsWith("mhe1.k1.")).toBe(true)
      expect(yield* enc.decryptJson(a)).toEqual({ secret: "hunter2", n: [1, 2] })
      expect(yield* enc.decryptString(yield* enc.encryptString("é ✓"))).toBe("é ✓")
    }),
  )

  it.effect(
    "a task id seals the same way every time under one key (the blind index), differently under another",
    () =>
      Effect.gen(function* () {
        const one = yield* Encryption.make(keys("k1", ["k1", 1]))
        const two = yield* Encryption.make(keys("k2", ["k2", 2], ["k1", 1]))
        const sealed = yield* one.encryptTaskId("task-123")
        expect(yield* one.encryptTaskId("task-123")).toBe(sealed)
        expect(yield* one.encryptTaskId("task-124")).not.toBe(sealed)
        expect(sealed).not.toContain("task-123")
        expect(yield* one.decryptTaskId(sealed)).toBe("task-123")
        // The rotated process reads the old key's ids and writes under its newest key.
        expect(yield* two.decryptTaskId(sealed)).toBe("task-123")
        expect((yield* two.encryptTaskId("task-123")).startsWith("mhi1.k2.")).toBe(true)
      }),
  )

  it.effect(
    "a value under a key this process lacks is MissingKey naming it; a tampered one DecryptFailed",
    () =>
      Effect.gen(function* () {
        const writer = yield* Encryption.make(keys("old", ["old", 3]))
        const reader = yield* Encryption.make(keys("new", ["new", 4]))
        const sealed = yield* writer.encryptJson({ a: 1 })
        const missing = yield* Effect.flip(reader.decryptJson(sealed))
        expect(missing).toBeInstanceOf(Encryption.MissingKey)
        expect(missing).toMatchObject({ _tag: "MissingKey", keyId: "old" })
        const id = yield* Effect.flip(reader.decryptTaskId(yield* writer.encryptTaskId("t")))
        expect(id).toMatchObject({ _tag: "MissingKey", keyId: "old" })
        const last = sealed.at(-2) === "A" ? "B" : "A"
        const tampered = `${sealed.slice(0, -2)}${last}${sealed.slice(-1)}`
        expect(yield* Effect.flip(writer.decryptJson(tampered))).toMatchObject({
          _tag: "DecryptFailed",
          keyId: "old",
        })
      }),
  )

  it.effect(
    "keys from an environment variable, newest first; malformed keys are InvalidKeys without the key",
    () =>
      Effect.gen(function* () {
        const value = `k2:${b64(2)},k1:${b64(1)}`
        const enc = yield* Encryption.Encryption.pipe(
          Effect.provide(Encryption.layer.pipe(Layer.provide(Encryption.layerEnv("MH_KEY")))),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["MH_KEY", value]]))),
        )
        expect(enc.currentKeyId).toBe("k2")
        expect(enc.hasKey("k1")).toBe(true)
        const short = yield* Effect.either(Encryption.parseKeys("k1:c2hvcnQ="))
        expect(Either.isLeft(short) && short.left.message).toContain("32 bytes")
        expect(Either.isLeft(short) && short.left.message).not.toContain("c2hvcnQ")
        const unset = yield* Effect.either(
          Encryption.Encryption.pipe(
            Effect.provide(Encryption.layer.pipe(Layer.provide(Encryption.layerEnv("MH_NONE")))),
            Effect.withConfigProvider(ConfigProvider.fromMap(new Map())),
          ),
        )
        expect(Either.isLeft(unset) && unset.left.message).toContain("MH_NONE")
      }),
  )

  it.effect("keys from an async callback (a KMS)", () =>
    Effect.gen(function* () {
      const enc = yield* Encryption.Encryption.pipe(
        Effect.provide(
          Encryption.layer.pipe(Layer.provide(Encryption.layerCallback(async () => keys("kms", ["kms", 9])))),
        ),
      )
      expect(enc.currentKeyId).toBe("kms")
    }),
  )
})
