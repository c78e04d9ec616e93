/**
 * Encryption at rest on `node:crypto`: the `Cipher` that `@mcp-handles/core`'s `Encryption` runs
 * on Node. Its operations answer synchronously (OpenSSL on the calling thread, 6–18 µs for a
 * value of a few hundred bytes), where WebCrypto's go through the libuv thread pool and back
 * through the event loop (65–280 µs each on the same machine, BENCHMARKS.md B1).
 *
 * Same algorithms, same bytes: an envelope sealed here opens under WebCrypto and the other way
 * round, so a process may switch backends with rows already written.
 *
 * ```ts
 * import * as EncryptedStore from "@mcp-handles/core/EncryptedStore"
 * import * as Encryption from "@mcp-handles/core/Encryption"
 * import { NodeCipher } from "@mcp-handles/platform-node"
 * import { Layer } from "effect"
 *
 * const keys = Layer.merge(Encryption.layerEnv("MCP_HANDLES_KEY"), NodeCipher.layer)
 * const store = EncryptedStore.layer(SqliteStore.layer(), keys)
 * ```
 *
 * @since 0.6.0
 */
import * as crypto from "node:crypto"
import * as Cipher from "@mcp-handles/core/Cipher"
import type * as Layer from "effect/Layer"

/** GCM's tag, as WebCrypto appends it: 128 bits. */
const tagLength = 16

const key = (material: Cipher.KeyMaterial): Cipher.CipherKey => {
  const aes = crypto.createSecretKey(material.encrypt)
  const hmac = crypto.createSecretKey(material.index)
  return {
    seal: (iv, plain, additionalData) => {
      const cipher = crypto.createCipheriv("aes-256-gcm", aes, iv, { authTagLength: tagLength })
      if (additionalData !== undefined) cipher.setAAD(additionalData)
      return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()])
    },
    open: (iv, sealed, additionalData) => {
      // A value shorter than a tag is not ours; `setAuthTag` would take the short tag as given.
      if (sealed.length < tagLength) throw new Error("shorter than the authentication tag")
      const decipher = crypto.createDecipheriv("aes-256-gcm", aes, iv, { authTagLength: tagLength })
      decipher.setAuthTag(sealed.subarray(sealed.length - tagLength))
      if (additionalData !== undefined) decipher.setAAD(additionalData)
      // `final` throws when the tag does not verify: nothing decrypted is returned before it.
      const head = decipher.update(sealed.subarray(0, sealed.length - tagLength))
      return Buffer.concat([head, decipher.final()])
    },
    mac: (data) => crypto.createHmac("sha256", hmac).update(data).digest(),
  }
}

/**
 * The `node:crypto` cipher.
 *
 * @since 0.6.0
 * @category constructors
 */
export const cipher: Cipher.Cipher = {
  name: "node:crypto",
  key: async (material) => key(material),
}

/**
 * Makes `cipher` the one `Encryption.layer` (and so `EncryptedStore.layer`) uses: merge it into
 * the key provider's layer.
 *
 * @since 0.6.0
 * @category layers
 */
export const layer: Layer.Layer<Cipher.Cipher> = Cipher.layer(cipher)
