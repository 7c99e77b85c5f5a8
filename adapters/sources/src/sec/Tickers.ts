/**
 * The SEC's ticker lists: `company_tickers.json` (`{"0": {cik_str, ticker, title}, ...}`) and
 * `company_tickers_exchange.json` (`{"fields": ["cik", "name", "ticker", "exchange"], "data": [[...], ...]}`).
 */
import type { Result } from "effect"
import type { TickerEntry } from "./EquityModel.ts"
import {
  asArray,
  asCik,
  asObject,
  asOptionalString,
  asString,
  field,
  parseExactJson,
  problem,
  runParser
} from "./ExactJson.ts"
import type { SecFormatError } from "./SecFormatError.ts"

/** Parses `company_tickers.json`, in the file's own order (its keys "0", "1", ... rank by market value). */
export const parseCompanyTickers = (text: string): Result.Result<ReadonlyArray<TickerEntry>, SecFormatError> =>
  runParser("company_tickers", () => {
    const root = asObject(parseExactJson(text), "$")
    return Object.entries(root)
      .map(([key, value]) => {
        if (!/^\d+$/.test(key)) problem(`$.${key}`, "expected the numeric keys of company_tickers.json")
        return [Number(key), value] as const
      })
      .sort((a, b) => a[0] - b[0])
      .map(([key, value]) => {
        const path = `$.${key}`
        const row = asObject(value, path)
        return {
          cik: asCik(field(row, "cik_str", path), `${path}.cik_str`),
          ticker: asString(field(row, "ticker", path), `${path}.ticker`),
          name: asString(field(row, "title", path), `${path}.title`),
          exchange: null
        }
      })
  })

/**
 * Parses `company_tickers_exchange.json`. Columns are found by the names in `fields`, not by position; an empty
 * or null exchange is `null`.
 */
export const parseCompanyTickersExchange = (text: string): Result.Result<ReadonlyArray<TickerEntry>, SecFormatError> =>
  runParser("company_tickers_exchange", () => {
    const root = asObject(parseExactJson(text), "$")
    const fields = asArray(field(root, "fields", "$"), "$.fields").map((name, i) => asString(name, `$.fields[${i}]`))
    const column = (name: string): number => {
      const index = fields.indexOf(name)
      return index >= 0 ? index : problem("$.fields", `has no ${JSON.stringify(name)} column`)
    }
    const cikAt = column("cik")
    const nameAt = column("name")
    const tickerAt = column("ticker")
    const exchangeAt = column("exchange")
    return asArray(field(root, "data", "$"), "$.data").map((value, i) => {
      const path = `$.data[${i}]`
      const row = asArray(value, path)
      if (row.length !== fields.length) problem(path, `has ${row.length} cells, expected ${fields.length}`)
      const exchange = asOptionalString(row[exchangeAt], `${path}[${exchangeAt}]`)
      return {
        cik: asCik(row[cikAt], `${path}[${cikAt}]`),
        ticker: asString(row[tickerAt], `${path}[${tickerAt}]`),
        name: asString(row[nameAt], `${path}[${nameAt}]`),
        exchange: exchange === null || exchange.trim() === "" ? null : exchange
      }
    })
  })
