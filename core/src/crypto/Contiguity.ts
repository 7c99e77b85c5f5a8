/**
 * Which stored 15-minute bars a windowed figure may use: only the run of bars held end to end (each opening one
 * `BAR_MS` after the one before, none missing) that ends at the newest bar. A missing bar is a hole, however
 * short: a live start stores the last day first and fills the history behind it, and an average or a range
 * taken across such a hole would mix prices from months apart. A figure whose window that run does not cover
 * is `insufficient_history`.
 */
import { BAR_MS } from "./Market.ts"

/** Whether bars `from` to `to` (indices, inclusive) of the open times `t` are held end to end. */
export const heldEndToEnd = (t: ArrayLike<number>, from: number, to: number): boolean =>
  from <= to && (t[to] as number) - (t[from] as number) <= (to - from) * BAR_MS

/**
 * Index of the first bar of the run held end to end that ends at bar `last` (`last` itself when the bar before
 * it is missing); scans back at most `maxBars` bars (the run may go on further back than the index returned).
 */
export const runStartIndex = (t: ArrayLike<number>, last: number, maxBars = Number.POSITIVE_INFINITY): number => {
  let k = last
  const stop = Math.max(0, last - maxBars)
  while (k > stop && (t[k] as number) - (t[k - 1] as number) <= BAR_MS) k--
  return k
}
