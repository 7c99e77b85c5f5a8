/**
 * Hand-made deterministic fixtures: a seeded random walk of OHLC bars with volatility regimes, so the math
 * tests mean something on a machine without the shared data folder.
 */

/** Mulberry32: a small seeded PRNG, deterministic across runs and machines. */
export const prng = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface Columns {
  t: Array<number>
  open: Array<number>
  high: Array<number>
  low: Array<number>
  close: Array<number>
  volume: Array<number>
}

/** `n` bars of `stepMs` from `startMs`: a random walk with trending and ranging stretches. */
export const randomWalkBars = (n: number, seed: number, startMs = Date.UTC(2025, 0, 1), stepMs = 900_000): Columns => {
  const rnd = prng(seed)
  const out: Columns = { t: [], open: [], high: [], low: [], close: [], volume: [] }
  let price = 100
  for (let i = 0; i < n; i++) {
    const regime = Math.floor(i / 150) % 3 // 0 up, 1 range, 2 down
    const drift = regime === 0 ? 0.002 : regime === 2 ? -0.002 : 0
    const vol = 0.004 + 0.006 * rnd()
    const o = price
    const c = o * (1 + drift + vol * (rnd() * 2 - 1))
    const h = Math.max(o, c) * (1 + vol * rnd())
    const l = Math.min(o, c) * (1 - vol * rnd())
    out.t.push(startMs + i * stepMs)
    out.open.push(o)
    out.high.push(h)
    out.low.push(l)
    out.close.push(c)
    out.volume.push(10 + 100 * rnd())
    price = c
  }
  return out
}
