/**
 * A live-mode service process pointed at a replay Binance (`binance-venue.ts`) and a fake SEC EDGAR that answers
 * 404 to everything (no company is under test), and what the stream tests and the streams bench ask of it: the
 * environment, the perpetuals it serves (venue symbol to canonical asset, from `coverage`), and `price` answers
 * measured against the venue (`stalenessOf`).
 */
import { listenFake, notFound, sendReply } from "../../../adapters/sources/test/live/FakeServer.ts"
import type { ReplayVenue } from "./binance-venue.ts"

/** A fake SEC EDGAR (data and archives): 404 to every request. */
export const startFakeSec = (): Promise<{ readonly url: string; readonly close: () => Promise<void> }> =>
  listenFake((_request, res) => sendReply(res, notFound))

/** The environment of a live service on the replay venue alone (Binance; no price connector, no coin list). */
export const liveServiceEnv = (
  venue: Pick<ReplayVenue, "restUrl" | "wsUrl">,
  secUrl: string,
  key: string,
  extra: Record<string, string> = {}
): Record<string, string> => ({
  MARKET_DATA_FEED: "live",
  MARKET_DATA_LIVE_VENUES: "binance",
  MARKET_DATA_BINANCE_BASE_URL: venue.restUrl,
  MARKET_DATA_BINANCE_WS_BASE_URL: venue.wsUrl,
  MARKET_DATA_SEC_USER_AGENT: "market-data stream tests ops@example.com",
  MARKET_DATA_SEC_BASE_URL: secUrl,
  MARKET_DATA_SEC_ARCHIVES_BASE_URL: secUrl,
  MARKET_DATA_SEC_DAILY_INDEX: "off",
  MARKET_DATA_PRICES: "off",
  MARKET_DATA_COIN_LIST_URL: "off",
  MARKET_DATA_LIVE_BACKFILL_DAYS: "1",
  MARKET_DATA_BOOTSTRAP_KEY: key,
  MARKET_DATA_BOOTSTRAP_CREDITS: "1000000000",
  MARKET_DATA_RATE_LIMIT_PER_MINUTE: "100000000",
  LOG_LEVEL: "info",
  LOG_FORMAT: "logfmt",
  ...extra
})

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The `q` quantile of `xs` (nearest rank), NaN when empty. */
export const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  if (xs.length === 0) return Number.NaN
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number
}

/** One perpetual the service serves: its venue symbol, canonical asset and units. */
export interface ServedPerp {
  readonly symbol: string
  readonly assetId: string
  readonly tokensPerUnit: number
}

const getJson = async (url: string, key: string): Promise<{ status: number; body: unknown }> => {
  const r = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
  return { status: r.status, body: await r.json().catch(() => undefined) }
}

/**
 * The venue's perpetuals as the service serves them: every crypto asset of `coverage` (browsed page by page)
 * whose symbol is the ticker of exactly one venue symbol. (A renamed ticker's asset carries the new ticker and is
 * left out.)
 */
export const servedPerps = async (
  base: string,
  key: string,
  venue: {
    readonly symbols: ReadonlyArray<{
      readonly symbol: string
      readonly ticker: string
      readonly tokensPerUnit: number
    }>
  }
): Promise<Array<ServedPerp>> => {
  const byTicker = new Map<string, Array<string>>()
  let cursor: string | undefined
  for (let page = 0; page < 100; page++) {
    const r = await getJson(
      `${base}/api/v1/coverage?plane=crypto&limit=500${cursor === undefined ? "" : `&cursor=${cursor}`}`,
      key
    )
    const data = (r.body as { data?: { rows?: Array<{ asset_id: string; symbol: string }>; next_cursor?: string } })
      ?.data
    for (const row of data?.rows ?? []) {
      const list = byTicker.get(row.symbol.toUpperCase()) ?? []
      list.push(row.asset_id)
      byTicker.set(row.symbol.toUpperCase(), list)
    }
    cursor = data?.next_cursor ?? undefined
    if (cursor === undefined || cursor === null) break
  }
  return venue.symbols.flatMap((s) => {
    const ids = byTicker.get(s.ticker)
    return ids?.length === 1 ? [{ symbol: s.symbol, assetId: ids[0] as string, tokensPerUnit: s.tokensPerUnit }] : []
  })
}

/** The status of a venue component as `coverage` of an asset reports it (`books` on `binance`). */
export const componentStatus = async (
  base: string,
  key: string,
  assetId: string,
  venue: string,
  component: string
): Promise<{ status: string | undefined; detail: string | undefined } | undefined> => {
  const r = await getJson(`${base}/api/v1/coverage?id=${encodeURIComponent(assetId)}`, key)
  const sources = (r.body as { data?: { sources?: Array<Record<string, string>> } })?.data?.sources ?? []
  const row = sources.find((s) => s.venue === venue && s.component === component)
  return row === undefined ? undefined : { status: row.status, detail: row.detail }
}

/** One `price` answer as it came. */
export interface PriceAnswer {
  readonly symbol: string
  readonly tokensPerUnit: number
  readonly httpStatus: number
  /** The answer's `status` (`live`, `delayed`, `stale`). */
  readonly status: string | undefined
  /** `bid_usd` and `ask_usd` (undefined when the answer has none). */
  readonly bid: number | undefined
  readonly ask: number | undefined
  readonly latencyMs: number
  readonly receivedMs: number
}

/** One `price` answer, measured against the venue. */
export interface PriceSample extends PriceAnswer {
  readonly hasQuote: boolean
  /** How stale the answered bid and ask were when the answer arrived (ms; undefined: no quote, or never published). */
  readonly stalenessMs: number | undefined
}

/** Asks `price` of one perpetual. */
export const askPrice = async (base: string, key: string, perp: ServedPerp): Promise<PriceAnswer> => {
  const t0 = performance.now()
  let httpStatus = 0
  let body: unknown
  try {
    const r = await fetch(`${base}/api/v1/price?id=${encodeURIComponent(perp.assetId)}`, {
      headers: { authorization: `Bearer ${key}` }
    })
    httpStatus = r.status
    body = await r.json()
  } catch {
    // No answer: counted as one without a quote.
  }
  const receivedMs = Date.now()
  const latencyMs = performance.now() - t0
  const data = (body as { data?: { status?: string; bid_usd?: number | null; ask_usd?: number | null } })?.data
  return {
    symbol: perp.symbol,
    tokensPerUnit: perp.tokensPerUnit,
    httpStatus,
    status: data?.status,
    bid: typeof data?.bid_usd === "number" ? data.bid_usd : undefined,
    ask: typeof data?.ask_usd === "number" ? data.ask_usd : undefined,
    latencyMs,
    receivedMs
  }
}

/**
 * An answer measured against the venue when it arrived: its bid and ask in the venue's units (times the symbol's
 * tokens per unit: `1000PEPEUSDT` quotes 1,000 PEPE), looked up with `stalenessOf`.
 */
export const measured = (
  a: PriceAnswer,
  stalenessOf: (symbol: string, bid: number, ask: number, atMs: number) => number | undefined
): PriceSample => {
  const hasQuote = a.bid !== undefined && a.ask !== undefined
  return {
    ...a,
    hasQuote,
    stalenessMs: hasQuote
      ? stalenessOf(a.symbol, (a.bid as number) * a.tokensPerUnit, (a.ask as number) * a.tokensPerUnit, a.receivedMs)
      : undefined
  }
}

/** Asks `price` of one perpetual and measures its bid and ask against the venue when the answer arrives. */
export const samplePrice = async (
  base: string,
  key: string,
  venue: Pick<ReplayVenue, "stalenessOf">,
  perp: ServedPerp
): Promise<PriceSample> => measured(await askPrice(base, key, perp), venue.stalenessOf)

/** A summary of samples: the share with a quote, staleness quantiles, statuses. */
export const summarize = (samples: ReadonlyArray<PriceSample>) => {
  const quoted = samples.filter((s) => s.hasQuote)
  const staleness = quoted.flatMap((s) => (s.stalenessMs === undefined ? [] : [s.stalenessMs]))
  const statuses: Record<string, number> = {}
  for (const s of samples)
    statuses[s.status ?? `http ${s.httpStatus}`] = (statuses[s.status ?? `http ${s.httpStatus}`] ?? 0) + 1
  return {
    answers: samples.length,
    quotedShare: samples.length === 0 ? 0 : quoted.length / samples.length,
    /** Quotes the venue never published (or forgot): a wrong price, or a unit conversion off. */
    unmatched: quoted.length - staleness.length,
    p50: quantile(staleness, 0.5),
    p99: quantile(staleness, 0.99),
    // A loop, not `Math.max(...staleness)`: a long window holds more answers than a call's arguments may.
    max: staleness.reduce((m, x) => (x > m ? x : m), staleness.length === 0 ? Number.NaN : Number.NEGATIVE_INFINITY),
    latencyP50: quantile(
      samples.map((s) => s.latencyMs),
      0.5
    ),
    latencyP99: quantile(
      samples.map((s) => s.latencyMs),
      0.99
    ),
    statuses,
    unquoted: samples.filter((s) => !s.hasQuote).map((s) => s.symbol)
  }
}

/**
 * `price` answers for `durationMs` from `lanes` concurrent callers, each asking for a random perpetual of `perps`
 * in turn.
 */
export const askPrices = async (
  base: string,
  key: string,
  perps: ReadonlyArray<ServedPerp>,
  durationMs: number,
  lanes = 4
): Promise<Array<PriceAnswer>> => {
  const out: Array<PriceAnswer> = []
  const until = Date.now() + durationMs
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (Date.now() < until) {
        const perp = perps[Math.floor(Math.random() * perps.length)] as ServedPerp
        out.push(await askPrice(base, key, perp))
      }
    })
  )
  return out
}

/** `askPrices`, each answer measured against the venue (`measured`). */
export const samplePrices = async (
  base: string,
  key: string,
  venue: Pick<ReplayVenue, "stalenessOf">,
  perps: ReadonlyArray<ServedPerp>,
  durationMs: number,
  lanes = 4
): Promise<Array<PriceSample>> =>
  (await askPrices(base, key, perps, durationMs, lanes)).map((a) => measured(a, venue.stalenessOf))
