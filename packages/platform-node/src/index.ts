/**
 * Encryption at rest on `node:crypto`: a synchronous `Cipher` for `@mcp-handles/core`'s
 * `Encryption`, byte for byte the same envelopes as WebCrypto's.
 *
 * @since 0.6.0
 * @category modules
 */
export * as NodeCipher from "./NodeCipher.js"
/**
 * The wire's requests over `node:http` / `node:https` (keep-alive agents per origin, the answer
 * read from the socket's buffers): `HttpWire.Options.request` without fetch's objects.
 *
 * @since 0.6.0
 * @category modules
 */
export * as NodeRequest from "./NodeRequest.js"
