/**
 * Result schemas of the 23 operations, as DECISIONS.md fixes them. They feed OpenAPI, `schema` and MCP
 * `outputSchema`. Market measurements are numbers; anything filed is an exact decimal string.
 */
import { Schema } from "effect"
import { LowerBoundFigures, LowerBoundReasons } from "./crypto/VenueConventions.ts"

const Num = Schema.Number
const Str = Schema.String
const opt = Schema.optionalKey
const nullable = <S extends Schema.Top>(s: S) => Schema.NullOr(s)

/** A timestamp in ISO 8601 (UTC). */
export const Timestamp = Str.annotate({ description: "ISO 8601 timestamp, UTC" })
/** A calendar date YYYY-MM-DD. */
export const DateText = Str.annotate({ description: "date YYYY-MM-DD" })
/** An exact decimal as filed, as a string. */
export const Decimal = Str.annotate({ description: "exact decimal string as filed" })

export const FreshnessStatus = Schema.Literals(["live", "delayed", "stale", "closed"])

export const UnavailableReasons = [
  "not_covered",
  "no_data",
  "insufficient_history",
  "source_stale",
  "source_down",
  "not_applicable"
] as const

/**
 * `{value, pctl}`: a measurement and its percentile rank (0 to 100) in the asset's own baseline; crypto values
 * add `n`, the number of baseline samples the percentile was computed over (the window's cadence says how
 * much history that is).
 */
export const Contextual = Schema.Struct({ value: Num, pctl: Num, n: opt(Schema.Int) })

export const Baseline = Schema.Struct({
  window: Str,
  cadence: Str,
  n: Schema.Int,
  source: opt(Str)
})

export const Unavailable = Schema.Record(
  Str,
  Schema.Struct({ reason: Schema.Literals(UnavailableReasons), detail: opt(Str) })
)

/** Fields every per-asset result carries. */
export const assetFields = {
  asset_id: Str,
  as_of: Timestamp,
  status: FreshnessStatus,
  next_update_at: Timestamp,
  unavailable: opt(Unavailable)
}

const VenueRate = Schema.Struct({ venue: Str, rate_8h_pct: Num, rate_pctl: Num, rate_pctl_n: opt(Schema.Int) })

/** One venue in `funding.by_venue`: `rate_pctl` is null (and named in `unavailable`) while its history is short. */
const VenueFunding = Schema.Struct({
  venue: Str,
  rate_8h_pct: Num,
  rate_pctl: nullable(Num),
  /** Samples of the venue's own 90-day hourly baseline behind `rate_pctl`. */
  rate_pctl_n: opt(Schema.Int),
  interval_hours: opt(nullable(Num)),
  predicted_rate_8h_pct: opt(nullable(Num)),
  next_funding_at: opt(nullable(Timestamp))
})

export const ReadResult = Schema.Struct({
  ...assetFields,
  symbol: Str,
  name: Str,
  class: Str,
  baseline: Baseline,
  assessment: opt(
    Schema.Struct({
      positioning: Schema.Struct({ state: nullable(Str), rule: Str }),
      structure: Schema.Struct({ trend_state: nullable(Str), rule: Str }),
      flow: Schema.Struct({ state: nullable(Str), rule: Str }),
      cascade_risk: Schema.Struct({ level: nullable(Str), rule: Str })
    })
  ),
  headline: Schema.Record(Str, Schema.Unknown),
  filings_indexed_through: opt(DateText)
})

const domain = <F extends Schema.Struct.Fields>(fields: F) => Schema.Struct({ ...assetFields, ...fields })

/**
 * `liquidations.lower_bound`: which figures are a floor (`figures`) and, per venue, why (`reason`: Binance's
 * snapshot stream, OKX's capped poll, a venue that publishes none, or one with none on record).
 */
export const LiquidationLowerBound = Schema.Struct({
  figures: Schema.Array(Schema.Literals(LowerBoundFigures)),
  venues: Schema.Array(Schema.Struct({ venue: Str, reason: Schema.Literals(LowerBoundReasons), detail: Str }))
})

export const DomainResults = {
  price: domain({
    usd: nullable(Num),
    return_24h_pct: opt(nullable(Contextual)),
    range_pos_7d_pct: opt(nullable(Contextual)),
    bid_usd: opt(nullable(Num)),
    ask_usd: opt(nullable(Num)),
    market: opt(Schema.Struct({ market_cap_usd: nullable(Num) }))
  }),
  funding: domain({
    funding: Schema.Struct({
      rate_8h_pct: nullable(
        Schema.Struct({ value: Num, pctl: Num, n: opt(Schema.Int), pctl_1y: nullable(Num), n_1y: opt(Schema.Int) })
      ),
      apr_pct: nullable(Num),
      bars_since_sign_flip: nullable(Schema.Int),
      venue_hot: nullable(VenueRate),
      venues: Schema.Int,
      by_venue: Schema.Array(VenueFunding),
      next_funding_at: nullable(Timestamp),
      venue_spread_8h_pct: nullable(Num),
      funding_band: nullable(Schema.Literals(["negative", "subdued", "neutral", "elevated", "stretched"]))
    })
  }),
  open_interest: domain({
    usd: nullable(Num),
    change_24h_pct: nullable(Contextual),
    basis_pct: nullable(Contextual),
    // Additive: `venue_counts` on a venue whose own figure counts both sides (`usd` is one side, as everywhere).
    by_venue: Schema.Array(Schema.Struct({ venue: Str, usd: Num, venue_counts: opt(Schema.Literals(["both_sides"])) }))
  }),
  orderflow: domain({
    net_taker_delta_24h_usd: nullable(Contextual),
    net_delta_pct_of_oi_24h: nullable(Contextual),
    exchange_premium_rate_pct: nullable(Contextual)
  }),
  liquidations: domain({
    total_24h_usd: nullable(Contextual),
    liq_imbalance_24h: nullable(Contextual),
    intensity_pct_of_oi_24h: nullable(Contextual),
    // Additive, present only when it applies: the figures are a lower bound, and the venues that make them one.
    lower_bound: opt(LiquidationLowerBound)
  }),
  liquidity: domain({
    spread_pct: nullable(Contextual),
    bid_ask_imbalance: nullable(Contextual),
    depth: nullable(Schema.Record(Str, Schema.Unknown))
  }),
  technicals: domain({
    timeframe: Str,
    rsi_14: nullable(Contextual),
    adx_14: nullable(Contextual),
    atr_14_pct: nullable(Contextual),
    moving_averages: opt(Schema.Record(Str, Schema.Unknown)),
    bar_at: opt(Timestamp),
    close: opt(Num),
    plus_di_14: opt(nullable(Num)),
    minus_di_14: opt(nullable(Num)),
    baseline: opt(Baseline)
  }),
  structure: domain({
    timeframe: Str,
    trend_state: nullable(Schema.Literals(["uptrend", "downtrend", "range"])),
    last_bos: nullable(Schema.Record(Str, Schema.Unknown)),
    session_levels: nullable(Schema.Record(Str, Schema.Unknown))
  }),
  profile: domain({
    sector: nullable(Str),
    market_cap_usd: nullable(Num),
    shares_outstanding: nullable(Decimal),
    // Additive (equity plane): identity and where the share count comes from.
    name: opt(Str),
    tickers: opt(Schema.Array(Str)),
    exchanges: opt(Schema.Array(Str)),
    industry: opt(nullable(Str)),
    sic: opt(nullable(Str)),
    fiscal_year_end: opt(nullable(Str)),
    shares_outstanding_as_of: opt(DateText),
    shares_outstanding_concept: opt(Str)
  }),
  valuation: domain({
    pe_ttm: nullable(Decimal),
    ps_ttm: nullable(Decimal),
    ev_ebitda_ttm: nullable(Decimal),
    // Additive: the last close the multiples were computed at, and each multiple's percentile among its own
    // daily values over the baseline (the exact multiple stays the decimal string above).
    price_usd: opt(nullable(Num)),
    pe_ttm_pctl: opt(nullable(Num)),
    ps_ttm_pctl: opt(nullable(Num)),
    ev_ebitda_ttm_pctl: opt(nullable(Num)),
    baseline: opt(Baseline)
  }),
  growth: domain({
    revenue_growth_yoy_pct: nullable(Decimal),
    eps_growth_yoy_pct: nullable(Decimal),
    free_cash_flow_growth_yoy_pct: nullable(Decimal),
    // Additive: the last day of the trailing twelve months compared.
    ttm_end: opt(nullable(DateText))
  }),
  fundamentals: domain({
    revenue_ttm: nullable(Decimal),
    eps_ttm: nullable(Decimal),
    free_cash_flow_ttm: nullable(Decimal),
    // Additive: the last day of the trailing twelve months.
    ttm_end: opt(nullable(DateText))
  })
} as const

const NextCursor = nullable(Str)

export const SeriesResult = Schema.Struct({
  ...assetFields,
  interval: Str,
  range: Str,
  bars: opt(Schema.Array(Schema.Struct({ t: Timestamp, o: Num, h: Num, l: Num, c: Num, v: Num }))),
  summary: opt(Schema.Record(Str, Schema.Unknown)),
  next_cursor: opt(NextCursor)
})

export const FinancialsResult = Schema.Struct({
  ...assetFields,
  // Additive: the day the statements are shown as known on, when `as_known_on` was given.
  as_known_on: opt(DateText),
  periods: Schema.Array(
    Schema.Struct({
      id: Str,
      form: Str,
      accession: Str,
      filed_at: DateText,
      restated: Schema.Boolean,
      start: nullable(DateText),
      end: DateText,
      // Additive: some value of the period is derived (a quarter from year-to-date figures, e.g. Q4 = FY - 9M).
      derived: opt(Schema.Boolean)
    })
  ),
  values: Schema.Record(
    Str,
    Schema.Struct({
      unit: Str,
      by_period: Schema.Array(nullable(Decimal)),
      basis_concepts: opt(Schema.Array(Str))
    })
  )
})

export const EventsResult = Schema.Struct({
  ...assetFields,
  events: Schema.Array(
    Schema.StructWithRest(Schema.Struct({ type: Str, date: DateText }), [Schema.Record(Str, Schema.Unknown)])
  ),
  insider_summary_90d: opt(
    Schema.Struct({
      open_market_buys: Schema.Int,
      open_market_sales: Schema.Int,
      net_shares: Decimal,
      unique_insiders: Schema.Int,
      // Additive: the window's first and last day.
      from: opt(DateText),
      through: opt(DateText)
    })
  ),
  next_cursor: NextCursor
})

export const HoldersResult = Schema.Struct({
  ...assetFields,
  // The latest quarter any holder reported; null when no 13F report lists the company.
  report_period: nullable(DateText),
  holders: Schema.Array(
    Schema.Struct({
      filer_cik: Str,
      name: Str,
      shares: Decimal,
      value_usd: Decimal,
      pct_of_shares_outstanding: nullable(Num),
      change_shares: nullable(Decimal),
      filed_at: DateText,
      // Additive: the holder's own report period, and the report cited (form beside accession).
      report_period: opt(DateText),
      form: opt(Str),
      accession: opt(Str)
    })
  ),
  shares_outstanding: opt(Decimal),
  shares_outstanding_as_of: opt(DateText),
  next_cursor: NextCursor
})

export const RankResult = Schema.Struct({
  as_of: Timestamp,
  // Additive: the ranking's freshness clocks, like every other result.
  status: Schema.Literals(["live", "delayed", "stale"]),
  next_update_at: Timestamp,
  metric: Str,
  direction: Str,
  rows: Schema.Array(Schema.Struct({ asset_id: Str, symbol: Str, score: Num, extreme_metrics: Schema.Array(Str) })),
  coverage: Schema.Struct({
    scanned: Schema.Int,
    ranked: Schema.Int,
    excluded: Schema.Int,
    excluded_by_reason: Schema.Record(Str, Schema.Int)
  }),
  next_cursor: NextCursor
})

export const DocsResult = Schema.Struct({ section: Str, markdown: Str })

export const SchemaResult = Schema.Record(Str, Schema.Unknown)

const ResolveMatch = Schema.Struct({
  asset_id: Str,
  plane: Schema.Literals(["crypto", "equity"]),
  symbol: Str,
  name: Str,
  tier: Str,
  network: opt(Str),
  score: Num,
  warnings: Schema.Array(Schema.Struct({ code: Str, message: Str, asset_id: opt(Str) }))
})

export const ResolveResult = Schema.Struct({
  query: Str,
  best: nullable(ResolveMatch),
  matches: Schema.Array(ResolveMatch),
  coverage: Schema.Struct({
    crypto: Schema.Struct({ matches: Schema.Int }),
    equity: Schema.Struct({ matches: Schema.Int })
  }),
  // Additive: only when nothing matches, the nearest symbols and names, nearest first.
  suggestions: opt(
    Schema.Array(
      Schema.Struct({
        asset_id: Str,
        plane: Schema.Literals(["crypto", "equity"]),
        symbol: Str,
        name: Str,
        tier: Str,
        matched: Schema.Literals(["symbol", "name", "alias"]),
        distance: Schema.Int
      })
    )
  )
})

/** The health of one source component feeding an asset (`coverage`, one-asset form). */
export const CoverageSource = Schema.Struct({
  source: Str,
  venue: Str,
  component: Str,
  last_success_at: nullable(Timestamp),
  lag_seconds: nullable(Num),
  status: Schema.Literals(["live", "delayed", "stale"]),
  error: opt(Str),
  detail: opt(Str)
})

export const CoverageRow = Schema.Struct({
  asset_id: Str,
  plane: Schema.Literals(["crypto", "equity"]),
  symbol: Str,
  name: Str,
  tier: Str,
  alive: Schema.Boolean,
  operations: Schema.Array(Str),
  sources: opt(Schema.Array(CoverageSource))
})

export const CoverageResult = Schema.Union([
  Schema.Struct({
    rows: Schema.Array(CoverageRow),
    next_cursor: NextCursor,
    // Additive: on the first page of a browse, the health of every source feeding the planes browsed.
    sources: opt(Schema.Array(CoverageSource))
  }),
  CoverageRow
])

export const UsageResult = Schema.Struct({
  key_id: Str,
  credits_remaining: Num,
  rate_limit: Schema.Struct({ limit: Schema.Int, remaining: Schema.Int, reset_at: Timestamp })
})

/** `{data: R}`. */
export const single = <S extends Schema.Top>(result: S) => Schema.Struct({ data: result })

/** A batch: `{data: [R], refused: [{id, reason}]}`. */
export const batch = <S extends Schema.Top>(result: S) =>
  Schema.Struct({
    data: Schema.Array(result),
    refused: Schema.Array(
      Schema.Struct({ id: Str, reason: Schema.Literals(["unknown_asset", "plane_mismatch", "not_covered"]) })
    )
  })
