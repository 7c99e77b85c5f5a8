/**
 * What the service tells its clients (and operators) about the live sources: venues, endpoints, unit
 * conversions, cadences, request limits, and what freshness reports when a source lags or fails. Kept beside the
 * connectors so that a change to one is a change to the other.
 */
import { STREAM_CADENCE_MS } from "@market-data/core"
import { componentCadenceMs } from "./CryptoFeed.ts"
import { LiveEnvironment } from "./LiveConfig.ts"
import { SEC_DAILY_INDEX_POLL_MS, SEC_DOCUMENT_LOOKBACK_DAYS, SEC_LATEST_POLL_MS, SEC_POLL_MS } from "./LiveFeeds.ts"
import { PRICES_BACKFILL_DAYS, PRICES_DEFAULT_PER_MINUTE, PRICES_POLL_MS } from "./PriceFeed.ts"
import { BACKOFF_BASE_MS } from "./Schedules.ts"
import { LIQUIDATION_REFUSED_RETRY_MS, StreamVenues } from "./stream/Liquidation.ts"
import { LiquidationProtocols, StreamProtocols } from "./stream/Protocols.ts"
import { LiveVenues } from "./Venue.ts"

const minutes = (ms: number) => `${ms / 60_000} min`
const seconds = (ms: number) => `${ms / 1000} s`

/** Each venue's market streams and the limits the connection manager keeps, from the protocols themselves. */
const streamTable = (): string =>
  [
    "| venue | streams | topics per connection | per subscribe message | client messages per second | connects per second | rotated before | keep-alive | dead after silence | symbol served from REST after |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...LiveVenues.map((venue) => {
      const p = StreamProtocols[venue]
      if (p === undefined) return `| ${venue} | none yet: polled over REST | | | | | | | | |`
      const l = p.limits
      return `| ${venue} | ${p.describe} | ${l.topicsPerConnection} | ${l.topicsPerMessage} | ${l.messagesPerSecond} | ${l.connectsPerSecond} | ${
        l.maxLifetimeMs === undefined
          ? "no age limit"
          : `${l.maxLifetimeMs / 3_600_000} h (replaced about 30 min before)`
      } | ${p.ping === undefined ? "the venue's pings" : `\`${p.ping}\` every ${seconds(l.pingEveryMs)}`} | ${seconds(l.silenceMs)} | ${seconds(l.symbolSilenceMs)} |`
    })
  ].join("\n")

/** Each venue's liquidation stream and its limits, from the protocols themselves. */
const liquidationTable = (): string =>
  [
    "| venue | stream | topics per connection | per subscribe message | keep-alive | dead after silence | a bucket meets the store by |",
    "|---|---|---|---|---|---|---|",
    ...StreamVenues.map((venue) => {
      const p = LiquidationProtocols[venue]
      const l = p.limits
      return `| ${venue} | ${p.describe} | ${l.topicsPerConnection} | ${l.topicsPerMessage} | \`${p.ping}\` every ${seconds(l.pingEveryMs)} | ${seconds(l.silenceMs)} | ${p.merge === "add" ? "adding (the stream is the only writer)" : "the larger count (the REST poll writes the same buckets)"} |`
    }),
    "| hyperliquid | none: Hyperliquid publishes no market-wide liquidations | | | | | |"
  ].join("\n")

export const liveSourcesDoc = `# Live sources

With \`MARKET_DATA_FEED=live\` the crypto plane is filled from four derivatives venues' public websocket streams
(top of book, mark, index, funding, the forming bar, and three venues' liquidations) and REST APIs (history, listings, depth) and the equity plane from SEC EDGAR and a daily price source (Yahoo
Finance's chart endpoint), into the same store the simulated feed fills. Every answer says so:
\`X-Data-Source: live\` and \`baseline.source\`.

## Crypto venues

| venue | API | symbols (example: Bitcoin) |
|---|---|---|
| Binance | USD-M futures \`fapi\` | \`BTCUSDT\`; PEPE trades as \`1000PEPEUSDT\` |
| Bybit | v5, category \`linear\` | \`BTCUSDT\`; \`1000PEPEUSDT\` |
| OKX | v5, USDT-margined swaps | \`BTC-USDT-SWAP\` |
| Hyperliquid | info API (\`POST /info\`) | \`BTC\`; PEPE trades as \`kPEPE\` |

Each venue symbol maps to one canonical asset (\`BTCUSDT\`, \`BTC-USDT-SWAP\` and \`BTC\` are all
\`crypto:bitcoin\`) through the asset registry.

### Units

- Prices are USD per token. \`1000PEPEUSDT\` and \`kPEPE\` quote 1,000 PEPE: their prices are divided by 1,000 and
  their sizes multiplied by 1,000. USDT is counted as USD.
- Volumes are base tokens. OKX counts contracts: a quantity in contracts is multiplied by \`ctVal x ctMult\` from
  its instruments list (BTC-USDT-SWAP: 0.01 BTC per contract); candle volume is OKX's \`volCcy\` (already in tokens).
- Open interest is USD of one side (each long matched by a short counted once): Binance \`openInterest\` (units of
  the symbol) x mark price; Bybit \`singleOpenInterestValue\` (or half of \`openInterestValue\`, which counts both
  sides); OKX \`oi\` (contracts) x ctVal x ctMult x mark price; Hyperliquid half of \`openInterest\` (coins, both
  sides) x \`markPx\`. History: Binance \`sumOpenInterestValue\`, OKX \`oiUsd\` (both USD), Bybit one side's coins x the
  open of the 15-minute bar. Streamed likewise (Bybit and Hyperliquid tickers; Binance streams no open interest).
  The \`domains\` docs ("Venue conventions") and the answers (\`open_interest.by_venue[].venue_counts\`) say which
  venues count both sides.
- Funding rates are fractions per the venue's interval (Binance and Bybit publish per-symbol intervals: 8 h, 4 h
  or 1 h; OKX's follows from \`fundingTime\` to \`nextFundingTime\`; Hyperliquid settles hourly, and every
  8 hours before mid-2023). OKX history stores the settled \`realizedRate\`.
- Taker buy/sell volume (USD per 15 minutes): Binance from its klines (taker buy quote volume, and quote volume
  minus it); OKX from \`rubik/stat/taker-volume-contract\` in USDT. Bybit and Hyperliquid publish none over REST.
- Liquidations (USD of longs and of shorts liquidated):
  - OKX over its websocket, \`liquidation-orders\` of \`instType\` \`SWAP\` on
    \`\${MARKET_DATA_OKX_WS_BASE_URL}/ws/v5/public\` (one subscription for every swap), and over REST,
    \`public/liquidation-orders\` (the newest 100 filled orders of each instrument family), every
    ${minutes(componentCadenceMs("okx", "liquidations"))}, as its backfill and its fallback: \`sz\` contracts x ctVal x
    bankruptcy price \`bkPx\`; \`sell\` = a long liquidated. OKX pushes at most one liquidation order a second per
    instrument family and says the channel is not the total: a floor, like the REST list.
  - Binance over its websocket, \`!forceOrder@arr\` on \`\${MARKET_DATA_BINANCE_WS_BASE_URL}/market/stream\` (the
    routed endpoint of Binance's regular market streams): filled quantity
    \`z\` x average price \`ap\` of each terminal liquidation order (\`FILLED\`, or \`EXPIRED\` after a part fill;
    \`SELL\` = a long liquidated). Binance pushes at most one liquidation per symbol per second (the latest), so
    its totals under-count the busiest seconds: the venue's own limit, not the service's.
  - Bybit over its websocket, \`allLiquidation.<symbol>\` on \`\${MARKET_DATA_BYBIT_WS_BASE_URL}/v5/public/linear\`:
    size \`v\` x price \`p\` (\`Buy\` = a long liquidated), pushed every 500 ms.
  - Every venue's prints are summed per asset, side and one-minute bucket (OKX's REST rows too, so both OKX paths
    write the same rows: each side is written as the larger of the two counts, never their sum).
  - Hyperliquid publishes no market-wide liquidations, neither in its info API nor on its websocket
    (\`wss://api.hyperliquid.xyz/ws\`): the public market feeds (\`trades\`, \`l2Book\`, \`candle\`, \`allMids\`,
    \`bbo\`, \`activeAssetCtx\`) carry no liquidation flag, and liquidations appear only in feeds scoped to one
    user's address (\`userEvents\`, \`userFills\`). Hyperliquid therefore reports no liquidations component.
  Live liquidation measures are the sum over Binance, Bybit and OKX (those that are up). An asset with no
  liquidation on record anywhere has them listed under \`unavailable\` (\`no_data\`).

### Market streams (top of book, mark, index, funding, the forming bar)

Each perpetual's best bid and ask (with sizes), mark and index price and running funding rate come from the
venues' public websockets, applied as each frame arrives; REST keeps what it is good at (history backfill, the
listings, open-interest and taker history, the depth behind the top of book, and the fallback).

${streamTable()}

- One connection manager (\`stream/MarketStream.ts\`) runs every venue stream, the market streams above and the
  liquidation streams below; each venue's protocols (topics, requests, keep-alive, limits, frame reader) are in its
  folder (\`venues/<venue>/Stream.ts\`, \`Liquidations.ts\`). It spreads a venue's topics over as many connections as its
  limits ask, subscribes in batches under the venue's message rate, sends the keep-alive, and treats a connection
  silent past its limit as dead (a half-open link). A connection that drops reconnects after 1 s, doubling to 8 s
  at most, each delay drawn between half and all of it (never faster than the venue's connect rate), so a venue
  back from an outage is streamed again within seconds and many connections never return at once. Where the venue
  closes connections at a fixed age (Binance: 24 h) a replacement is opened and subscribed before then, and the old
  connection closed only once the new one is subscribed: no gap.
- New listings are subscribed and delistings unsubscribed on the open connections within seconds of the asset
  directory changing (each instance reads the venue's instrument list at start and every 30 minutes for contract
  sizes). A topic the venue refuses (a whole batch refused is asked again topic by topic) is named in the status
  \`detail\` and its symbol served from REST; it is asked again after 10 minutes.
- Freshness: the \`books\` (and, where streamed, \`fundingState\`) status of a streamed venue is the stream's: its
  newest time is the venue's event time of the last update applied, on a ${seconds(STREAM_CADENCE_MS)} cadence
  (\`live\` within it, \`delayed\` to three times it, \`stale\` beyond), so \`as_of\` and \`next_update_at\` follow
  the stream. A stream that is down (connection lost, silent, subscriptions unanswered) turns them \`stale\` at
  once with the reason (\`stream down since ...\`); the books job then polls every book of the venue each minute,
  and once it has delivered, the status is the REST one (its cadence, \`detail\` "served from REST polling") until
  the stream is back. A symbol the stream does not mention for the time in the table, or whose connection is down,
  or whose topic was refused, is served from its REST book the same way, alone: its \`books\` and \`fundingState\`
  statuses (in every answer about that asset) are the time of its own REST book and funding state on the REST job's
  cadence once the REST fallback has fetched it since the stream stopped serving it (\`stale\` until then), while
  the venue's other symbols read the stream. A symbol served again (after a reconnect) whose newest quote is from
  before, or older than the REST book fetched meanwhile, reads that quote's or book's time until its next frame. \`price\` is judged by its primary venue alone (the
  book it quotes), so another venue's stream going down does not turn it \`stale\`.
- Closed bars: Binance's, Bybit's and OKX's kline streams mark a bar's last update closed (\`x: true\`,
  \`confirm: true\`, \`confirm: "1"\`); Hyperliquid's \`candle\` pushes (its primaries only) come in trade order, so the
  first push of the next bar makes the last one of the bar before final.
  At each close the feed stores that bar as it came (only next to the bars stored before it, so never past a
  hole), waiting up to 15 s for the symbols whose closing frame comes late; the bars job then runs 17 s after the
  close and asks REST only for the bars not known final (a closing frame the stream missed, a symbol it does not
  serve). Without it, every close cost one REST kline request per perpetual, queued behind the depth run. The
  bars job asks every perpetual's new bars before any history, and its history pass gives way at the next close.
- Open interest: Bybit's \`tickers\`, OKX's \`open-interest\` channel (every 3 s on change) and Hyperliquid's
  \`activeAssetCtx\` carry it; \`open_interest\` answers those venues' rows from the stream (USD of one side, as of
  the stream's newest event), Binance's (no open-interest stream) from the 15-minute snapshots; the 24 h change, the
  basis and the percentiles stay on the stored snapshots.
- REST books on a streamed venue: every book once per 15-minute bucket (the depth behind the streamed top, and the
  book metrics behind \`liquidity\`'s percentiles), and each minute only the books the stream does not serve. So
  steady state polls no top of book; \`liquidity\` gives the time its depth was read as \`depth.as_of\`. Each venue's
  REST weight per minute is its \`rest\` source status (and the metric \`market_data_source_rest_weight_per_minute\`).
  Each depth run also reconciles every REST book with the streamed top of book of the moment (their mids within
  five streamed spreads or 0.5 %): disagreements are logged and counted in the \`rest\` status \`detail\` (the last
  run's, and since start).
- Frames that are not the venue's documented format, larger than 4 MB, or with an event time more than a day
  from the service clock are skipped whole and counted in the status \`detail\`.
- The market streams run on a worker thread of their own (\`stream/WorkerStreams.ts\`, \`StreamWorker.ts\`): every
  connection, frame and \`JSON.parse\` is the worker's, and what the frames change crosses to the thread that answers
  requests as numeric records, at most every 10 ms (\`stream/BoardWire.ts\`: one \`Float64Array\` a message, the
  asset and venue names sent once), applied there in place. At whole-market pace reading frames allocates about
  20 MB a second; on the answering thread its collections came between requests (paid \`price\` p99 2.5x to 8x its
  value with the books still). The listing jobs and the asset directory stay on the answering thread, which sends
  the worker each change of a venue's followed set; the worker's log lines are written by the answering thread's
  logger. A worker that stops (a crash) turns its venues' streams down with the reason, so their books go to
  REST, and a new worker starts after 1 s, doubling to 30 s. The worker thread runs at niceness 10
  (\`MARKET_DATA_STREAM_THREAD_NICE\`, 0 to 19; Linux keeps a niceness per thread, \`stream/ThreadPriority.ts\`), the
  answering thread at the process's: when both want a core, a request goes first, and the worker still has every
  cycle the answers leave. \`MARKET_DATA_STREAM_THREAD=off\` reads the frames on the answering thread instead.
  The liquidation streams (the leader's, a few frames a second) stay on the answering thread.
- Every instance equally fresh: each service instance holds its own market streams (public streams cost no request
  weight), leader or not; only the leader polls REST (history, listings, depth, fallback) and writes to the
  database. An instance that does not lead therefore answers quotes as fresh as the leader; its REST depth and
  history come from the database (re-read every minute). Cost per instance at today's listings: Binance 6
  connections (550 book tickers and 550 klines at 200 topics a connection, and the mark prices) plus the
  liquidation stream; Bybit 12 (555 tickers and 555 klines at 100) plus the liquidation streams; OKX 5 (249 swaps x 4
  public channels at 300 a connection, and 249 \`candle15m\` on one business connection) plus the liquidation
  stream; Hyperliquid 1 connection with 2 subscriptions per perpetual and a third (the forming bar) per coin it is the primary venue of (about 400). The liquidation streams run on
  the leader only: Binance 1 connection, Bybit 6 (555 topics at 100), OKX 1. Ten instances behind one IP: 60
  Binance, 120 Bybit and 40 OKX connections (plus the leader's liquidation streams), within their per-IP limits (Binance 300 connection attempts
  per 5 minutes, Bybit 500 per 5 minutes and 1,000 open, OKX 3 a second, each instance pacing its own connects);
  Hyperliquid's 1,000 subscriptions and 10 connections per IP hold two instances at most. Run more instances behind one IP with \`MARKET_DATA_HYPERLIQUID_WS_BASE_URL=off\` on
  all but two of them: those answer Hyperliquid's books from the REST books the leader stores (re-read every
  minute), and their \`books\` status says so. A venue's refusal that names no topic (Hyperliquid's per-IP caps)
  refuses the subscription it answers, which is then served from REST and asked again after 10 minutes.

### Liquidation streams

Binance, Bybit and OKX liquidations stream in over the same connection manager as the market streams, only on the
instance that ingests (the leader, which writes them to the database; the other instances read them there):

${liquidationTable()}

- Each stream follows the venue's perpetuals of the universe (live mode: the asset directory's, with the contract
  sizes of the venue's instrument list, read at start and every 30 minutes): a new listing is counted from then on
  (Bybit: its topic subscribed on a connection with room), without a restart. Binance's and OKX's single
  all-market topic needs no request per symbol. Bybit's topics are subscribed in requests of 50; a request the
  venue refuses is asked again topic by topic, so a symbol it no longer lists is refused alone and named in the
  status \`detail\` (\`not subscribed: <symbol> (<the venue's message>)\`).
- Counting: a frame's prints are counted whole or not at all, summed per asset, side and one-minute bucket, and
  written every 2 s. Binance's and Bybit's buckets are written whole (what the store held for the bucket when this
  process first wrote it, plus what it counted since), so a write repeated after a flush or a reconnect never
  counts an event twice, and a bucket a previous leader began keeps its part. OKX's REST poll writes the same
  one-minute buckets from its own list; the stream writes each side as the larger of its count and what the
  store holds (and the poll likewise), so no liquidation is counted twice, whichever path saw it (both are floors). While a stream serves a
  symbol (its connection up, its topic acknowledged) the asset gets a row at each 15-minute boundary, zero when
  nothing was liquidated: "no liquidations" is then an answer, not missing data; a refused symbol gets none.
- Connections: keep-alive, silence, reconnect and the connect pace as for the market streams (a link silent past
  the table's limit is dead and replaced; reconnects after 1 s, doubling to 8 s, each delay drawn between half and
  all of it; Binance's connection rotated before its 24 h with no gap). A refused topic is asked again after
  ${minutes(LIQUIDATION_REFUSED_RETRY_MS)}.

Freshness of a stream's \`liquidations\` component: a connected, subscribed stream renews its status every
minute (cadence ${minutes(componentCadenceMs("binance", "liquidations"))}), so it reads \`live\` even when
nothing is liquidated. A dropped connection, a half-open one (silent past its limit), a subscription request left
unanswered or a connect that does not complete within \`MARKET_DATA_LIVE_TIMEOUT_MS\`, or every topic refused, marks
it failing at once (\`stale\`, with the typed reason as \`last_error\`: \`network: ...\`, \`timeout: ...\`,
\`status: subscribe: subscription refused: ...\`), and the first success after the reconnect clears the flag.
OKX's stream records successes only: while it is down, its REST poll (still every
${minutes(componentCadenceMs("okx", "liquidations"))}) is the fallback, and its outcome is the status (a poll that
fails while the stream is up shows until the stream's next renewal, within a minute). Liquidations
that happened while a Binance or Bybit stream was down are not recovered (those venues keep no history of them);
OKX's REST poll backfills the last day's newest 100 orders per instrument family. Messages that are not the venue's
documented format are skipped whole and counted in the status \`detail\`.
The websocket base URLs default to the venues' public ones while the REST base URL is the venue's public API;
when a REST base URL points elsewhere (a replay server, a proxy) no stream runs unless its websocket base URL
is set too, and \`off\` turns a stream off.

### Cadences

| data | cadence |
|---|---|
| 15-minute bars (and Binance taker flow) | every ${minutes(componentCadenceMs("binance", "bars"))}, a few seconds after the bar closes: from the kline stream where it marks the closed bar (Binance, Bybit, OKX; REST 17 s after the close for what it missed), else over REST |
| the bar still forming | every minute (Hyperliquid every 3 minutes), rewritten until it closes: from the venue's kline stream where it streams one (Binance \`<symbol>@kline_15m\` with its taker flow, Bybit \`kline.15.<symbol>\`, OKX \`candle15m\` on its business endpoint \`/ws/v5/business\`, \`MARKET_DATA_OKX_WS_BUSINESS_BASE_URL\`: like any of the venue's connections, a business connection down turns OKX's stream down until it is back, and \`off\` streams no candles; Hyperliquid \`candle\` at \`15m\` for the coins it is the primary venue of), no REST request; over REST otherwise (a symbol the stream does not serve, and Hyperliquid's other coins, whose bars no answer reads: its \`candle\` subscription is one per coin and interval, with no all-asset form, and its 1,000 subscriptions per IP hold two instances' market streams at 2 per perpetual plus one per coin it is the primary of, a few dozen; a third for every perpetual would leave room for one instance only) |
| top of book, mark, index, funding state | as they happen, over the venues' market streams (above); REST fallback each minute for what a stream does not serve |
| mark/index and open-interest history rows, funding state over REST | every ${minutes(componentCadenceMs("binance", "openInterest"))} |
| order books over REST (venues without a stream, or a stream down) | every ${minutes(componentCadenceMs("binance", "books"))} while half the venue's request budget covers every instrument's book in that time, else every as many minutes as it needs (550 Binance perpetuals at depth weight 5: 6 minutes); the \`books\` status gives the cadence the runs measure (the cycle plus twice the last run's duration: 11 to 20 minutes for those 550 while the first hour's backfill shares the limiter); book metrics once per 15 minutes |
| funding settlements | every hour (status cadence: the venue's funding interval) |
| OKX taker volume | every 15 min |
| Binance, Bybit and OKX liquidations | as they happen, over a websocket, for every perpetual of the universe (in live mode the asset directory's: a listing the job adds is counted without a restart); written every 2 s, status renewed every minute. OKX's REST poll besides, every ${minutes(componentCadenceMs("okx", "liquidations"))} (backfill and fallback) |
| instruments (listings): the asset directory, each venue's perpetual and spot lists (Binance spot from \`api.binance.com\` while the USD-M base URL is the public one, else from that base URL) | at start, then every 30 minutes (\`MARKET_DATA_LIVE_LISTINGS_MINUTES\`, default 30: a change is seen within the hour); status component \`listings\` (failing while either list fails) |
| the public coin list (CoinGecko \`coins/list\`, venue \`coingecko\`) | with the listings, at most once a day (\`MARKET_DATA_COIN_LIST_URL\`, or \`off\`; off by default when a venue's base URL is not the public one) |

At first start each feed takes, before any history, every instrument's quote from the venue's bulk tickers (mark,
index, open interest, funding state) and the last day of 15-minute bars of each instrument that has none (one
request each: first those whose primary venue it is, then the others, each group busiest first), so every listed
perpetual is alive with its price and the day behind it: for 550 perpetuals at Binance's weights, within a minute
(\`adapters/sources/test/live/WholeMarketStart.test.ts\`). Then it backfills behind that day, the busiest assets (by
open interest) first: 15-minute bars for \`MARKET_DATA_LIVE_BACKFILL_DAYS\` (default 90), funding settlements for a
year, open-interest history and taker volume for up to 30 days (what the venues keep); for 550 Binance perpetuals
the 90 days take about an hour at the bucket below. Until an asset's history is there its percentiles say so
(\`insufficient_history\`, with their sample count). Later polls fetch only what is newer than the store holds. Each run
of the bars job asks every instrument's new bars first and only then the history behind, so a close during the
backfill is never queued behind another asset's history.
Binance's klines are asked for with as many bars as the window holds (weight 1 below 100 bars), so a poll's new bar
weighs 1, not 5. On the other venues the day is one request per perpetual too, so their buckets below give about a
minute for Bybit's 555 (10 requests a second) and OKX's 249 (5 a second); Hyperliquid's candle requests weigh 21,
so its day of bars reaches about 28 perpetuals a minute, those it is the primary venue of first.

The crypto universe in live mode is the asset directory (see \`docs?section=domains\`, "The asset directory"):
every linear USDT/USDC perpetual and every USDT/USDC spot pair the venues list (the feeds ingest the
perpetuals; a spot-only coin is a \`listed_token\` asset). A listing the hourly job finds new is taken by the feeds at
once: its bulk quote (premium index / tickers) first, then its bars and funding backfilled behind it, without a
restart. A listing job that fails keeps the last good directory (no venue's listings are delisted by a failed
fetch); its \`listings\` status says so, and on success its \`detail\` names every instrument it skipped
(also in the source summary on the first page of a \`coverage\` browse).

### Request limits

Each venue has its own limiter (a token bucket on the service clock), below the venue's published limit:

| venue | published limit | the service's bucket |
|---|---|---|
| Binance | 2,400 request weight per minute per IP | 1,000 weight per minute (klines 5, depth 5, all-symbol premium index 10, others 1) |
| Bybit | 600 requests per 5 s per IP | 50 requests per 5 s |
| OKX | 10 to 40 requests per 2 s per endpoint (trading statistics 5 per 2 s) | 10 requests per 2 s in all, 4 per 2 s on statistics |
| Hyperliquid | 1,200 weight per minute per IP | 600 weight per minute (l2Book 2, others 20, candles 1 more per 60) |
| SEC EDGAR | 10 requests per second (with a \`Name email\` User-Agent) | one request per 112 ms for every SEC request of the service (\`MARKET_DATA_SEC_MAX_RPS\`, 2 to 10: one per 1000 / (N - 1) ms, so the SEC never counts more than N in a second, even when a request is delayed on its way) |
| Yahoo Finance chart (daily prices) | none published (unofficial endpoint) | \`MARKET_DATA_PRICES_PER_MINUTE\` (default ${PRICES_DEFAULT_PER_MINUTE}), one at a time |

## SEC EDGAR

Covered companies (\`MARKET_DATA_SEC_CIKS\`): the submissions feed every ${minutes(SEC_POLL_MS)} (older pages
once, at first ingestion), companyfacts at first and whenever a new XBRL filing appears, and every new Form 4 /
4/A filed about the company (the raw XML of the filing). Institutional managers (\`MARKET_DATA_SEC_13F_FILERS\`):
their new 13F-HR reports (primary document and information table, found through the filing's folder
listing). Only accessions not yet in the store are fetched; at first start documents reach back
${SEC_DOCUMENT_LOOKBACK_DAYS} days. Every request carries \`MARKET_DATA_SEC_USER_AGENT\` (required in live mode, of the
form \`Name email\`: the service refuses to start without it).

Every company (\`MARKET_DATA_SEC_DAILY_INDEX\`, on by default): EDGAR's daily form index, looked for every
${minutes(SEC_DAILY_INDEX_POLL_MS)} (a day's index is published after the day ends). For each day after the watermark, in order:
new Form 4, 13F-HR, 10-K, 10-Q and 8-K filings (and amendments), deduplicated by accession, are fetched (a Form 4
through its folder's \`index.json\` and its XML; a 13F-HR's primary document and information table), then the
companies that filed (a Form 4's issuer, a 10-K/10-Q/8-K's filer) get their submissions and, on a new XBRL
filing, their companyfacts. The watermark (component \`dailyIndex\`, the equity \`read\`'s
\`filings_indexed_through\`) moves only to a day whose filings all went in; a failed fetch stops the run and leaves
it on the day before; a throttling answer (429, 503, 403 "Request Rate Threshold Exceeded"; a 403 S3
\`AccessDenied\` is EDGAR's "no such file") fails the run so the job backs off. A document still missing after
three runs, or unreadable, is given up and named in the status \`detail\`. The first start begins at the newest
published day. Between indexes, the latest-filings feed (\`cgi-bin/browse-edgar?action=getcurrent&output=atom&count=100\`,
every ${minutes(SEC_LATEST_POLL_MS)}; one entry per filing and role, deduplicated by accession) is processed the same
way (component \`latestFilings\`), so a filing shows within minutes; it never moves the watermark, and what it
stored the day's index does not fetch again.

## Daily prices (equities)

Source: Yahoo Finance's chart endpoint, \`GET /v8/finance/chart/<TICKER>?period1=..&period2=..&interval=1d\`
(\`MARKET_DATA_PRICES=yahoo\`, the default; \`off\` turns the connector off and leaves prices to
\`market-data ingest prices\`). It needs no key, but it is unofficial: Yahoo documents no terms for programmatic
use (its general terms allow personal, non-commercial use; check them before serving others), publishes no rate
limit, and may change or withdraw it. Stooq's daily CSV, the other keyless candidate, now reportedly wants a key
and answers scripts with an HTML proof-of-work page, so it is not used.

- What: one daily bar (open, high, low, close, volume) per session for every equity asset the store holds (the
  issuer list the equity directory serves: every company of the ticker list, every stored company, every Form 4
  issuer with a ticker), prices split-adjusted, not dividend-adjusted, read to the source's \`priceHint\`
  decimals. Bars are keyed by session open, like \`ingest prices\`, and a repeated bar replaces the stored one.
  Every ticker is its own series (bars keyed by CIK and ticker; share classes such as BRK-A and BRK-B trade
  apart), so every ticker of every issuer is fetched, one request each, and stored under that ticker; a ticker
  Yahoo does not know (a warrant, preferred or note line, a delisted symbol) is named in the status \`detail\` and
  the issuer's other tickers load all the same. An issuer with no ticker (a Form 4 issuer whose reports name none)
  is skipped and counted in the status \`detail\`.
- Delay: a session's bar exists once the session has closed; the service stores only closed sessions. While the
  market trades the newest price is therefore the previous session's close, and price-based answers say
  \`delayed\` (\`closed\` outside the session, \`stale\` more than 3 sessions behind).
- Cadence: a pass every ${minutes(PRICES_POLL_MS)} reads the issuer list with each ticker's newest bar (one
  grouped read of the store, not one per issuer) and fetches every ticker whose newest bar is older than the last
  closed session (each at most once per session); the others cost no request. A ticker with no bars gets
  ${PRICES_BACKFILL_DAYS} days of history, the others the days since their newest bar plus a week (corrections
  replace). Requests are spread at \`MARKET_DATA_PRICES_PER_MINUTE\` (at the default one per second, about
  10,000 tickers take under three hours). A split new to the service re-reads that ticker's whole stored range.
- Failures: a 403, 429, 5xx, a timeout, or a 200 answer that is not chart JSON (an HTML consent, CAPTCHA or
  proof-of-work page) is a source failure: nothing of it is stored, venue \`yahoo\` component \`bars\` turns
  \`failing\` with the error, and the pass retries with backoff (honouring \`Retry-After\`), resuming where it
  stopped. An unknown symbol (404 or a chart error) and rows with missing prices are skipped and named in the
  status \`detail\`.

## When a source lags or fails

- A request that times out, is refused, answers 429/418/5xx, or answers something that is not the documented
  format stores nothing of that answer and marks the components it feeds as \`failing\`: their freshness is
  \`stale\` at once, and results built on them say so (\`status: stale\`, and \`unavailable\` with
  \`source_stale\` or \`source_down\` where a component cannot be served).
- The job then retries with exponential backoff (${BACKOFF_BASE_MS / 1000} s, doubling, ±20 % jitter, at most the
  job's cadence or 5 minutes), never sooner than the venue's \`Retry-After\`; the first success clears the flag.
- A source that answers but lags shows in the age of its newest data: \`live\` within one cadence, \`delayed\` up
  to three cadences, \`stale\` beyond. \`next_update_at\` is the newest data time plus the cadence.
- A venue that stops listing a symbol: the other symbols keep flowing; that asset's own data ages and its
  freshness turns \`delayed\`, then \`stale\`.
- With several instances on one PostgreSQL, one instance (the holder of an advisory lock) ingests and all serve;
  if it dies, another takes over within seconds (its next lock attempt, every ${30_000 / 3 / 1000} s at the default 30 s lease).
- Starting in live mode without network access degrades visibly (every source \`failing\`, every result
  \`stale\`) and never stops the service.
- Each source component's health is kept: its newest data, when it last succeeded, whether it is failing and
  the last error text (until the next success); SEC EDGAR's as venue \`sec\` (\`filings\`, \`tickers\`, \`dailyIndex\`, \`latestFilings\`), the
  daily price connector's as venue \`yahoo\` (\`bars\`, cadence one day). \`coverage\` with an \`id\` lists it
  for the asset's venues (for an equity: SEC EDGAR and the price source) as \`sources\` (\`last_success_at\`,
  \`lag_seconds\`, \`status\`, \`error\`); the operator's \`market-data sources\` reads it from the database.

## Configuration

| variable | default |
|---|---|
${LiveEnvironment.map(([name, value]) => `| \`${name}\` | \`${value}\` |`).join("\n")}
`
