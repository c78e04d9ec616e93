import * as Encryption from "@mcp-handles/core/Encryption"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describe, expect, it } from "vitest"
import { encryption } from "../src/internal/stores.js"

const key = `k1:${Buffer.alloc(32, 1).toString("base64")}`

// A client with encryption on seals each row it writes: on node:crypto, which answers at once,
// rather than on core's WebCrypto default, a thread-pool round trip per value (BENCHMARKS.md B1).
describe("the client's encryption", () => {
  it("runs its keys on node:crypto, whatever the keys come from", async () => {
    const cipherOf = (keys: Parameters<typeof encryption>[0]) =>
      Effect.runPromise(
        Effect.map(
          Encryption.Encryption.pipe(Effect.provide(Encryption.layer.pipe(Layer.provide(encryption(keys))))),
          (service) => service.cipher,
        ),
      )
    const keys: Encryption.Keys = { current: "k1", keys: new Map([["k1", new Uint8Array(32).fill(1)]]) }
    expect(await cipherOf({ keys: async () => keys })).toBe("node:crypto")
    process.env.MH_CLIENT_KEY = key
    try {
      expect(await cipherOf({ keyEnv: "MH_CLIENT_KEY" })).toBe("node:crypto")
    } finally {
      delete process.env.MH_CLIENT_KEY
    }
  })
})
