/**
 * A small seeded pseudo-random generator for the simulated market: sfc32 (Chris Doty-Humphrey's Small Fast
 * Counting generator, 128-bit state, passes PractRand to 2^40+ bytes), seeded from a string key through a
 * 32-bit hash, with normals by Marsaglia's polar method. Deterministic across platforms: only 32-bit integer arithmetic and
 * IEEE double operations on its outputs. Never `Math.random`.
 */

/** 32-bit FNV-1a of a string, then murmur3's finaliser to spread the bits. */
export const hash32 = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

// Acklam's coefficients, once (not per call: the table below takes 65,536 calls at module load).
const A0 = -39.69683028665376
const A1 = 220.9460984245205
const A2 = -275.9285104469687
const A3 = 138.357751867269
const A4 = -30.66479806614716
const A5 = 2.506628277459239
const B0 = -54.47609879822406
const B1 = 161.5858368580409
const B2 = -155.6989798598866
const B3 = 66.80131188771972
const B4 = -13.28068155288572
const C0 = -0.007784894002430293
const C1 = -0.3223964580411365
const C2 = -2.400758277161838
const C3 = -2.549732539343734
const C4 = 4.374664141464968
const C5 = 2.938163982698783
const D0 = 0.007784695709041462
const D1 = 0.3224671290700398
const D2 = 2.445134137142996
const D3 = 3.754408661907416
const LOW = 0.02425

/** Acklam's rational approximation of the standard normal quantile (relative error below 1.2e-9). */
export const normalQuantile = (p: number): number => {
  if (p < LOW) {
    const q = Math.sqrt(-2 * Math.log(p))
    return (((((C0 * q + C1) * q + C2) * q + C3) * q + C4) * q + C5) / ((((D0 * q + D1) * q + D2) * q + D3) * q + 1)
  }
  if (p > 1 - LOW) {
    const q = Math.sqrt(-2 * Math.log(1 - p))
    return -(((((C0 * q + C1) * q + C2) * q + C3) * q + C4) * q + C5) / ((((D0 * q + D1) * q + D2) * q + D3) * q + 1)
  }
  const q = p - 0.5
  const r = q * q
  return (
    ((((((A0 * r + A1) * r + A2) * r + A3) * r + A4) * r + A5) * q) /
    (((((B0 * r + B1) * r + B2) * r + B3) * r + B4) * r + 1)
  )
}

/** Quantiles of the standard normal at (i + 0.5) / 65536: a fast sampler for small noise terms. */
const QUANTILES = new Float64Array(65_536)
for (let i = 0; i < QUANTILES.length; i++) QUANTILES[i] = normalQuantile((i + 0.5) / 65_536)

/**
 * A standard normal (from the quantile table: tails cut at about 4.2) keyed by three 32-bit integers, with no
 * generator state: the same numbers, the same draw. For values that must depend only on what they describe (the
 * simulated quotes between two bar closes depend on the asset, the bar and the instant, never on which earlier
 * instants were computed).
 */
export const keyedNoise = (a: number, b: number, c: number): number => {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b)
  h ^= h >>> 15
  h = Math.imul(h ^ b, 0xc2b2ae35)
  h ^= h >>> 13
  h = Math.imul(h ^ c, 0x27d4eb2f)
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  return QUANTILES[(h >>> 16) & 0xffff] as number
}

export class Rng {
  private a: number
  private b: number
  private c: number
  private d: number
  private spare = 0
  private hasSpare = false

  /** A generator for `key` (for example `"<seed>|crypto:bitcoin|binance"`). */
  constructor(key: string) {
    this.a = hash32(`a|${key}`)
    this.b = hash32(`b|${key}`)
    this.c = hash32(`c|${key}`)
    this.d = 1
    // Discard the first outputs: the state mixes away from the hashed seed.
    for (let i = 0; i < 15; i++) this.uint32()
  }

  /** The generator's whole state (six numbers), for `restore`: a simulation kept on disk resumes from it. */
  save(): [number, number, number, number, number, number] {
    return [this.a, this.b, this.c, this.d, this.spare, this.hasSpare ? 1 : 0]
  }

  /** Puts back a state `save` answered: the generator then draws exactly what the saved one would have. */
  restore(state: ArrayLike<number>): void {
    if (state.length !== 6) throw new Error("Rng.restore: a state is six numbers")
    this.a = (state[0] as number) | 0
    this.b = (state[1] as number) | 0
    this.c = (state[2] as number) | 0
    this.d = (state[3] as number) | 0
    this.spare = state[4] as number
    this.hasSpare = state[5] === 1
  }

  uint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return t >>> 0
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.uint32() / 4_294_967_296
  }

  /**
   * Approximately standard normal, from a 65,536-entry quantile table (tails cut at about 4.2): several times
   * faster than `normal`, for the many small noise terms where the far tail does not matter.
   */
  noise(): number {
    return QUANTILES[this.uint32() >>> 16] as number
  }

  /** Standard normal (Marsaglia's polar method, both values used). */
  normal(): number {
    if (this.hasSpare) {
      this.hasSpare = false
      return this.spare
    }
    let u: number
    let v: number
    let q: number
    do {
      u = this.uint32() / 2_147_483_648 - 1
      v = this.uint32() / 2_147_483_648 - 1
      q = u * u + v * v
    } while (q >= 1 || q === 0)
    const f = Math.sqrt((-2 * Math.log(q)) / q)
    this.spare = v * f
    this.hasSpare = true
    return u * f
  }
}
