/**
 * What clients need to know about the equity plane, as markdown for the `docs` sections (`domains`): the
 * concept mapping, periods, restatements, derived quarters and TTM, rounding, insider and holders rules,
 * freshness. Generated from the same tables the code uses, so the two cannot drift apart.
 */

import { RATIO_DECIMALS } from "./Exact.ts"
import { INSIDER_WINDOW_DAYS } from "./Insider.ts"
import { LineItems, type Statement } from "./Statements.ts"

const STATEMENT_TITLES: { readonly [S in Statement]: string } = {
  income: "Income statement (`income`)",
  balance: "Balance sheet (`balance`)",
  cash_flow: "Cash-flow statement (`cash_flow`)"
}

const mappingTable = (statement: Statement): string => {
  const rows = LineItems.filter((l) => l.statement === statement).map((l) => {
    const source =
      l.minus === undefined
        ? l.concepts.map((c) => `\`${c}\``).join(", then ")
        : `derived: \`${l.minus[0]}\` - \`${l.minus[1]}\` of the same period`
    return `| \`${l.key}\` | ${l.unit} | ${source} |`
  })
  return [
    `#### ${STATEMENT_TITLES[statement]}`,
    "",
    "| line | unit | us-gaap concepts, in priority order |",
    "|---|---|---|",
    ...rows
  ].join("\n")
}

/** The equity plane's documentation, markdown. */
export const EquityDoc: string = [
  "## Equity plane",
  "",
  "Companies are identified as `eq:<CIK>:<TICKER>` (the SEC's CIK without leading zeros). Everything filed is served as the exact decimal string the company filed (never a float); market measurements (prices, market cap) are JSON numbers.",
  "",
  "**Which companies.** Every company of the SEC's ticker list (`company_tickers_exchange.json` or `company_tickers.json`, about 10,000) is an asset as soon as the list is read, and every ticker is one: `eq:<CIK>:<TICKER>` for each row, the company's other tickers among its `resolve` aliases. So is an issuer a Form 4 names (its CIK and trading symbol; a symbol such as `NONE` gives no ID), as soon as that Form 4 is in. Until its submissions feed is in, a company is named as the ticker list (or its latest Form 4) names it, with the listed exchange, and its `profile` has no SIC or fiscal year end (`null`) and so no `sector` (`unavailable`, `no_data`); once in, the feed describes it. Each operation answers from what is in for the company: `events` from its submissions feed, Form 4s and facts, `holders` from the 13F reports listing it (by CUSIP, or by its name while no CUSIP is on file), `financials`, `growth` and `fundamentals` from its companyfacts, and without them an answer with `unavailable` (`no_data`; `financials` says the company's facts are not ingested yet), never `unknown_asset`; `alive` stays `false` until a filing of the last 400 days or a current price is in. A 13F row carries no CIK: an issuer that only a 13F table names is reached through the company the ticker list or its filings make of it. `resolve` and `coverage` list the companies from the store through a one-minute snapshot (counts per table, never a company's filings), and on a database every read of the store goes through a one-minute cache, so what `market-data ingest` loads into a running service's database shows within a minute.",
  "",
  "Tiers: `full` covers a company with daily prices (every equity operation; `holders` from 13F reports where any list the company), `equity` a company known from its filings only (`read`, `profile`, `growth`, `fundamentals`, `financials`, `events`, and `holders`, which needs no price; what needs a price is `not_covered`).",
  "",
  "### Financial statements (`financials`)",
  "",
  "Each line item takes, for each period, the first concept of its list (below) that the company filed for exactly that period, so a company that switched concepts (say from `SalesRevenueNet` to `RevenueFromContractWithCustomerExcludingAssessedTax`) still has one continuous line. With `basis_concepts=true` each line lists the concepts its values came from. Lines without any value in the periods shown are left out. Units: `USD`, `USD_per_share`, `shares`.",
  "",
  mappingTable("income"),
  "",
  mappingTable("balance"),
  "",
  mappingTable("cash_flow"),
  "",
  "**Periods.** A duration's length decides its kind: about 3 months (80 to 100 days) is a `quarter`, about 6 or 9 months (170 to 200, 260 to 290 days) is `ytd` (year to date), about 12 months (350 to 380 days) is `annual`. Balance-sheet lines are instants, read at the period's end. Periods run newest first, each with `start` and `end`, and an `id` such as `FY2025`, `Q1 FY2026` or `9M FY2025` (the fiscal year and period of the filing that reported the period as its own).",
  "",
  "**Which value is served.** The value of the latest periodic report that reported the line and period (by filing date, then accession): 10-K, 10-Q, 20-F, 40-F, 10-KT (and the older 10-QT, 10-KSB, 10-QSB, 10-K405) and their amendments (`/A`); a later periodic report that restates the period wins. A figure from any other form (a DEF 14A proxy statement's pay-versus-performance table, an 8-K, an S-1, a 424B prospectus) never replaces a periodic report's, even when filed later, and is served only where no periodic report carries that period, its `form` showing where it came from. A period's `accession`, `form` and `filed_at` name the filing cited among its income and cash-flow values (balance values when it has no others), by the same rule. `restated: true` means a filing before the cited one reported a different value for some line of the period (a restatement, or per-share figures adjusted for a later split); both values are kept. `as_known_on` applies the same rule to the filings filed by that day. Every cited figure carries `form` beside `accession` (financials periods, `dividends` and `splits` events, holders' 13F reports).",
  "",
  "**Derived quarters.** Companies file their fourth quarter only inside the annual report, and many file cash flows only year to date. A quarter nobody filed is derived from year-to-date figures of the same fiscal year: Q4 = FY - nine months, Q3 = nine months - six months, Q2 = six months - Q1, exactly. A period with a derived value carries `derived: true`. Share counts (weighted averages) are not additive and are never derived. Per-share figures (EPS, dividends) are derived the same way, which is how a fourth-quarter EPS is commonly stated; it can differ by a cent from an EPS computed on the quarter's own share count.",
  "",
  "### Trailing twelve months, growth and multiples",
  "",
  "**TTM** of a line at a period end: the annual value when the period end closes a fiscal year; otherwise the sum of the four consecutive quarters ending there (filed or derived); otherwise FY + year to date - the prior year's same year to date. `fundamentals` serves TTM revenue, diluted EPS (basic where no diluted EPS is filed) and free cash flow (operating cash flow - capital expenditure) at the latest period end that has one, with `ttm_end`. All sums are exact.",
  "",
  `**Growth** (\`growth\`): (TTM - TTM a year earlier) / |TTM a year earlier| x 100, the earlier TTM ending 355 to 375 days before. Not meaningful from a zero or negative base (\`null\`, \`not_applicable\`); without a TTM a year earlier, \`insufficient_history\`.`,
  "",
  "**Multiples** (`valuation`, and `pe_ttm` in the equity `read` headline) at the last daily close: `pe_ttm` = price / TTM diluted EPS; `ps_ttm` = market cap / TTM revenue; `ev_ebitda_ttm` = (market cap + short- and long-term debt - cash and equivalents - short-term investments) / (TTM operating income + TTM depreciation and amortization), balance lines at their latest filed date (a debt or investments line the company does not file counts as zero; cash must be filed). A zero or negative denominator (losses) gives `null` with `not_applicable`. `valuation` also ranks each multiple among its own daily values over the last year (`pe_ttm_pctl`, `ps_ttm_pctl`, `ev_ebitda_ttm_pctl`, 0 to 100): each day's close over the TTM figures of the latest period whose filings were in by that day (today's values for those periods, so restated and split-adjusted like the prices), with today's share count and net debt; below 30 daily values the percentile is `insufficient_history`.",
  "",
  `**Rounding.** Ratios and percentages derived from filed figures are exact decimals rounded to ${RATIO_DECIMALS} decimal places, half to even (banker's rounding), e.g. \`"21.1538"\`. Sums and differences of filed figures are not rounded. Market cap = last close x shares outstanding, a number rounded to cents.`,
  "",
  "**Shares outstanding** (`profile`, market cap, holders' percentages): the cover-page count `dei:EntityCommonStockSharesOutstanding` at its latest date (several values in one filing for one date are share classes and are added); without it, the latest `us-gaap:WeightedAverageNumberOfDilutedSharesOutstanding`. `sector` is the SEC's SIC division of the company's SIC code; `industry` its SIC description.",
  "",
  "### Events (`events`)",
  "",
  "One stream, newest first; every event has `type` (`filings`, `insider`, `dividends` or `splits`, as in the `types` parameter) and `date`: filings by EDGAR acceptance time (every form, Form 4s included, with `form`, `accession`, `filed_at`, `accepted_at`, `url`); insider transactions from Form 4 (one event per table row, dated by the transaction, with the insider, role, code, shares, price and holdings after); dividends declared per share by fiscal quarter (dated at the quarter's end; a fourth quarter derived as FY - nine months is flagged `derived`); stock splits from the split-ratio facts. `since` keeps events on or after a date; `form` keeps filings of one form (other types are unaffected). Pages follow `next_cursor`.",
  "",
  `**Amendments.** A Form 4/A replaces the Form 4 it amends (same issuer and reporting owners, filed on the amendment's date of original submission, or for the same period of report when the amendment does not give the date); of several amendments the latest wins.`,
  "",
  `**Insider summary** (\`insider_summary_90d\`, with \`types\` including \`insider\`): over the ${INSIDER_WINDOW_DAYS} days ending today (transaction dates, amendments applied), \`open_market_buys\` counts non-derivative purchases (code P), \`open_market_sales\` non-derivative sales (code S), \`net_shares\` is shares bought minus shares sold in them (exact), \`unique_insiders\` the reporting owners with at least one of them. Grants (A), exercises (M), tax withholding (F) and gifts (G) are not trading and are not counted.`,
  "",
  "### Holders (`holders`)",
  "",
  "From 13F-HR reports. A 13F row belongs to a company by its CUSIP (or, when no CUSIP of the company is on file, by the issuer name with corporate suffixes removed). For each filer the latest report counts (for one period, an amendment replaces the earlier report); a filer whose latest report no longer lists the company is not a holder. `shares` and `value_usd` add up the filer's rows for the company (shares only: put/call and principal-amount rows are left out; values before 2023 were filed in thousands and are in dollars here). `change_shares` compares with the filer's report for the previous quarter (0 shares if it did not list the company; `null` when the filer has no report for that quarter). `pct_of_shares_outstanding` = shares / shares outstanding x 100, 4 decimals. Largest holders first; `report_period` is the latest quarter any holder reported.",
  "",
  "### Prices, technicals and freshness",
  "",
  "Equity prices are daily bars (`t` = the session's 09:30 New York open) of closed sessions only: while a session runs, the newest bar is the previous session's, and today's arrives with the close (`next_update_at`). `price.return_24h_pct` is the last close against the previous session's close; `range_pos_7d_pct` places the last close in the high-low range of the last 7 calendar days (0 at the low, 100 at the high). `technicals` uses Wilder's RSI, ADX and ATR (period 14) on daily bars (`timeframe=1d`, the equity default; an intraday timeframe is refused `422 not_covered`, uncharged, with `param` `timeframe`: there is nothing to serve) with 20/50/200-bar simple moving averages. Percentiles rank a value among the company's own daily values of the last year (`baseline` window `1y`, cadence `1d`); with fewer than 30 values the measure is `insufficient_history`. `series` serves `1d`, `1w` (weeks from Monday) and `1mo` bars; an intraday `interval` is refused `422 not_covered`, uncharged, with `param` `interval`.",
  "",
  "**Market calendar** (what `status`, `next_update_at` and the expected last bar follow): the NYSE's, true to history from 1970. Each holiday counts from the year it applied: Martin Luther King Jr. Day from 1998, Juneteenth from 2022, Washington's Birthday and Memorial Day on Mondays from 1971 (on 22 February and 30 May before), Election Day in 1972, 1976 and 1980; Good Friday every year; a Saturday holiday is observed the Friday before (New Year's Day excepted), a Sunday one the Monday after. One-off closures: 1972-12-28, 1973-01-25, 1977-07-14, 1985-09-27, 1994-04-27, 2001-09-11 to 09-14, 2004-06-11, 2007-01-02, 2012-10-29 and 10-30, 2018-12-05, 2025-01-09. Early closes at 13:00: the day after Thanksgiving (from 1993), Christmas Eve on a Monday to Thursday (from 1996), July 3 on a Monday, Tuesday or Thursday (from 1995) or a Wednesday (from 2013), Friday July 5 (1996 to 2012), 1997-12-26 and 2003-12-26 (14:00 on a few earlier days). Sources: the NYSE's holidays and trading hours page, its historical record of closings, and its notices. Unscheduled late opens are not modelled. The calendar never refuses a price a source published: a bar on a weekday it has closed is kept (`ingest prices` warns about it); weekend dates are refused.",
  "",
  "**Where prices come from.** Under the simulated feed, from the simulated market. In live mode, from the daily price connector (`MARKET_DATA_PRICES=yahoo`, the default) and from files loaded with `market-data ingest prices`, into the same store. The connector's source is Yahoo Finance's chart endpoint (`/v8/finance/chart/<TICKER>?interval=1d`, JSON): keyless but unofficial and undocumented; Yahoo publishes no terms for programmatic use (its general terms allow personal, non-commercial use), no rate limit, and may change or withdraw it, so `ingest prices` stays for operators with their own data. (Stooq's daily CSV, the other keyless candidate, now reportedly wants a key and answers scripts with an HTML proof-of-work page.) Every equity asset is fetched (one ticker per CIK), spread over time at `MARKET_DATA_PRICES_PER_MINUTE` requests per minute (default 60); a ticker is fetched once per closed session, after the close, and only closed sessions are stored. Prices are split-adjusted (a split re-reads the ticker's stored history), not dividend-adjusted, and read to the source's own price precision. A blocked or failing source (an HTML page instead of data, 403, 429, 5xx, a timeout) stores nothing; `coverage` with an `id` lists the source as venue `yahoo`, component `bars` under `sources`, with its status and error, and the answers age to `stale` rather than serve made-up data.",
  "",
  "`status` of price-based answers: `closed` outside the US regular session (09:30 to 16:00 New York on exchange trading days, to 13:00 on the scheduled half days; `next_update_at` is the next open); in session `live` when the last bar is the last closed session (under the simulated feed), `delayed` when 1 to 3 sessions behind, and `stale` when more than 3 behind. In live mode prices are daily closes published after each close, so in session the newest price is the previous session's close and the answer says `delayed` (the source's delay: one session). Answers with a figure that moves with the price carry the price's clocks (and its `Cache-Control`), not the next filing's: `valuation`, the `read` headline, and `profile` whenever it has a `market_cap_usd`. Filings-based answers (`profile` without a market cap, `fundamentals`, `growth`, `financials`, `events`, `holders`, and `read` for the `equity` tier) are `live` while the latest periodic report (10-K, 10-Q, 20-F, 40-F) is at most 135 days old, `delayed` up to 405 days, then `stale`; their `next_update_at` is the expected next periodic report (latest + 91 days) for statement-based answers and the next moment EDGAR accepts filings (business days 06:00 to 22:00 New York; while it accepts them, the start of the next minute) for `events` and `holders`, and for a statement-based answer whose expected report is overdue. The equity `read` carries `filings_indexed_through`: in live mode the last EDGAR day through which every followed filing of every company has been processed (see Live EDGAR below), otherwise (and until live mode has completed a day) the latest filing date on file for the company.",
  "",
  "### SEC bulk archives (`market-data ingest sec`)",
  "",
  "`market-data ingest sec companyfacts.zip submissions.zip` loads the SEC's nightly bulk archives (one JSON document per company, `CIK##########.json`; `submissions.zip` also holds the older pages) as downloaded, never extracted: each entry is inflated in memory, its CRC-32 checked against the archive's directory, parsed by the same parsers as single files and written whole in its own transaction (`COPY` on PostgreSQL and PGlite), so a company answers exactly as when its files are ingested one by one. A corrupt entry (bad CRC-32, truncated data) or one that is not a valid document is named with its reason and writes nothing; the others load and the command exits 1. Each loaded entry is marked with its CRC-32 and size: an ingest run again (after a kill, or on the next night's archive) skips the entries loaded unchanged and loads the changed ones. A crash loses at most the last entries committed, marks included, which the next run loads again. An archive still being downloaded has no central directory yet and is refused whole.",
  "",
  "### Live EDGAR (live mode)",
  "",
  "Source: SEC EDGAR, public, no key; every request names the operator (`MARKET_DATA_SEC_USER_AGENT`, of the form `Name email`; live mode refuses to start without it) and all SEC requests of the service share one limiter: at most 10 per second as the SEC counts them (the SEC's fair-access limit; `MARKET_DATA_SEC_MAX_RPS` sets it lower). Every company, through EDGAR's latest-filings feed (`cgi-bin/browse-edgar?action=getcurrent`, its 100 newest entries every 2 minutes) and its daily form index (`Archives/edgar/daily-index/<year>/QTR<q>/form.<date>.idx`, read every 30 minutes for a newly published day): each new Form 4, 13F-HR, 10-K, 10-Q and 8-K (and amendments), deduplicated by accession (a Form 4 is listed under its issuer and each reporting owner), is fetched (Form 4: its XML, parsed into `insider` events of the issuer; 13F-HR: primary document and information table, into `holders`), and the companies that filed (a Form 4's issuer, a 10-K/10-Q/8-K's filer) have their submissions (so `events` lists the filing, every form) and, when a new XBRL filing appeared, their companyfacts refreshed. The companies named in `MARKET_DATA_SEC_CIKS` are also read every 10 minutes.",
  "",
  "Freshness and limits: a followed filing usually reaches `events` within a few minutes of EDGAR's acceptance, from the latest-filings feed; one the feed missed (more than 100 filings between two polls, or a failed fetch) arrives with that day's index, which EDGAR publishes after the day ends (in the evening, New York time); the named companies within 10 minutes. Only the daily index moves the watermark. The follower's watermark only moves to a day whose followed filings were all stored (a document that is not what its format promises, or still missing after three runs, is given up and named in the source status), and never past a day with a failed fetch: a failure leaves `filings_indexed_through` where it was. Throttling answers (HTTP 429, 503, 403 \"Request Rate Threshold Exceeded\") stop the run and back off (2 s doubling, at most 5 minutes, never sooner than `Retry-After`); the source status (`sources` in `coverage?id=`, venue `sec`, components `dailyIndex` and `latestFilings`) shows it `failing` with the error meanwhile, and its `lag_seconds` is counted from the end of the last day processed. On a first start the follower begins at the newest published day; earlier history comes from `market-data ingest sec` and the named companies."
].join("\n")
