/**
 * Real recorded market data from `../shared/data/history` (read-only, see its README). Tests that need it
 * skip with a visible reason when the folder is absent; CI always has it.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"

export const HISTORY = join(import.meta.dirname, "..", "..", "..", "..", "..", "shared", "data", "history")

export const historyPath = (...parts: ReadonlyArray<string>): string => join(HISTORY, ...parts)

/** Whether a shared-data file exists; the reason to print when it does not. */
export const hasHistory = (...parts: ReadonlyArray<string>): boolean => existsSync(historyPath(...parts))

export const skipReason = (...parts: ReadonlyArray<string>): string =>
  `shared data ${historyPath(...parts)} is absent (tests on real data skipped)`

/** freqtrade candle form `[[open_ms, o, h, l, c, base_volume], ...]` as columns. */
export const readCandles = (
  ...parts: ReadonlyArray<string>
): {
  t: Array<number>
  open: Array<number>
  high: Array<number>
  low: Array<number>
  close: Array<number>
  volume: Array<number>
} => {
  const rows: Array<[number, number, number, number, number, number]> = JSON.parse(
    readFileSync(historyPath(...parts), "utf8")
  )
  return {
    t: rows.map((r) => r[0]),
    open: rows.map((r) => r[1]),
    high: rows.map((r) => r[2]),
    low: rows.map((r) => r[3]),
    close: rows.map((r) => r[4]),
    volume: rows.map((r) => r[5])
  }
}

export const readText = (...parts: ReadonlyArray<string>): string => readFileSync(historyPath(...parts), "utf8")
