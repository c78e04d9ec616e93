/**
 * A small seeded generator (mulberry32). Each purpose (shapes, outcomes, faults, ids) draws from its
 * own stream, so adding a fault rule does not change which calls become tasks.
 */
export interface Random {
  /** A float in [0, 1). */
  next(): number
}

export const seededRandom = (seed: number): Random => {
  let state = seed >>> 0
  return {
    next: () => {
      state = (state + 0x6d2b79f5) >>> 0
      let t = state
      t = Math.imul(t ^ (t >>> 15), t | 1)
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296
    },
  }
}

/** Derive the seed of one named stream from the configured seed. */
export const streamSeed = (seed: number, stream: string): number => {
  let hash = seed >>> 0
  for (let i = 0; i < stream.length; i++) {
    hash = Math.imul(hash ^ stream.charCodeAt(i), 0x01000193) >>> 0
  }
  return hash
}
