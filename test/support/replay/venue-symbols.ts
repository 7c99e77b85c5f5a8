/**
 * The perpetuals the replay venues of Bybit, OKX and Hyperliquid list: real names from each venue's recorded
 * instrument list (`../shared/data/crypto/listings/`, read in place, never copied) when the folder is there, else
 * (or past the recorded ones) synthetic names, skipping every ticker in `taken` so that each asset trades on one
 * venue only (a renamed ticker and its new name count as one: `relatedTickers`; the four-venue harness gives each venue its own assets: an answer's bid and ask then come from one
 * known venue, and the book age is measured against it).
 *
 * From the recordings: Bybit `LinearPerpetual`s settled in USDT (`baseCoin` with its multiplier, `1000PEPE`; the
 * recorded `tickSize` and `fundingInterval`); OKX linear `-USDT-SWAP`s (`tickSz`, `ctVal x ctMult` the contract
 * size in coins); Hyperliquid's universe (`kPEPE` for 1,000 PEPE; a price grid of five significant figures at the
 * recorded mark). The starting price of Bybit and OKX symbols is three to thirty thousand ticks, as Binance's.
 */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { splitMultiplier, TickerRenames } from "@market-data/core"
import type { VenueSymbol } from "./market.ts"
import { hash, rng } from "./symbols.ts"

const listing = (file: string) =>
  fileURLToPath(new URL(`../../../../shared/data/crypto/listings/${file}`, import.meta.url))

export const RECORDED_BYBIT = listing(
  "bybit_v5_market_instruments-info_linear-usdt-trading-keyed_2026-02-07_NOLICENSE.json"
)
export const RECORDED_OKX = listing("okx_api_v5_public_instruments_SWAP-wrapped_2025-11-03_NOLICENSE.json")
export const RECORDED_HYPERLIQUID = listing("hyperliquid_info_metaAndAssetCtxs_2026-03-10_NOLICENSE.json")

const decimalsOf = (tickText: string): number => {
  const dot = tickText.indexOf(".")
  return dot < 0 ? 0 : tickText.slice(dot + 1).replace(/0+$/, "").length
}
/** `10^exponent` as a price text (`-3`: `0.001`). */
const tickTextOf = (exponent: number): string =>
  exponent >= 0 ? String(10 ** exponent) : (10 ** exponent).toFixed(-exponent)

const readJson = (path: string): unknown => (existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : undefined)

type Venue = "bybit" | "okx" | "hyperliquid"

/**
 * A ticker and the one a rename ties it to (`MKR` and `SKY`): the directory makes them one asset, so a venue
 * listing either takes both.
 */
export const relatedTickers = (ticker: string): ReadonlyArray<string> => [
  ticker,
  ...TickerRenames.flatMap((r) => (r.from === ticker ? [r.to] : r.to === ticker ? [r.from] : []))
]

interface Candidate {
  readonly venueBase: string
  readonly tickText: string
  readonly contractSize: string
  readonly fundingIntervalHours: number
  /** A starting price (venue units) where the recording has one. */
  readonly price?: number
  readonly record: Record<string, unknown>
}

const recorded = (venue: Venue): ReadonlyArray<Candidate> => {
  if (venue === "bybit") {
    const body = readJson(RECORDED_BYBIT) as Record<string, Record<string, unknown>> | undefined
    return Object.values(body ?? {}).flatMap((s) => {
      if (s.contractType !== "LinearPerpetual" || s.status !== "Trading" || s.settleCoin !== "USDT") return []
      const tick = String((s.priceFilter as Record<string, unknown> | undefined)?.tickSize ?? "")
      if (!(Number(tick) > 0) || typeof s.baseCoin !== "string") return []
      const minutes = Number(s.fundingInterval ?? 480)
      return [
        {
          venueBase: s.baseCoin,
          tickText: tick,
          contractSize: "1",
          fundingIntervalHours: minutes > 0 ? minutes / 60 : 8,
          record: s
        }
      ]
    })
  }
  if (venue === "okx") {
    const body = readJson(RECORDED_OKX) as { instruments?: ReadonlyArray<Record<string, unknown>> } | undefined
    return (body?.instruments ?? []).flatMap((s) => {
      if (s.instType !== "SWAP" || s.ctType !== "linear" || s.settleCcy !== "USDT" || s.state !== "live") return []
      const m = /^([A-Z0-9]+)-USDT-SWAP$/.exec(String(s.instId))
      if (m === null || !(Number(s.tickSz) > 0)) return []
      const size = Number(s.ctVal) * Number(s.ctMult ?? 1)
      if (!(size > 0)) return []
      return [
        {
          venueBase: m[1] as string,
          tickText: String(s.tickSz),
          contractSize: String(size),
          fundingIntervalHours: 8,
          record: s
        }
      ]
    })
  }
  const body = readJson(RECORDED_HYPERLIQUID) as
    | [{ universe: ReadonlyArray<Record<string, unknown>> }, ReadonlyArray<Record<string, unknown>>]
    | undefined
  if (body === undefined) return []
  return body[0].universe.flatMap((u, n) => {
    if (u.isDelisted === true || typeof u.name !== "string" || !/^k?[A-Z0-9]+$/.test(u.name)) return []
    const px = Number(body[1][n]?.markPx)
    if (!(px > 0)) return []
    return [
      {
        venueBase: u.name,
        tickText: tickTextOf(Math.floor(Math.log10(px)) - 4),
        contractSize: "1",
        fundingIntervalHours: 1,
        price: px,
        record: u
      }
    ]
  })
}

const venueName = (venue: Venue, venueBase: string) =>
  venue === "bybit" ? `${venueBase}USDT` : venue === "okx" ? `${venueBase}-USDT-SWAP` : venueBase

/** The instrument-list entry of a synthetic symbol, as the venue writes it. */
const syntheticInfo = (venue: Venue, symbol: string, base: string, tickText: string): Record<string, unknown> =>
  venue === "bybit"
    ? {
        symbol,
        contractType: "LinearPerpetual",
        status: "Trading",
        baseCoin: base,
        quoteCoin: "USDT",
        settleCoin: "USDT",
        launchTime: "1700000000000",
        priceScale: String(decimalsOf(tickText)),
        priceFilter: { minPrice: tickText, maxPrice: "1000000", tickSize: tickText },
        lotSizeFilter: { maxOrderQty: "1000000", minOrderQty: "1", qtyStep: "1" },
        fundingInterval: 480
      }
    : venue === "okx"
      ? {
          instType: "SWAP",
          instId: symbol,
          instFamily: `${base}-USDT`,
          uly: `${base}-USDT`,
          settleCcy: "USDT",
          ctValCcy: base,
          ctVal: "1",
          ctMult: "1",
          ctType: "linear",
          state: "live",
          tickSz: tickText,
          lotSz: "1",
          minSz: "1",
          listTime: "1700000000000"
        }
      : { name: symbol, szDecimals: 0, maxLeverage: 5 }

/**
 * `n` perpetuals of `venue` whose tickers are not in `taken` (and adds theirs to it): the recorded ones first
 * (unless `syntheticOnly`), then synthetic ones (`<letter><k>`: `Y` Bybit, `O` OKX, `H` Hyperliquid).
 */
export const venueSymbols = (
  venue: Venue,
  n: number,
  taken: Set<string>,
  options: { readonly seed?: number; readonly syntheticOnly?: boolean } = {}
): ReadonlyArray<VenueSymbol> => {
  const seed = options.seed ?? 20261120
  const out: Array<VenueSymbol> = []
  const add = (c: Candidate) => {
    const split = splitMultiplier(c.venueBase)
    if (split === undefined) return
    const names = relatedTickers(split.base)
    if (names.some((n) => taken.has(n))) return
    for (const n of names) taken.add(n)
    const symbol = venueName(venue, c.venueBase)
    const random = rng(seed ^ hash(`${venue}/${symbol}`))
    const tick = Number(c.tickText)
    const startTicks =
      c.price !== undefined ? Math.max(100, Math.round(c.price / tick)) : Math.round(10 ** (3.5 + random()))
    out.push({
      symbol,
      ticker: split.base,
      // OKX quotes a coin's price whatever the contract; Bybit and Hyperliquid quote a unit of the venue base.
      tokensPerUnit: venue === "okx" ? 1 : split.multiplier,
      contractSize: Number(c.contractSize),
      tickText: c.tickText,
      tick,
      decimals: decimalsOf(c.tickText),
      startTicks,
      fundingIntervalHours: c.fundingIntervalHours,
      info: c.record
    })
  }
  if (options.syntheticOnly !== true) {
    for (const c of recorded(venue)) {
      if (out.length >= n) break
      // A multiplied OKX base (none is recorded) would quote per coin: not modelled, skipped.
      if (venue === "okx" && splitMultiplier(c.venueBase)?.multiplier !== 1) continue
      add(c)
    }
  }
  const letter = venue === "bybit" ? "Y" : venue === "okx" ? "O" : "H"
  for (let k = 0; out.length < n; k++) {
    const base = `${letter}${k}`
    if (taken.has(base)) continue
    const random = rng(seed ^ hash(`${venue}/${base}`))
    const tickText = tickTextOf(Math.floor(random() * 8) - 8)
    const symbol = venueName(venue, base)
    add({
      venueBase: base,
      tickText,
      contractSize: "1",
      fundingIntervalHours: venue === "hyperliquid" ? 1 : k % 7 === 3 ? 4 : 8,
      record: syntheticInfo(venue, symbol, base, tickText)
    })
  }
  return out
}
