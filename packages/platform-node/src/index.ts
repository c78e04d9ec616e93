/**
 * Encryption at rest on `node:crypto`: a synchronous `Cipher` for `@mcp-handles/core`'s
 * `Encryption`, byte for byte the same envelopes as WebCrypto's.
 *
 * @since 0.6.0
 * @category modules
 */
export * as NodeCipher from "./NodeCipher.js"
