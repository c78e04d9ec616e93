/**
 * What makes a chaos sequence replay the same way every time, beyond virtual time and Effect's
 * seeded `Random`: two sources of nondeterminism outside the simulation's reach.
 *
 * - Core hashes call arguments with WebCrypto's `digest`, which answers from libuv's thread
 *   pool at a real-time moment: how far the simulation got meanwhile varied between replays. In
 *   the chaos process it answers at once, with the same digest.
 * - The memory store spreads rows over a window with `Math.random`: seeded per sequence here.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"

const subtle = globalThis.crypto.subtle
const digest = subtle.digest.bind(subtle)

const immediateDigest: SubtleCrypto["digest"] = (algorithm, data) => {
  const name = typeof algorithm === "string" ? algorithm : algorithm.name
  if (name.toUpperCase() !== "SHA-256") return digest(algorithm, data)
  const bytes =
    data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  return Promise.resolve(Uint8Array.from(createHash("sha256").update(bytes).digest()).buffer)
}

Object.defineProperty(subtle, "digest", { value: immediateDigest, configurable: true, writable: true })

/**
 * Makes `Math.random` a seeded generator (mulberry32) for the sequence about to run.
 *
 * @since 0.1.0
 */
export const seedMathRandom = (seed: number): void => {
  let state = seed >>> 0
  Math.random = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
