/**
 * The primitives under `Encryption`: AES-256-GCM and HMAC-SHA-256 over a key's derived bytes.
 * `Encryption` keeps the formats, the key derivation and the errors; a `Cipher` only runs the
 * two algorithms, so that a runtime with a faster implementation than WebCrypto can lend it.
 *
 * Why it is a port: on Node every WebCrypto call is a job on the libuv thread pool answered
 * through the event loop (65–280 µs for a value of a few hundred bytes), where `node:crypto`'s
 * synchronous functions take 4–18 µs. `@mcp-handles/platform-node`'s `NodeCipher` is that backend;
 * `webCrypto` below is the default, and runs wherever `crypto.subtle` exists.
 *
 * Every backend must produce the same bytes: an envelope written by one opens under the other.
 *
 * @since 0.6.0
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/**
 * A key's two working keys, as raw bytes (each 32 bytes): `encrypt` for AES-256-GCM, `index`
 * for HMAC-SHA-256 (the blind index).
 *
 * @since 0.6.0
 * @category models
 */
export interface KeyMaterial {
  readonly encrypt: Uint8Array
  readonly index: Uint8Array
}

/**
 * One key's operations. Each may answer synchronously (no fiber suspension) or with a promise.
 *
 * - `seal`: AES-256-GCM; the ciphertext followed by the 128-bit tag, as WebCrypto returns it.
 * - `open`: the inverse; throws (or rejects) when the tag does not verify, for any cause.
 * - `mac`: HMAC-SHA-256, 32 bytes.
 *
 * @since 0.6.0
 * @category models
 */
export interface CipherKey {
  readonly seal: (
    iv: Uint8Array,
    plain: Uint8Array,
    additionalData: Uint8Array | undefined,
  ) => Uint8Array | Promise<Uint8Array>
  readonly open: (
    iv: Uint8Array,
    sealed: Uint8Array,
    additionalData: Uint8Array | undefined,
  ) => Uint8Array | Promise<Uint8Array>
  readonly mac: (data: Uint8Array) => Uint8Array | Promise<Uint8Array>
}

/**
 * An implementation of the primitives: prepares a key once (imports it), then runs it.
 *
 * @since 0.6.0
 * @category models
 */
export interface Cipher {
  /** Named in diagnostics and benchmarks. */
  readonly name: string
  readonly key: (material: KeyMaterial) => Promise<CipherKey>
}

/**
 * The cipher `Encryption.layer` uses when one is in its context; WebCrypto otherwise.
 *
 * @since 0.6.0
 * @category tags
 */
export const Cipher: Context.Tag<Cipher, Cipher> = Context.GenericTag<Cipher>("@mcp-handles/core/Cipher")

const gcm = (iv: Uint8Array, additionalData: Uint8Array | undefined): AesGcmParams =>
  additionalData === undefined
    ? { name: "AES-GCM", iv: iv as BufferSource }
    : { name: "AES-GCM", iv: iv as BufferSource, additionalData: additionalData as BufferSource }

/**
 * The standard one, `crypto.subtle`: every runtime has it. Its keys are imported non-extractable.
 *
 * @since 0.6.0
 * @category constructors
 */
export const webCrypto: Cipher = {
  name: "WebCrypto",
  key: async (material) => {
    const aes = await crypto.subtle.importKey(
      "raw",
      material.encrypt as BufferSource,
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"],
    )
    const hmac = await crypto.subtle.importKey(
      "raw",
      material.index as BufferSource,
      { name: "HMAC", hash: "SHA-256", length: 256 },
      false,
      ["sign"],
    )
    return {
      seal: (iv, plain, additionalData) =>
        crypto.subtle
          .encrypt(gcm(iv, additionalData), aes, plain as BufferSource)
          .then((sealed) => new Uint8Array(sealed)),
      open: (iv, sealed, additionalData) =>
        crypto.subtle
          .decrypt(gcm(iv, additionalData), aes, sealed as BufferSource)
          .then((plain) => new Uint8Array(plain)),
      mac: (data) =>
        crypto.subtle.sign("HMAC", hmac, data as BufferSource).then((mac) => new Uint8Array(mac)),
    }
  },
}

/**
 * Makes `cipher` the one `Encryption.layer` uses.
 *
 * @since 0.6.0
 * @category layers
 */
export const layer = (cipher: Cipher): Layer.Layer<Cipher> => Layer.succeed(Cipher, cipher)
