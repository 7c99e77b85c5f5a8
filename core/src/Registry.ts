/**
 * The operation registry: all 23 operations as data. Name, group, planes, auth class, price rule, parameters,
 * cross-parameter rules, error set and result schema. Query decoding, `schema`, the root document, the
 * parameter and price tables in `docs`, OpenAPI and the MCP tool schemas are all derived from this table.
 */
import type { Schema } from "effect"
import type { Plane } from "./AssetId.ts"
import type { ErrorCode } from "./Errors.ts"
import { type CrossRule, Param, type ParamSpec } from "./Params.ts"
import * as R from "./Results.ts"

export type Group = "situation" | "domain" | "list" | "discovery"

/** Who may call: anyone, any valid key (zero credits), or a key with credits. */
export type AuthClass = "keyless" | "key" | "paid"

/** How an operation is priced, in credits (1 credit = 1 US cent). */
export type PriceRule =
  | { readonly per: "asset"; readonly credits: { readonly [P in Plane]: number } }
  | { readonly per: "call"; readonly credits: number }
  | { readonly per: "row"; readonly credits: number }
  | { readonly per: "free" }

export interface OperationSpec {
  readonly name: string
  readonly group: Group
  /** Planes the operation serves; empty for discovery and account operations. */
  readonly planes: ReadonlyArray<Plane>
  readonly auth: AuthClass
  readonly price: PriceRule
  readonly params: ReadonlyArray<ParamSpec>
  readonly rules: ReadonlyArray<CrossRule>
  /** One line. */
  readonly summary: string
  /** What an agent needs to decide to call it. */
  readonly description: string
  /** The `data` payload of one asset or one call. */
  readonly result: Schema.Top
  /** True when the operation takes `id` or `ids` and answers batches. */
  readonly batch: boolean
  /** True when the answer is raw markdown (`docs`). */
  readonly markdown: boolean
  /** True when the operation answers `ETag` and honours `If-None-Match`. */
  readonly conditional: boolean
}

// ---------------------------------------------------------------------------------------------------------------
// Shared parameter declarations
// ---------------------------------------------------------------------------------------------------------------

const id = (description = "One canonical asset ID (`crypto:<slug>` or `eq:<cik>:<ticker>`); see `resolve`.") =>
  Param.assetId("id", { description })
const ids = Param.assetIdList("ids", 2, 10, {
  description: "2 to 10 distinct canonical asset IDs, comma-separated; answered in the order given."
})
const idOrIds: ReadonlyArray<ParamSpec> = [id(), ids]
const idXorIds: CrossRule = { rule: "exactlyOne", params: ["id", "ids"] }
const requiredId = (what: string) => Param.assetId("id", { description: what, required: true })
const cursor = Param.cursor({ description: "Opaque cursor from the previous page's `next_cursor`." })

const TIMEFRAMES = ["15m", "1h", "4h", "1d"] as const

const perAsset = (crypto: number, equity: number): PriceRule => ({ per: "asset", credits: { crypto, equity } })
const free: PriceRule = { per: "free" }

interface DomainDef {
  readonly name: string
  readonly planes: ReadonlyArray<Plane>
  readonly summary: string
  readonly description: string
  readonly credits: number
  readonly extra?: ReadonlyArray<ParamSpec>
}

const domainOp = (d: DomainDef, result: Schema.Top): OperationSpec => ({
  name: d.name,
  group: "domain",
  planes: d.planes,
  auth: "paid",
  price: perAsset(d.credits, d.credits),
  params: [...idOrIds, ...(d.extra ?? [])],
  rules: [idXorIds],
  summary: d.summary,
  description: d.description,
  result,
  batch: true,
  markdown: false,
  conditional: true
})

// ---------------------------------------------------------------------------------------------------------------
// The 23 operations
// ---------------------------------------------------------------------------------------------------------------

const read: OperationSpec = {
  name: "read",
  group: "situation",
  planes: ["crypto", "equity"],
  auth: "paid",
  price: perAsset(1, 5),
  params: idOrIds,
  rules: [idXorIds],
  summary:
    "The situation of one asset (or a batch) in one call: headline numbers with percentiles, assessment, freshness.",
  description:
    "Start here. Crypto: price, 24 h return, 8 h funding and 24 h open-interest change, each with its percentile against the asset's own history, plus positioning, trend, flow and cascade-risk assessments. Equity: price, market cap, P/E (exact decimal) and `filings_indexed_through`. Answers `ETag`; send `If-None-Match` to get `304` at zero credits when nothing changed.",
  result: R.ReadResult,
  batch: true,
  markdown: false,
  conditional: true
}

const domainOps: ReadonlyArray<OperationSpec> = [
  domainOp(
    {
      name: "price",
      planes: ["crypto", "equity"],
      credits: 1,
      summary: "Last price, 24 h return, position in the 7-day range, bid/ask and market cap.",
      description:
        "Price in USD with `return_24h_pct` and `range_pos_7d_pct` as contextual values (value and percentile), best bid and ask, and `market.market_cap_usd`."
    },
    R.DomainResults.price
  ),
  domainOp(
    {
      name: "funding",
      planes: ["crypto"],
      credits: 3,
      summary: "Perpetual funding normalized to 8 h across venues, with 90-day and 1-year percentiles.",
      description:
        "`rate_8h_pct` (value, `pctl` over the 90-day baseline, `pctl_1y` over the year of settlements held, and their sample counts `n` and `n_1y`), simple APR, bars since the sign last flipped, the hottest venue, every venue's rate, the next funding time and a one-word `funding_band`. Schedule the next call at `next_funding_at`."
    },
    R.DomainResults.funding
  ),
  domainOp(
    {
      name: "open_interest",
      planes: ["crypto"],
      credits: 1,
      summary: "Open interest in USD across venues, its 24 h change and the perpetual basis.",
      description: "Total open interest in USD, `change_24h_pct` and `basis_pct` with percentiles, and `by_venue`."
    },
    R.DomainResults.open_interest
  ),
  domainOp(
    {
      name: "orderflow",
      planes: ["crypto"],
      credits: 1,
      summary: "Net taker buying or selling over 24 h, in USD and as a share of open interest.",
      description:
        "`net_taker_delta_24h_usd`, `net_delta_pct_of_oi_24h` and `exchange_premium_rate_pct` (premium of the perpetual over the index), each with a percentile."
    },
    R.DomainResults.orderflow
  ),
  domainOp(
    {
      name: "liquidations",
      planes: ["crypto"],
      credits: 1,
      summary: "Forced liquidations over 24 h: total, long/short imbalance, intensity relative to open interest.",
      description: "`total_24h_usd`, `liq_imbalance_24h` (-1 all shorts to +1 all longs) and `intensity_pct_of_oi_24h`."
    },
    R.DomainResults.liquidations
  ),
  domainOp(
    {
      name: "liquidity",
      planes: ["crypto"],
      credits: 1,
      summary: "Order-book spread, bid/ask imbalance and depth near the mid price.",
      description: "`spread_pct`, `bid_ask_imbalance` and `depth` (USD within fixed bands around the mid)."
    },
    R.DomainResults.liquidity
  ),
  domainOp(
    {
      name: "technicals",
      planes: ["crypto", "equity"],
      credits: 1,
      summary: "RSI(14), ADX(14), ATR(14) as % of price and moving averages on closed bars.",
      description:
        "Wilder-smoothed RSI, ADX and ATR with period 14 on closed bars of `timeframe` (default 4h for crypto, 1d for equity), with percentiles, and the related moving averages.",
      extra: [
        Param.enumByPlane(
          "timeframe",
          TIMEFRAMES,
          { crypto: "4h", equity: "1d" },
          {
            description: "Bar timeframe; default 4h for crypto, 1d for equity."
          }
        )
      ]
    },
    R.DomainResults.technicals
  ),
  domainOp(
    {
      name: "structure",
      planes: ["crypto"],
      credits: 1,
      summary: "Market structure: trend state, last break of structure, session levels.",
      description: "`trend_state` (uptrend, downtrend, range), `last_bos` and `session_levels` on `timeframe`.",
      extra: [Param.enum("timeframe", TIMEFRAMES, { description: "Bar timeframe.", default: "4h" })]
    },
    R.DomainResults.structure
  ),
  domainOp(
    {
      name: "profile",
      planes: ["equity"],
      credits: 1,
      summary: "Company profile: sector, market cap, shares outstanding (as filed).",
      description: "`sector`, `market_cap_usd` and `shares_outstanding` from the latest filing (exact decimal)."
    },
    R.DomainResults.profile
  ),
  domainOp(
    {
      name: "valuation",
      planes: ["equity"],
      credits: 1,
      summary: "Trailing-twelve-month multiples: P/E, P/S, EV/EBITDA as exact decimals.",
      description: "`pe_ttm`, `ps_ttm` and `ev_ebitda_ttm` from filed TTM figures and the last price."
    },
    R.DomainResults.valuation
  ),
  domainOp(
    {
      name: "growth",
      planes: ["equity"],
      credits: 1,
      summary: "Year-over-year growth of revenue, EPS and free cash flow (TTM).",
      description: "`revenue_growth_yoy_pct`, `eps_growth_yoy_pct` and `free_cash_flow_growth_yoy_pct`, exact decimals."
    },
    R.DomainResults.growth
  ),
  domainOp(
    {
      name: "fundamentals",
      planes: ["equity"],
      credits: 1,
      summary: "Trailing-twelve-month revenue, EPS and free cash flow, exact as filed.",
      description: "`revenue_ttm`, `eps_ttm` and `free_cash_flow_ttm` computed exactly from the last four quarters."
    },
    R.DomainResults.fundamentals
  )
]

const series: OperationSpec = {
  name: "series",
  group: "list",
  planes: ["crypto", "equity"],
  auth: "paid",
  price: { per: "call", credits: 1 },
  params: [
    requiredId("One canonical asset ID, either plane."),
    Param.enum("view", ["bars", "summary"], { description: "OHLCV bars, or a summary of the range.", default: "bars" }),
    Param.enum("range", ["1w", "1mo", "3mo", "6mo", "ytd", "1y", "5y", "max"], {
      description: "How far back.",
      default: "1y"
    }),
    Param.enumByPlane(
      "interval",
      ["15m", "1h", "4h", "1d", "1w", "1mo"],
      { crypto: "4h", equity: "1d" },
      { description: "Bar interval; default 4h for crypto, 1d for equity." }
    ),
    Param.int("limit", 1, 500, { description: "Bars per page; requires view=bars.", default: 120 }),
    { ...cursor, description: "Cursor to the next (older) page; requires view=bars." }
  ],
  rules: [
    { rule: "requiresValue", param: "limit", on: "view", equals: "bars" },
    { rule: "requiresValue", param: "cursor", on: "view", equals: "bars" }
  ],
  summary: "Historical OHLCV bars (paged backwards from the newest) or a summary of a range, one asset.",
  description:
    "Bars run oldest to newest within a page; the first page ends at the newest bar and `next_cursor` pages back in time. The summary view gives first/last close, return, high, low, max drawdown, realized volatility and bar count.",
  result: R.SeriesResult,
  batch: false,
  markdown: false,
  conditional: false
}

const financials: OperationSpec = {
  name: "financials",
  group: "list",
  planes: ["equity"],
  auth: "paid",
  price: { per: "call", credits: 3 },
  params: [
    requiredId("One equity asset ID."),
    Param.enumList("statements", ["income", "balance", "cash_flow"], 1, 3, {
      description: "Statements to include.",
      default: ["income", "balance", "cash_flow"]
    }),
    Param.enum("period_kind", ["annual", "quarter", "ytd"], { description: "Period kind.", default: "annual" }),
    Param.int("periods", 1, 20, { description: "Number of periods, newest first.", default: 4 }),
    Param.boolean("basis_concepts", {
      description: "Add, per line item, the XBRL concept(s) it was taken or derived from.",
      default: false
    }),
    Param.date("as_known_on", {
      description:
        "Beyond the contract (additive): the statements as they were known on this date, from filings made on or before it, before later restatements."
    })
  ],
  rules: [],
  summary: "Filed statement line items over several periods, exact decimal strings with accession numbers.",
  description:
    "Income, balance sheet and cash-flow lines keyed by concept, each `{unit, by_period}` aligned to `periods` (newest first, with form, accession, filed date and a `restated` flag).",
  result: R.FinancialsResult,
  batch: false,
  markdown: false,
  conditional: false
}

const events: OperationSpec = {
  name: "events",
  group: "list",
  planes: ["equity"],
  auth: "paid",
  price: { per: "call", credits: 3 },
  params: [
    requiredId("One equity asset ID."),
    Param.enumList("types", ["filings", "insider", "dividends", "splits"], 1, 4, {
      description: "Event types to include.",
      default: ["filings", "insider", "dividends", "splits"]
    }),
    Param.date("since", { description: "Only events on or after this date." }),
    Param.string("form", 1, 20, {
      description: "Filing form filter (e.g. 10-K, 8-K, 4); requires types to include filings."
    }),
    Param.int("limit", 1, 200, { description: "Events per page.", default: 50 }),
    cursor
  ],
  rules: [{ rule: "requiresIncludes", param: "form", on: "types", includes: "filings" }],
  summary: "Corporate events, newest first: filings, insider transactions, dividends, splits.",
  description:
    "The filing stream (every form, by acceptance time), parsed Form 4 insider transactions, dividends and splits. With `insider` among `types`, adds `insider_summary_90d` (open-market buys, sales, net shares, unique insiders).",
  result: R.EventsResult,
  batch: false,
  markdown: false,
  conditional: false
}

const holders: OperationSpec = {
  name: "holders",
  group: "list",
  planes: ["equity"],
  auth: "paid",
  price: { per: "call", credits: 1 },
  params: [
    requiredId("One equity asset ID."),
    Param.int("limit", 1, 100, { description: "Holders per page.", default: 25 }),
    cursor
  ],
  rules: [],
  summary: "Institutional holders from the latest quarterly 13F reports.",
  description:
    "Each holder's shares and value (exact decimals), share of shares outstanding and change since the prior quarter, largest first.",
  result: R.HoldersResult,
  batch: false,
  markdown: false,
  conditional: false
}

/** Metrics `rank` can order by. */
export const RankMetrics = [
  "extreme_count",
  "funding_rate_8h_pct",
  "return_24h_pct",
  "return_7d_pct",
  "oi_change_24h_pct",
  "net_taker_delta_24h_usd",
  "net_taker_delta_pct_of_oi_24h",
  "liq_intensity_pct_of_oi_24h",
  "liq_imbalance_24h"
] as const

const rank: OperationSpec = {
  name: "rank",
  group: "list",
  planes: ["crypto"],
  auth: "paid",
  price: { per: "row", credits: 1 },
  params: [
    Param.enum("metric", RankMetrics, {
      description: "Metric to order by; extreme_count counts metrics sitting in their own historical tails.",
      default: "extreme_count"
    }),
    Param.enum("direction", ["top", "bottom"], { description: "Highest or lowest first.", default: "top" }),
    Param.enum("tier", ["core"], { description: "Universe to scan.", default: "core" }),
    Param.int("limit", 1, 50, { description: "Rows per page (each row costs one credit).", default: 10 }),
    cursor
  ],
  rules: [],
  summary: "Crypto core-tier assets ordered by a metric; one credit per returned row.",
  description:
    "Only assets with fresh inputs at scan time are ranked; the `coverage` block says how many were scanned and why others were excluded.",
  result: R.RankResult,
  batch: false,
  markdown: false,
  conditional: false
}

/** The sections of `docs`. */
export const DocsSections = [
  "index",
  "quickstart",
  "domains",
  "access",
  "grammar",
  "refusals",
  "resolve",
  "errors",
  "pricing",
  "examples",
  "changelog"
] as const
export type DocsSection = (typeof DocsSections)[number]

const docs: OperationSpec = {
  name: "docs",
  group: "discovery",
  planes: [],
  auth: "keyless",
  price: free,
  params: [Param.enum("section", DocsSections, { description: "Which section to read.", default: "index" })],
  rules: [],
  summary: "The documentation, as markdown written for agents. Keyless.",
  description: "Raw markdown, no JSON envelope. Start with `index`; `quickstart` has a first call in three steps.",
  result: R.DocsResult,
  batch: false,
  markdown: true,
  conditional: false
}

const resolve: OperationSpec = {
  name: "resolve",
  group: "discovery",
  planes: ["crypto", "equity"],
  auth: "key",
  price: free,
  params: [
    Param.string("q", 1, 80, { description: "Symbol or name to look up.", required: true }),
    Param.int("limit", 1, 25, { description: "Maximum matches per plane.", default: 10 }),
    Param.string("network", 1, 40, { description: "Keep only crypto matches on this network (e.g. ethereum, solana)." })
  ],
  rules: [],
  summary: "Turn a symbol or name into canonical asset IDs, with warnings when a query is contested.",
  description:
    "Ranked matches on both planes. A contested query (say a ticker that is both a token and a covered equity) answers `best: null` with warnings instead of a silent pick.",
  result: R.ResolveResult,
  batch: false,
  markdown: false,
  conditional: false
}

const coverage: OperationSpec = {
  name: "coverage",
  group: "discovery",
  planes: ["crypto", "equity"],
  auth: "key",
  price: free,
  params: [
    id("Inspect one asset: its tier, whether it is alive and which operations serve it."),
    Param.enum("plane", ["crypto", "equity"], { description: "Browse one plane." }),
    Param.enum("tier", ["core", "listed_token", "contract_token", "equity", "full", "prices_only", "discovery_only"], {
      description: "Browse one coverage tier."
    }),
    Param.boolean("alive", { description: "Browse only assets with live data (true) or without (false)." }),
    cursor,
    Param.int("limit", 1, 500, { description: "Rows per page.", default: 100 })
  ],
  rules: [{ rule: "excludes", param: "id", others: ["plane", "tier", "alive", "cursor", "limit"] }],
  summary: "What is covered: one asset's tier and operations, or a filtered browse of the universe.",
  description:
    "Pass `id` to inspect one asset, or omit it and browse with `plane`, `tier` and `alive`. The one-asset form also reports every source feeding the asset (`sources`: last success, lag, status and the last error while it fails); the first page of a browse reports every source feeding the planes browsed (`sources`, the same rows; a venue's `listings` row names in `detail` every instrument it skipped, with the reason).",
  result: R.CoverageResult,
  batch: false,
  markdown: false,
  conditional: false
}

const usage: OperationSpec = {
  name: "usage",
  group: "discovery",
  planes: [],
  auth: "key",
  price: free,
  params: [],
  rules: [],
  summary: "Your key's remaining credits and rate-limit window.",
  description: "`credits_remaining` and `rate_limit` `{limit, remaining, reset_at}` for the calling key.",
  result: R.UsageResult,
  batch: false,
  markdown: false,
  conditional: false
}

/** `schema`, whose `resource` enum lists every operation's name (its own included). */
const schemaOperation = (names: ReadonlyArray<string>): OperationSpec => ({
  name: "schema",
  group: "discovery",
  planes: [],
  auth: "keyless",
  price: free,
  params: [
    Param.enum("resource", names, {
      description: "One operation; omitted, the index of all 23."
    })
  ],
  rules: [],
  summary: "Machine-readable description of every operation: parameters, defaults, enums, bounds, credits, errors.",
  description: "Without `resource`, the index of all operations; with it, that operation in full. Keyless.",
  result: R.SchemaResult,
  batch: false,
  markdown: false,
  conditional: false
})

/** The operations before and after `schema` in the contract's order. */
const beforeSchema: ReadonlyArray<OperationSpec> = [read, ...domainOps, series, financials, events, holders, rank, docs]
const afterSchema: ReadonlyArray<OperationSpec> = [resolve, coverage, usage]

/** All 23 operations, in the contract's order. */
export const Operations: ReadonlyArray<OperationSpec> = [
  ...beforeSchema,
  schemaOperation([...beforeSchema.map((o) => o.name), "schema", ...afterSchema.map((o) => o.name)]),
  ...afterSchema
]

/** The operation named `name`, or undefined (a scan of the 23: no lookup table held at module scope). */
export const operation = (name: string): OperationSpec | undefined => Operations.find((o) => o.name === name)

export type OperationName = (typeof Operations)[number]["name"]

/** The error codes an operation can answer (before the transport adds framing errors). */
export const errorSet = (op: OperationSpec): ReadonlyArray<ErrorCode> => {
  const codes = new Set<ErrorCode>(["invalid_parameter", "invalid_header", "rate_limited", "internal_error"])
  if (op.params.some((p) => p.required) || op.rules.some((r) => r.rule === "exactlyOne")) {
    codes.add("missing_parameter")
  }
  if (op.rules.some((r) => r.rule === "exactlyOne" || r.rule === "excludes")) codes.add("conflicting_parameters")
  if (op.rules.some((r) => r.rule === "requiresValue" || r.rule === "requiresIncludes")) codes.add("parameter_requires")
  if (op.params.some((p) => p.type.kind === "cursor")) codes.add("invalid_cursor")
  if (op.auth !== "keyless") codes.add("unauthenticated")
  if (op.auth === "paid") {
    for (const c of [
      "insufficient_credits",
      "invalid_idempotency_key",
      "idempotency_conflict",
      "request_in_progress"
    ] as const) {
      codes.add(c)
    }
  }
  if (op.params.some((p) => p.type.kind === "assetId" || p.type.kind === "assetIdList")) {
    codes.add("unknown_asset")
    if (op.group !== "discovery") codes.add("not_covered")
    if (op.planes.length === 1) codes.add("plane_mismatch")
  }
  if (op.planes.length > 0) codes.add("source_unavailable")
  return [...codes]
}

/** Credits for one delivered asset (per-asset ops), one call, or one row; 0 when free. */
export const unitPrice = (op: OperationSpec, plane?: Plane): number => {
  const p = op.price
  switch (p.per) {
    case "asset":
      return plane === undefined ? Math.max(p.credits.crypto, p.credits.equity) : p.credits[plane]
    case "call":
    case "row":
      return p.credits
    case "free":
      return 0
  }
}

/** The price rule in words, for `schema`, the root document and `docs pricing`. */
export const describePrice = (op: OperationSpec): string => {
  const p = op.price
  switch (p.per) {
    case "asset": {
      const planes = op.planes
      if (planes.length === 2 && p.credits.crypto !== p.credits.equity) {
        return `${p.credits.crypto} per crypto asset, ${p.credits.equity} per equity asset delivered`
      }
      const c = p.credits[planes[0] ?? "crypto"]
      return `${c} per delivered asset`
    }
    case "call":
      return `${p.credits} per call`
    case "row":
      return `${p.credits} per returned row`
    case "free":
      return "0"
  }
}
