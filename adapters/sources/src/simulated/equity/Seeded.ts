/**
 * Deterministic randomness for the simulated equity plane: one independent stream per purpose, derived from the
 * seed and a label, so adding a draw in one place never shifts the numbers anywhere else.
 */

/** A stream of uniform numbers in [0, 1) and helpers over it. */
export interface Stream {
  readonly next: () => number
  /** Uniform in [low, high). */
  readonly between: (low: number, high: number) => number
  /** Standard normal (Box-Muller). */
  readonly normal: () => number
  /** An integer in [low, high]. */
  readonly integer: (low: number, high: number) => number
}

/** FNV-1a over the label, mixed with the seed: the stream's starting state. */
const stateOf = (seed: number, label: string): number => {
  let hash = 0x811c9dc5 ^ (seed >>> 0)
  for (let i = 0; i < label.length; i++) {
    hash ^= label.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash ^ Math.imul(seed | 0, 0x9e3779b1)) >>> 0
}

/** A mulberry32 stream for `label` under `seed`. */
export const stream = (seed: number, label: string): Stream => {
  let state = stateOf(seed, label)
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    between: (low, high) => low + (high - low) * next(),
    normal: () => {
      const u = Math.max(next(), 1e-12)
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next())
    },
    integer: (low, high) => low + Math.floor(next() * (high - low + 1))
  }
}
