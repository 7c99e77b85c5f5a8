/**
 * The `docs` operation: eleven markdown sections written for agents. Everything that is data (operations,
 * parameters, defaults, prices, error codes, rules) is rendered from the registry and the error catalog, so
 * the documentation cannot drift from what the service does. Every example request shown is also listed in
 * `docsExamples`, and a test decodes each one through the registry.
 */

import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT
} from "./ConnectionLimits.ts"
import { cryptoDomainsDoc } from "./crypto/DomainsDoc.ts"
import { ErrorCatalog, ErrorCodes, IDEMPOTENCY_KEY_RULE } from "./Errors.ts"
import { EquityDoc } from "./equity/EquityDoc.ts"
import {
  KEYLESS_MCP_CONCURRENCY,
  MCP_ASSET_URI_PREFIX,
  MCP_LISTEN_LIMITS,
  MCP_MAX_BATCH_ANSWER_BYTES,
  MCP_MAX_BODY_BYTES,
  mcpDocMarkdown
} from "./McpDoc.ts"
import { HOLD_LEASE_MS, IDEMPOTENCY_LEASE_MS } from "./Money.ts"
import { type CrossRule, describeDefault, describeType, type ParamSpec } from "./Params.ts"
import { BUCKET_MS, WINDOW_MS } from "./RateLimit.ts"
import { type DocsSection, DocsSections, describePrice, type OperationSpec, Operations } from "./Registry.ts"
import { resolveRankingDoc } from "./ResolveDoc.ts"

/** What the rendering needs to know about the running service. */
export interface DocsContext {
  /** Operations that answer today; the others answer `501 not_implemented` until their plane lands. */
  readonly implemented: ReadonlySet<string>
  /** Default rate-limit policy: units per minute per key. */
  readonly rateLimitPerMinute: number
  /** Base path of the HTTP operations, `/api/v1`. */
  readonly basePath: string
}

/** An example request shown in the docs: `GET {basePath}/{operation}?{query}`. */
export interface DocsExample {
  readonly section: DocsSection
  readonly operation: string
  readonly query: string
}

/** Every example request the docs show, by section. Each is a valid request (a test decodes them all). */
export const docsExamples: ReadonlyArray<DocsExample> = [
  { section: "index", operation: "schema", query: "" },
  { section: "access", operation: "docs", query: "" },
  { section: "quickstart", operation: "docs", query: "section=index" },
  { section: "quickstart", operation: "resolve", query: "q=bitcoin" },
  { section: "quickstart", operation: "read", query: "id=crypto:bitcoin" },
  { section: "quickstart", operation: "usage", query: "" },
  { section: "grammar", operation: "price", query: "ids=crypto:bitcoin,crypto:ethereum,eq:9990001:ALDR" },
  { section: "grammar", operation: "technicals", query: "id=crypto:bitcoin&timeframe=1h" },
  { section: "grammar", operation: "events", query: "id=eq:9990001:ALDR&types=filings,insider&form=10-K" },
  { section: "resolve", operation: "resolve", query: "q=ALDR&limit=5" },
  { section: "resolve", operation: "resolve", query: "q=wrapped&network=solana" },
  { section: "examples", operation: "read", query: "ids=crypto:bitcoin,crypto:ethereum" },
  { section: "examples", operation: "price", query: "id=eq:9990001:ALDR" },
  { section: "examples", operation: "funding", query: "id=crypto:bitcoin" },
  { section: "examples", operation: "open_interest", query: "id=crypto:ethereum" },
  { section: "examples", operation: "orderflow", query: "id=crypto:solana" },
  { section: "examples", operation: "liquidations", query: "ids=crypto:bitcoin,crypto:solana" },
  { section: "examples", operation: "liquidity", query: "id=crypto:bitcoin" },
  { section: "examples", operation: "technicals", query: "id=eq:9990001:ALDR&timeframe=1d" },
  { section: "examples", operation: "structure", query: "id=crypto:bitcoin&timeframe=4h" },
  { section: "examples", operation: "profile", query: "id=eq:9990001:ALDR" },
  { section: "examples", operation: "valuation", query: "id=eq:9990001:ALDR" },
  { section: "examples", operation: "growth", query: "id=eq:9990001:ALDR" },
  { section: "examples", operation: "fundamentals", query: "id=eq:9990001:ALDR" },
  { section: "examples", operation: "series", query: "id=crypto:bitcoin&range=1mo&interval=1d&limit=30" },
  { section: "examples", operation: "series", query: "id=eq:9990001:ALDR&view=summary&range=ytd" },
  {
    section: "examples",
    operation: "financials",
    query: "id=eq:9990001:ALDR&statements=income&period_kind=quarter&periods=8"
  },
  {
    section: "examples",
    operation: "financials",
    query: "id=eq:9990002:BWPC&period_kind=annual&periods=3&as_known_on=2024-06-30"
  },
  { section: "examples", operation: "events", query: "id=eq:9990001:ALDR&types=insider&since=2025-01-01" },
  { section: "examples", operation: "holders", query: "id=eq:9990001:ALDR&limit=10" },
  { section: "examples", operation: "rank", query: "metric=funding_rate_8h_pct&direction=top&limit=5" },
  { section: "examples", operation: "docs", query: "section=pricing" },
  { section: "examples", operation: "schema", query: "resource=series" },
  { section: "examples", operation: "resolve", query: "q=ethereum" },
  { section: "examples", operation: "coverage", query: "plane=crypto&tier=core&limit=50" },
  { section: "examples", operation: "coverage", query: "id=crypto:bitcoin" },
  { section: "examples", operation: "usage", query: "" }
]

const GROUPS: ReadonlyArray<readonly [OperationSpec["group"], string]> = [
  ["situation", "Situation"],
  ["domain", "Domain operations"],
  ["list", "List operations"],
  ["discovery", "Discovery and account"]
]

const AUTH_WORDS: { readonly [A in OperationSpec["auth"]]: string } = {
  keyless: "no key",
  key: "key, 0 credits",
  paid: "key, credits"
}

const code = (s: string) => `\`${s}\``

/** `GET /api/v1/op?query` as shown in the docs. */
const request = (ctx: DocsContext, e: Pick<DocsExample, "operation" | "query">) =>
  `GET ${ctx.basePath}/${e.operation}${e.query === "" ? "" : `?${e.query}`}`

const examplesOf = (ctx: DocsContext, section: DocsSection): Array<string> =>
  docsExamples.filter((e) => e.section === section).map((e) => request(ctx, e))

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`)
  ].join("\n")

const paramTable = (params: ReadonlyArray<ParamSpec>): string =>
  params.length === 0
    ? "No parameters."
    : table(
        ["parameter", "accepts", "default", "required", "meaning"],
        params.map((p) => [
          code(p.name),
          describeType(p.type),
          describeDefault(p) || "-",
          p.required ? "yes" : "no",
          p.description
        ])
      )

const ruleText = (r: CrossRule): string => {
  switch (r.rule) {
    case "exactlyOne":
      return `pass exactly one of ${code(r.params[0])} or ${code(r.params[1])} (both: ${code("conflicting_parameters")}; neither: ${code("missing_parameter")})`
    case "requiresValue":
      return `${code(r.param)} requires ${code(`${r.on}=${r.equals}`)} (${code("parameter_requires")})`
    case "requiresIncludes":
      return `${code(r.param)} requires ${code(r.on)} to include ${code(r.includes)} (${code("parameter_requires")})`
    case "excludes":
      return `${code(r.param)} cannot be combined with ${r.others.map(code).join(", ")} (${code("conflicting_parameters")})`
  }
}

const pending = (ctx: DocsContext) => Operations.filter((o) => !ctx.implemented.has(o.name))

const index = (ctx: DocsContext): string =>
  [
    "# Market data for agents",
    "",
    "Crypto derivatives data (price, funding, open interest, order flow, liquidations, liquidity, technicals, market structure) and SEC-filed company facts (financial statements as exact decimals, filings, insider trades, holders, valuation), in two planes: `crypto` and `equity`.",
    "",
    `Which source fed an answer is in its ${code("X-Data-Source")} header (MCP: ${code("_meta.data_source")}) and ${code("baseline.source")}: ${code("simulated")} for the deterministic simulated market a server runs by default (not real market data), ${code("live")} for the real venue and EDGAR feeds, ${code("sec")} for companies loaded from SEC files.`,
    "",
    `Exactly ${Operations.length} operations, over HTTP as ${code(`GET ${ctx.basePath}/<operation>`)} and identically as tools of the MCP server at ${code("POST /api/mcp")}. Every measured value can carry its percentile against its own history (${code("{value, pctl}")}); every answer carries freshness clocks (${code("as_of")}, ${code("status")}, ${code("next_update_at")}) so you know when asking again can return something new.`,
    "",
    ...GROUPS.map(
      ([g, title]) =>
        `- ${title}: ${Operations.filter((o) => o.group === g)
          .map((o) => code(o.name))
          .join(", ")}`
    ),
    "",
    "## Sections",
    "",
    table(
      ["section", "what it covers"],
      [
        ["index", "this page"],
        ["quickstart", "a first call in three steps"],
        ["domains", "every operation, what it returns, the value sets of states and levels"],
        ["access", "keys, rate limit, idempotency keys, conditional requests, methods, CORS"],
        ["grammar", "canonical IDs, parameters, lists, defaults, cross-parameter rules, envelopes, pagination"],
        ["refusals", "when an asset is refused instead of answered"],
        ["resolve", "turning symbols and names into canonical IDs"],
        ["errors", "every error code, its status and whether to retry"],
        ["pricing", "credits per operation and how holds settle"],
        ["examples", "one request per operation"],
        ["changelog", "what changed, and what is temporary"]
      ]
    ),
    "",
    `Read a section with ${code(`GET ${ctx.basePath}/docs?section=<section>`)} (no key needed). Machine-readable parameters, bounds, prices and error sets: ${code(examplesOf(ctx, "index")[0] as string)}; OpenAPI 3.1: ${code(`GET ${ctx.basePath}/openapi.json`)}.`
  ].join("\n")

const quickstart = (ctx: DocsContext): string => {
  const [docs, resolve, read, usage] = examplesOf(ctx, "quickstart")
  return [
    "# Quickstart",
    "",
    "1. Read the docs, no key needed:",
    "",
    `   ${code(docs as string)}`,
    "",
    "2. Turn a symbol or name into a canonical asset ID (needs a key, costs nothing):",
    "",
    `   ${code(resolve as string)}`,
    "",
    `   Send the key as ${code("Authorization: Bearer <API_KEY>")}. Take ${code("best.asset_id")}; if ${code("best")} is ${code("null")} the query is contested: read the warnings and pick from ${code("matches")}.`,
    "",
    "3. Read the situation of the asset (1 credit for a crypto asset):",
    "",
    `   ${code(read as string)}`,
    "",
    `   The answer carries ${code("next_update_at")}: nothing new can exist before then, so sleep until it instead of polling. ${code("Cache-Control: private, max-age=<seconds>")} says the same. Repeat with ${code("If-None-Match: <ETag>")} to get ${code("304")} at zero credits when nothing changed.`,
    "",
    `Check your balance and rate-limit window at any time with ${code(usage as string)}.`,
    "",
    `The default feed is a deterministic simulated market (every answer says so in ${code("X-Data-Source")} and ${code("baseline.source")}): the crypto universe of ${code("coverage?plane=crypto")} with a year of history, and 525 fictional listed companies whose filings are generated in the SEC's own formats (${code("coverage?plane=equity")} lists them; see the equity plane in ${code("domains")}), five of them hand-made: ${["eq:9990001:ALDR", "eq:9990002:BWPC", "eq:9990003:CLSW", "eq:9990004:DMFL", "eq:9990005:EMBF"].map(code).join(", ")}. The examples use those, so each one answers on a fresh server.`
  ].join("\n")
}

const domains = (ctx: DocsContext): string => {
  const parts: Array<string> = [
    "# Operations and what they return",
    "",
    `Per-asset results carry ${code("asset_id")}, ${code("as_of")}, ${code("status")} and ${code("next_update_at")}. A measured value with history comes as a contextual value ${code("{value, pctl}")}: ${code("pctl")} is the percentile rank (0 to 100, one decimal) of ${code("value")} in the asset's own baseline (${code("baseline = {window, cadence, n}")}, window 90d by default); funding also carries ${code("pctl_1y")}. Crypto contextual values add ${code("n")}, the number of samples the percentile stands on (funding also ${code("n_1y")}), so a short history is never taken for a full window. Money and anything filed is an exact decimal string; market measurements are JSON numbers.`,
    "",
    `Freshness ${code("status")}: ${code("live")} (within the source's cadence), ${code("delayed")} (up to 3 cadences old), ${code("stale")} (older: the source is failing), ${code("closed")} (equity outside the US regular session; ${code("next_update_at")} is the next open). Which source fed an answer is in the ${code("X-Data-Source")} header and ${code("baseline.source")}: ${code("simulated")} (the deterministic simulated market, the default feed), ${code("live")} (real venues and SEC EDGAR, ${code("MARKET_DATA_FEED=live")}) or ${code("sec")} (a company whose filings were loaded from SEC files with ${code("market-data ingest")}, served beside the simulated ones). It follows the asset: a batch mixing sources names each, comma-separated (${code("sec,simulated")}), and each result's ${code("baseline.source")} is its own (under the live feed an equity result's is ${code("sec")}, as its data is EDGAR's).`,
    "",
    `Something that cannot be served is never replaced by a placeholder: it is ${code("null")} in the result and named in ${code("unavailable")} as ${code('{"<component>": {"reason", "detail"?}}')} with reason one of ${["not_covered", "no_data", "insufficient_history", "source_stale", "source_down", "not_applicable"].map(code).join(", ")}.`,
    "",
    "## Assessment values (crypto `read`)",
    "",
    `Each assessment entry carries ${code("rule")} as ${code("<rule_name>@<integer>")}; the integer changes whenever the rule's output can change. The rules' inputs and thresholds are in the crypto plane's section below.`,
    "",
    table(
      ["field", "values"],
      [
        ["positioning.state", "crowded_long, leaning_long, balanced, leaning_short, crowded_short"],
        ["structure.trend_state (also `structure`, headline)", "uptrend, downtrend, range"],
        ["flow.state", "strong_buying, buying, balanced, selling, strong_selling"],
        ["cascade_risk.level", "low, moderate, elevated, high"],
        ["funding.funding_band", "negative, subdued, neutral, elevated, stretched"]
      ]
    ),
    "",
    `Definitions: ${code("apr_pct = rate_8h_pct x 3 x 365")} (simple); ${code("atr_14_pct = ATR(14, Wilder) / last close x 100")}; RSI, ATR and ADX use Wilder smoothing with period 14 on closed bars of the requested timeframe.`,
    "",
    cryptoDomainsDoc,
    "",
    EquityDoc
  ]
  for (const [g, title] of GROUPS) {
    parts.push("", `## ${title}`)
    for (const op of Operations.filter((o) => o.group === g)) {
      const planes = op.planes.length === 0 ? "account" : op.planes.join(" and ")
      const status = ctx.implemented.has(op.name)
        ? ""
        : " Not answering yet: `501 not_implemented` until its plane lands."
      parts.push(
        "",
        `### ${code(op.name)}`,
        "",
        `${op.summary} Plane: ${planes}. Access: ${AUTH_WORDS[op.auth]}. Credits: ${describePrice(op)}.${status}`,
        "",
        op.description,
        "",
        paramTable(op.params)
      )
      if (op.rules.length > 0) parts.push("", ...op.rules.map((r) => `- ${ruleText(r)}`))
    }
  }
  return parts.join("\n")
}

const access = (ctx: DocsContext): string =>
  [
    "# Access: keys, rate limit, idempotency, conditional requests",
    "",
    "## Keys",
    "",
    `Send ${code("Authorization: Bearer <API_KEY>")} (the scheme is case-insensitive). A key is ${code("mdk_")} followed by 32 letters and digits. Keys are stored only as SHA-256 hashes and compared in constant time. A missing, malformed, unknown or revoked key answers ${code("401 unauthenticated")} with ${code("WWW-Authenticate: Bearer")}; malformed, unknown and revoked keys get byte-identical answers. Two ${code("Authorization")} headers are ${code("400 invalid_header")}. A key sent to a keyless route is checked too, the same way on every route and transport: keyless operations, the root ${code("GET /api/v1")}, ${code("/api/v1/openapi.json")}, the docs page ${code("/")} and its assets, and every MCP message (${code("initialize")}, ${code("ping")}, ${code("tools/list")}, the resources methods, notifications) answer a malformed, unknown or revoked key with ${code("401 unauthenticated")} (over MCP in the form section mcp gives); leave the header out to call them without a key. A revoked key stops working at once on the instance that revoked it and within 5 s on the others (they remember a valid key that long); a paid operation checks the revocation again in the same step that admits or charges it, so once a revocation is stored no instance serves or charges a paid request for that key.`,
    "",
    table(
      ["access", "operations"],
      (["keyless", "key", "paid"] as const).map((a) => [
        AUTH_WORDS[a],
        Operations.filter((o) => o.auth === a)
          .map((o) => code(o.name))
          .join(", ")
      ])
    ),
    "",
    "Keys are minted by the operator (`market-data keys create --credits N`); self-service minting and credit packs come later.",
    "",
    "## Rate limit",
    "",
    `${ctx.rateLimitPerMinute} rate units per rolling ${WINDOW_MS / 1000} s per key by default (the operator may set another policy for all keys or for one key; the headers and ${code("usage")} always report yours). Every request spends one unit, paid or free, including answers ${code("304")}, replays and errors, and keyless requests too: the root and OpenAPI documents, the docs page and its assets, and every MCP message (each member of a batch one unit, notifications included). A request with a valid key spends the key's units; keyless calls, and failed authentications, spend the budget of the client address: the connection's address, or, when the connection comes from a reverse proxy the operator trusts, the address that proxy reports in ${code("X-Forwarded-For")} (the header is ignored from anyone else, so sending it changes nothing); an IPv6 address spends the budget of its /64, the block one subscriber is given, so drawing new addresses from it does not multiply the limit. Units are counted in ${BUCKET_MS / 1000}-second buckets and a bucket counts while any part of it is inside the window, so no rolling window ever admits more than the limit and a unit returns at most one second late.`,
    "",
    `Every answer carries ${code('RateLimit-Policy: "default";q=<limit>;w=60')} and ${code('RateLimit: "default";r=<remaining>;t=<seconds until a unit returns>')}. Over the limit: ${code("429 rate_limited")} with ${code("Retry-After")}; a 429 spends no credit.`,
    "",
    "## Connections",
    "",
    `A connection's requests are answered one at a time, in order: HTTP pipelining works, but the next request starts only when the previous answer has left the server, and a client that does not read its answers is not read further until it does. Keyless MCP POSTs run at most ${KEYLESS_MCP_CONCURRENCY} at once, taking turns with the rest of the work, so a flood of them cannot crowd out requests with a key; a JSON-RPC batch's answers stop at ${MCP_MAX_BATCH_ANSWER_BYTES / 1024} KiB (section mcp).`,
    "",
    `A keyless MCP POST spends its unit when it arrives, before its body is read, whatever becomes of it (a body that is not JSON, a batch under a protocol version without batches, a wrong ${code("Content-Type")}: each costs one unit); that unit is its first message's, so a POST whose messages run spends one unit per message as above. Once the address has no unit left, a keyless POST is answered ${code("429")} at once with one JSON-RPC error without an id (${code("data.error.code")} ${code("rate_limited")}, ${code("Retry-After")}), its body unread and its connection closed; a batch is never answered with one copy of that error per member. A batch whose units run out part way answers its first refused member with the whole refusal and the later ones with a short one (message ${code('"as above"')}). A POST with a key spends one of the key's units when it is refused before any message runs.`,
    "",
    table(
      ["limit (default; the operator may set others)", "past it"],
      [
        [
          `${DEFAULT_MAX_CONNECTIONS_PER_CLIENT} connections open at once from one client address (an IPv6 one by its /64)`,
          `the connection is answered at once, before its request is read: ${code("429 rate_limited")}, ${code("Retry-After: 1")}, then closed`
        ],
        [
          `behind a reverse proxy the operator trusts: ${DEFAULT_MAX_CONNECTIONS_PER_CLIENT} requests in flight from one client address it reports`,
          `${code("429 rate_limited")}, ${code("Retry-After: 1")}`
        ],
        [
          `${DEFAULT_MAX_CONNECTIONS} connections open at once in all`,
          `the connection is answered at once: ${code("503 source_unavailable")}, ${code("Retry-After: 1")}, then closed`
        ],
        [
          `a request body (MCP's POST: at most ${MCP_MAX_BODY_BYTES / 1024} KiB, larger is ${code("413")}) must arrive whole within ${DEFAULT_BODY_TIMEOUT_MS / 1000} s of the request's headers`,
          `${code("408")} (code ${code("invalid_header")}), then the connection is closed`
        ],
        ["request headers must arrive within 20 s", `${code("408")}, then the connection is closed`],
        ["an idle keep-alive connection", "closed after 5 s"]
      ]
    ),
    "",
    "## Cursors",
    "",
    `A ${code("next_cursor")} is a position anyone may write, not a secret: base64url of the operation, a fingerprint of its other parameters and the position to resume after (an asset, a time, a rank). It is checked for its form, its operation and its parameters (reused with others it is ${code("400 invalid_cursor")}), not signed. A hand-made cursor for a valid position pages from there like one the service issued: answers do not depend on the key that asks (beyond what it is charged), so it reaches nothing the caller could not reach by paging from the start.`,
    "",
    "## Idempotency keys",
    "",
    `Send ${code("Idempotency-Key: <key>")} on a paid request to make retries safe (a key is ${IDEMPOTENCY_KEY_RULE}). Within 24 h, the same key with the same request (operation and parameters after decoding and defaults, in any order, over HTTP or MCP) replays the stored answer byte for byte, with the original ${code("X-Credits-Charged")} and ${code("Idempotent-Replayed: true")}, and charges nothing new. Rate-limit headers and ${code("Cache-Control")} are fresh on a replay.`,
    "",
    table(
      ["situation", "answer"],
      [
        ["same key, same request still running", "`409 request_in_progress`, `Retry-After: 1`"],
        ["same key, different request, within 24 h", "`409 idempotency_conflict`"],
        [
          "the attempt ended 408, 425, 429 or 5xx",
          "nothing stored, hold released: retry with the same key runs once and settles once"
        ],
        [
          "the attempt ended `503 source_unavailable` because the database went away under it (so its own release could not reach it either)",
          "the release is made before the key's next request on the same server: once the database is back, the retry with the same key runs at once and settles once (or replays, if the charge had committed); on another server it waits for the lease below"
        ],
        ["`402 insufficient_credits` or `304`", "nothing stored: after a top-up the same key runs normally"],
        [
          `a request in flight for more than ${IDEMPOTENCY_LEASE_MS / 1000} s (a crash)`,
          "counts as released; its credit hold too"
        ],
        ["24 h after the answer", "the key is free again"],
        [
          "key empty, longer than 128, whitespace at either end, control or non-ASCII characters, or sent twice",
          "`400 invalid_idempotency_key`"
        ]
      ]
    ),
    "",
    `Keys are scoped to your API key. Over MCP, the key is the ${code("Idempotency-Key")} header of the POST carrying one ${code("tools/call")} (or one ${code("resources/read")} of an asset resource, which is the ${code("read")} operation).`,
    "",
    "## Push over MCP (revision 2026-07-28)",
    "",
    `An MCP client at revision ${code("2026-07-28")} can be told when an asset changes instead of polling: ${code("subscriptions/listen")} on asset resources (${code(`${MCP_ASSET_URI_PREFIX}<asset_id>`)}, each the ${code("read")} result of one asset) answers a long-lived SSE stream of ${code("notifications/resources/updated")}. A notification is free and carries only the URI; reading it is the paid read (1 credit, the ${code("read")} tool's refusals, rate unit and idempotency). Limits, enforced:`,
    "",
    `- A key is required to subscribe to an asset resource, and to read one (keyless: ${code("unauthenticated")}, nothing served).`,
    `- At most ${MCP_LISTEN_LIMITS.resourcesPerStream} resources per listen stream and ${MCP_LISTEN_LIMITS.streamsPerKey} open listen streams per key (${MCP_LISTEN_LIMITS.keylessStreamsPerAddress} keyless ones per client address, which can subscribe to nothing paid); one more stream is refused with HTTP 429. Opening a stream spends one rate unit; notifications spend none.`,
    `- A slow listener gets its notifications coalesced per URI (at most one pending per subscribed URI), never an unbounded buffer; a keep-alive comment comes every ${MCP_LISTEN_LIMITS.keepAliveMs / 1000} s of quiet.`,
    `- A revoked key's streams close within ${MCP_LISTEN_LIMITS.keyRecheckMs / 1000} s.`,
    `- Every subscribed asset is read when its ${code("next_update_at")} comes, and looked at every ${MCP_LISTEN_LIMITS.watchMaxIntervalMs / 1000} s besides (read then if the store's data for it moved); an asset is watched once however many streams subscribe to it. A stream that asks for ${code("resourcesListChanged")} is told (${code("notifications/resources/list_changed")}) within ${MCP_LISTEN_LIMITS.universeCheckMs / 1000} s when the asset universe changes size. With several instances on one PostgreSQL, a listener on any instance is notified of what the leader ingested once that instance serves it (an instance that does not lead re-reads the store every minute).`,
    "",
    `Over HTTP nothing changes: ${code("next_update_at")} and conditional requests stay the way to schedule. See the ${code("mcp")} section.`,
    "",
    "## Conditional requests",
    "",
    `${code("read")} and the domain operations answer a strong ${code("ETag")} computed from the content. Send it back as ${code("If-None-Match")} (one tag, a list, or ${code("*")}): if the data has not changed the answer is ${code("304")} with no body and zero credits (it still spends a rate unit). The ETag is compared before any credit is held, so an unchanged answer is ${code("304")} whatever the key's balance, also a key with no credits left; a changed one needs the credits for its body (${code("402 insufficient_credits")} otherwise). Per-asset answers carry ${code("Cache-Control: private, max-age=<seconds until next_update_at>")}. MCP has no conditional requests.`,
    "",
    "## Methods",
    "",
    `Paid operations answer ${code("GET")} only: ${code("HEAD")} on a paid operation is ${code("405 method_not_allowed")} with ${code("Allow: GET")}, refused before anything runs (no credit, no rate unit), because it would pay for a body it never receives. Free operations, the root and the OpenAPI document answer ${code("HEAD")} as ${code("GET")} without the body.`,
    "",
    "## CORS",
    "",
    `Any origin may call the HTTP API (${code("Access-Control-Allow-Origin: *")}); preflights allow ${code("Authorization")}, ${code("Idempotency-Key")} and ${code("If-None-Match")}; ${code("ETag")}, ${code("RateLimit")}, ${code("RateLimit-Policy")}, ${code("Retry-After")}, ${code("X-Credits-Charged")}, ${code("Idempotent-Replayed")}, ${code("X-Data-Source")}, ${code("X-Catalog-Version")} and ${code("X-Request-Id")} are exposed.`,
    "",
    "## Request IDs",
    "",
    `Every answer, over HTTP and MCP, carries ${code("X-Request-Id")}; the service's log line for the request carries the same ID, so quote it when you report a problem. Send your own ${code("X-Request-Id")} (1 to 128 letters, digits, ${code(".")}, ${code("_")}, ${code(":")} or ${code("-")}) to have it used instead; any other value is replaced by a fresh one.`,
    "",
    // The MCP guide, one heading level down so it nests under this section.
    mcpDocMarkdown.replace(/^(#+) /gm, "#$1 ")
  ].join("\n")

const grammar = (ctx: DocsContext): string => {
  const rules = Operations.flatMap((op) => op.rules.map((r) => [code(op.name), ruleText(r)]))
  const [batch, timeframe, events] = examplesOf(ctx, "grammar")
  return [
    "# Request grammar",
    "",
    `Every operation is ${code(`GET ${ctx.basePath}/<operation>?<parameters>`)} with query parameters (over MCP: the tool's arguments).`,
    "",
    "## Canonical asset IDs",
    "",
    `- crypto: ${code("crypto:<slug>")}, lower-case letters and digits joined by single hyphens (${code("crypto:bitcoin")}, ${code("crypto:usd-coin")});`,
    `- equity: ${code("eq:<cik>:<ticker>")}, the SEC CIK without leading zeros and the upper-case ticker (${code("eq:320193:AAPL")}, ${code("eq:1067983:BRK.B")}).`,
    "",
    `Operations take canonical IDs only; ${code("resolve")} turns a symbol or name into one. A string that is not a canonical ID is ${code("400 invalid_parameter")}; a canonical ID we do not know is ${code("404 unknown_asset")}.`,
    "",
    "## Parameters",
    "",
    `- ${code("id")} names one asset; ${code("ids")} names 2 to 10 distinct assets, comma-separated, answered in the order given: ${code(batch as string)}.`,
    `- Lists are comma-separated and distinct (over MCP also a JSON array): ${code(events as string)}.`,
    `- Booleans are ${code("true")} or ${code("false")}; dates are ${code("YYYY-MM-DD")}; integers are plain digits within their bounds.`,
    `- A parameter the operation does not take, or a parameter given twice, is ${code("400 invalid_parameter")} naming it in ${code("param")}. An empty value is invalid; omit the parameter to get its default. An empty required parameter (${code("q=")} on ${code("resolve")}) is ${code("400 invalid_parameter")} whose message says the parameter is required.`,
    `- Defaults are applied before anything else looks at the request; some depend on the plane of the asset (${code("timeframe")} of ${code("technicals")}: 4h crypto, 1d equity; ${code("interval")} of ${code("series")}: 4h crypto, 1d equity): ${code(timeframe as string)}.`,
    "",
    "## Rules between parameters",
    "",
    table(["operation", "rule"], rules),
    "",
    "## Answers",
    "",
    `- JSON operations answer ${code('{"data": <result>}')}; ${code("docs")} answers raw markdown.`,
    `- A batch answers ${code('{"data": [<one result per delivered asset, in request order>], "refused": [{"id", "reason"}]}')}; ${code("refused")} is always present.`,
    `- An error answers ${code('{"error": {"code", "message", "param"?, "retryable"}}')} (see section errors).`,
    `- Paginated results carry ${code("next_cursor")} (a string, or ${code("null")} at the end). Pass it as ${code("cursor")} with the same other parameters; a cursor is opaque and bound to its operation and parameters, and anything else is ${code("400 invalid_cursor")}.`
  ].join("\n")
}

const refusals = (): string =>
  [
    "# Refusals",
    "",
    "An asset is refused, rather than answered, when:",
    "",
    table(
      ["reason", "meaning"],
      [
        ["`unknown_asset`", "the ID is well formed but names no asset we know"],
        [
          "`plane_mismatch`",
          "the operation does not exist for the asset's plane (`funding` on an equity, `valuation` on a crypto asset)"
        ],
        [
          "`not_covered`",
          "the asset is known but its coverage tier does not include the operation (see `coverage`), or the answer for these parameters would be empty, every figure `not_covered` (an equity `series` or `technicals` at an intraday interval or timeframe; `param` names the parameter)"
        ]
      ]
    ),
    "",
    `In a batch (${code("ids")}), refused assets are listed in ${code("refused")} as ${code('{"id", "reason"}')}, the delivered ones are answered in ${code("data")}, and only delivered assets are charged. A single ${code("id")} that would be refused answers the same code as an error (404 or 422) and is not charged.`,
    "",
    `Coverage tiers: crypto ${code("core")} (perpetuals on several venues: every crypto operation), ${code("listed_token")} (spot-listed: read, price, technicals, structure, liquidity, series), ${code("contract_token")} (on-chain token: read, price, series), ${code("prices_only")}, ${code("discovery_only")} (resolve and coverage only); equity ${code("equity")} (filings and holders, no price feed), ${code("full")} (filings, prices and holders); ${code("holders")} is served on both equity tiers from whatever 13F reports list the issuer. A ${code("read")} of a ${code("listed_token")} or ${code("contract_token")} is a partial read, charged like any ${code("read")}: what the tier does not serve (funding, open interest, flow, liquidations and the assessments built on them; structure's trend state on ${code("contract_token")}) is ${code("null")} and listed under ${code("unavailable")} as ${code("not_covered")}.`
  ].join("\n")

const resolveSection = (ctx: DocsContext): string => {
  const [ticker, network] = examplesOf(ctx, "resolve")
  return [
    "# Resolving symbols and names",
    "",
    `${code("resolve")} takes ${code("q")} (1 to 80 characters, a symbol or a name), ${code("limit")} (maximum matches per plane, 1 to 25, default 10) and optionally ${code("network")}, which keeps only crypto matches on that network (such as ${code("ethereum")} or ${code("solana")}). It needs a key and costs nothing.`,
    "",
    `- ${code(ticker as string)}`,
    `- ${code(network as string)}`,
    "",
    `The answer is ${code('{"query", "best", "matches", "coverage"}')}. Each match is ${code('{"asset_id", "plane", "symbol", "name", "tier", "network"?, "score", "warnings"}')}, ranked; ${code("coverage")} counts matches per plane as ${code('{"crypto": {"matches"}, "equity": {"matches"}}')}.`,
    "",
    `A contested query, such as a ticker that is both a token and a covered equity, answers ${code("best: null")} with warnings on the matches (for example ${code("symbol_collision")}, naming the other asset) instead of a silent pick. Choose from ${code("matches")} with the plane you mean.`,
    "",
    resolveRankingDoc
  ].join("\n")
}

const errors = (): string =>
  [
    "# Errors",
    "",
    `Every error answers ${code('{"error": {"code": string, "message": string, "param"?: string, "retryable": boolean}}')}; over MCP the same object is the tool result's ${code("structuredContent")} with ${code("isError: true")}. ${code("param")} names the offending parameter or header. Retry only when ${code("retryable")} is true, after ${code("Retry-After")} when it is sent.`,
    "",
    table(
      ["status", "code", "retryable", "when"],
      [...ErrorCodes]
        .sort((a, b) => ErrorCatalog[a].status - ErrorCatalog[b].status)
        .map((c) => [
          String(ErrorCatalog[c].status),
          code(c),
          ErrorCatalog[c].retryable ? "yes" : "no",
          ErrorCatalog[c].when
        ])
    ),
    "",
    `Over MCP, a message other than ${code("tools/call")} that is refused before it runs (a bad key: ${code("unauthenticated")}; the rate limit: ${code("rate_limited")}) answers JSON-RPC ${code("-32000")} with this error object as ${code("data")} (plus ${code("retry_after_seconds")}); a POST of notifications only answers the error's HTTP status. A batch member not run because the batch's answers reached ${MCP_MAX_BATCH_ANSWER_BYTES / 1024} KiB answers ${code("-32000")} with ${code('data: {"reason": "batch_answer_limit", "limit_bytes", "retryable": true}')}: nothing ran and nothing was charged; send it again alone or in a smaller batch.`,
    "",
    `Transient answers (408, 425, 429, 5xx) release whatever the request held: its credit hold and its idempotency key, so a retry with the same ${code("Idempotency-Key")} runs once and settles once. When the database itself went away under the request (${code("503 source_unavailable")}), also after its admission committed, the server that admitted it releases it as soon as the database is back (it tries every quarter second, and before the key's next request on that server), so a retry, or several sent at once, on any server answers normally within about a second of the database's return instead of ${code("409 request_in_progress")} for the whole lease. Only a server that crashed during the outage leaves its request to the lease (${IDEMPOTENCY_LEASE_MS / 1000} s). Errors charge nothing.`
  ].join("\n")

const pricing = (): string =>
  [
    "# Pricing",
    "",
    "Paid operations spend credits; 1 credit is 1 US cent.",
    "",
    table(
      ["operation", "credits", "access"],
      Operations.map((o) => [code(o.name), describePrice(o), AUTH_WORDS[o.auth]])
    ),
    "",
    `Before it runs, a request holds the most it can cost: a batch holds the price of every requested asset (so a batch of ${code("funding")} holds 3 per asset and a batch of equity ${code("read")} 5 per asset, more than the "up to ten" of the price-1 operations), ${code("rank")} holds one credit per row of its ${code("limit")}. When the answer is in hand the hold settles to what was delivered and the rest returns: refused assets and rows not returned cost nothing. If the balance cannot cover the hold the answer is ${code("402 insufficient_credits")} and nothing runs. The balance never goes below zero, also under concurrent requests.`,
    "",
    `Every answer of a paid operation carries ${code("X-Credits-Charged")}. Errors, ${code("304")} answers, refused assets (also an answer that would be empty, every figure ${code("not_covered")}: refused, not delivered empty) and idempotent replays charge nothing new (a replay reports the original charge). A conditional request is compared before anything is held, so its ${code("304")} needs no balance at all. ${code("HEAD")} on a paid operation is never billed: it is refused ${code("405")} with ${code("Allow: GET")}. A hold not settled within ${HOLD_LEASE_MS / 1000} s (a crash) is released. Over MCP the charge is ${code("_meta.credits_charged")}.`
  ].join("\n")

const examples = (ctx: DocsContext): string =>
  [
    "# Examples",
    "",
    `One request per operation. Paid and key operations need ${code("Authorization: Bearer <API_KEY>")}. The answer shapes are in section domains and in ${code(`GET ${ctx.basePath}/schema?resource=<operation>`)}.`,
    "",
    table(
      ["request", "access", "credits"],
      docsExamples
        .filter((e) => e.section === "examples")
        .map((e) => {
          const op = Operations.find((o) => o.name === e.operation) as OperationSpec
          return [code(request(ctx, e)), AUTH_WORDS[op.auth], describePrice(op)]
        })
    )
  ].join("\n")

const changelog = (ctx: DocsContext): string => {
  const todo = pending(ctx)
  return [
    "# Changelog",
    "",
    "## v1.0.0",
    "",
    `- The ${Operations.length} operations of the contract, over HTTP at ${code(ctx.basePath)} and as MCP tools, with their parameters, prices and error sets as ${code("schema")} describes them.`,
    "- Credits with holds and settlement, idempotency keys (24 h replay), conditional requests and a per-key rolling rate limit.",
    `- Beyond the contract, additive: ${code("financials")} takes ${code("as_known_on=<date>")} (the statements as known that day, before later restatements); the one-asset ${code("coverage")} form, ${code("funding.by_venue")} and ${code("technicals")} carry extra fields documented in ${code("schema")}; every answer carries ${code("X-Catalog-Version")} and data answers ${code("X-Data-Source")}.`,
    "",
    "## Changes within v1 (2026-11-25)",
    "",
    "Additions, and corrections where an answer did not follow the contract (each says which):",
    "",
    `- True clocks: ${code("price.usd")}, ${code("bid_usd")} and ${code("ask_usd")} come from one order-book snapshot (${code("usd")} is its mid, inside the spread); ${code("profile")} with a market cap carries the price's ${code("next_update_at")} and ${code("Cache-Control")} (as ${code("valuation")} and the equity ${code("read")} do); ${code("rank")} carries ${code("status")} and ${code("next_update_at")} (additive).`,
    `- Charges follow the contract: an answer that would be empty, every figure ${code("not_covered")} (equity ${code("series")} at an intraday ${code("interval")}, equity ${code("technicals")} at an intraday ${code("timeframe")}), is refused ${code("422 not_covered")} uncharged (in a batch: under ${code("refused")}) instead of delivered empty and charged; ${code("read")} serves ${code("listed_token")} and ${code("contract_token")} assets as a partial read (missing parts ${code("not_covered")} under ${code("unavailable")}) instead of refusing them.`,
    `- Consistency: an empty required parameter (${code("q=")}) is refused with a message saying it is required; MCP integer and boolean arguments must be JSON numbers and booleans (the string ${code('"5"')} is ${code("invalid_parameter")}, as over HTTP ${code("limit=x")} is); ${code("resolve")} with no match adds ${code("suggestions")}, the nearest symbols and names (additive; see section resolve).`,
    `- Internal, no change to any answer: ${code("rank")} and per-asset answers are rebuilt cheaply after a venue's routine refresh (books, funding states): each asset's measures are kept until its own series change, concurrent ${code("rank")} calls share one scan of the core tier, and a ${code("rank")} page is serialized once while its scan holds.`,
    `- Internal, no change to any answer: every decision of the paid path (rate unit, the idempotency state table and its two ${code("409")}s, hold amount covered, transient release, settle once, metered charge, ${code("304")} before any hold) is one set of rules that every store follows and one test suite checks on each store; the ${code("Idempotency-Key")} header is validated once per request.`,
    `- Paid operations: one money port with three steps (admit: rate unit, key, ${code("Idempotency-Key")}, hold; finish: charge and stored answer together, or release; charge: the metered step), each one atomic store step (on PostgreSQL one statement: a paid request with an ${code("Idempotency-Key")} is two round trips, a replay, ${code("409")}, ${code("402")} or ${code("429")} one). A revoked key is refused ${code("401 unauthenticated")} on paid operations at once on every instance (it was up to 5 s on other instances). A conditional request holds nothing before it compares its ETag: a handler error on it answers that error, not ${code("402")}.`,
    `- Server PostgreSQL and (since 2026-11-26) the embedded store, no change to any answer: paid requests arriving together share one database statement and one transaction (group commit); each answer is given only after its transaction committed, one request's database error fails that request alone, and a statement that fails whole answers each of its requests ${code("503 source_unavailable")} (retryable, nothing charged) as a lone request's failure did. Operators: ${code("DATABASE_BATCH_MAX")}, ${code("DATABASE_BATCH_WINDOW_MS")}.`,
    `- After a database outage, a retried idempotent request whose release could not reach the store is not left ${code("in flight")} for the 60 s lease: the release is made before the key's next request (same server), guarded so it never frees a hold or answer that was settled meanwhile. The key's requests arriving while those releases are being made wait for them, so retries sent all at once run too (before, all but the first could be answered ${code("409 request_in_progress")}).`,
    `- Keyless requests spend rate units like every other: the root and OpenAPI documents, the docs page and every MCP message (${code("initialize")}, ${code("ping")}, ${code("tools/list")}, notifications; each member of a batch one unit), from the caller's budget (the key's, or the client address's). A key sent to any keyless route is checked (a bad one is ${code("401 unauthenticated")}; the root and the MCP protocol methods used to ignore it). A JSON-RPC batch's answers stop at ${MCP_MAX_BATCH_ANSWER_BYTES / 1024} KiB (${code("-32000")} ${code("batch_answer_limit")} for the members past it). A connection that does not read its answers is not read further; keyless MCP POSTs take turns.`,
    `- Honest source labels: a company loaded from SEC files answers ${code("X-Data-Source: sec")} and ${code('baseline.source: "sec"')} (it said ${code("simulated")} under the simulated feed); the index and the MCP instructions no longer call the simulated feed live.`,
    `- MCP ${code("tools/list")} for hosts: under 40 KB by default; ${code("outputSchema")} only with ${code("/api/mcp?output_schemas=true")} (and as ${code("result_schema")} in ${code("schema")}); ${code("inputSchema")} in the portable subset the ${code("mcp")} part of ${code("access")} states (no ${code("anyOf")}, lookahead patterns, ${code("format")} or ${code("default")}; lists as arrays, a comma-joined string still accepted); validation unchanged. A stdio bridge for hosts that cannot send a header.`,
    `- Real prices and real filings: ${code("holders")} is served on both equity tiers (a company with 13F holders and no price history answers it); ${code("MARKET_DATA_LIVE_VENUES")} empty or ${code("none")} runs live mode with no crypto venue, and an unknown venue name stops the start naming the accepted ones. The US market calendar is true to history (each holiday from the year it applied, Good Friday, the one-off closures, the 13:00 early closes; see ${code("domains")}): it drives equity ${code("status")}, ${code("next_update_at")} and the expected last bar, and a price row on a day it has closed is kept with a warning. ${code("ingest prices")} takes folders like ${code("ingest sec")}; both report loaded and refused rows by count and reason, per file and in total, and exit 1 when anything was refused, 0 when every file loaded in full. Financial figures are cited from the periodic reports (10-K, 10-Q, 20-F, 40-F, 10-KT and amendments): a later periodic report restating a period wins, and a proxy statement, 8-K, S-1 or 424B prospectus is cited only for a period no periodic report carries; every cited figure carries ${code("form")} beside ${code("accession")} (additive: ${code("form")} on holders and on ${code("dividends")} and ${code("splits")} events).`,
    `- For operators, outside ${code(ctx.basePath)} (no key, no rate unit, no credit): ${code("/healthz")} (the process answers), ${code("/readyz")} (${code("503")} naming what is missing until the database answers and the crypto baselines are warm, then ${code("200")}), ${code("/metrics")} (Prometheus text; optionally on its own port), OpenTelemetry traces over OTLP when configured. Every answer carries ${code("X-Request-Id")}. ${code("402 insufficient_credits")} says how to get credits. On the embedded store the key and credit commands work while the server runs (they reach it over a local admin channel).`,
    `- The crypto asset directory: every linear USDT/USDC perpetual of the four venues as a listing of one canonical asset, multiplier symbols (${code("1000PEPEUSDT")}, ${code("kPEPE")}, ${code("SHIB1000USDT")}) and renamed tickers under one asset, permanent IDs (an asset listed nowhere stays, ${code("alive: false")}), the slug rule, collisions kept apart, and the tier rule; kept in the store. In live mode it is the crypto universe: ${code("coverage")}, ${code("resolve")} and ${code("rank")} (the whole ${code("core")} tier) follow it, a listing job refreshes it at start and every 30 minutes, so a listing or delisting is noticed within the hour (${code("MARKET_DATA_LIVE_LISTINGS_MINUTES")}; the coin list daily, ${code("MARKET_DATA_COIN_LIST_URL")}), a new listing is served without a restart, a failed refresh keeps the last directory, and each venue's ${code("listings")} source in ${code("coverage")} ${code("sources")} names the instruments it skipped (${code("sources")} rows carry ${code("detail")}, additive). See ${code("docs?section=domains")}, "The asset directory".`,
    `- The simulated market at production scale, the default of the simulated feed (${code("MARKET_DATA_SIM_UNIVERSE=market")}; ${code("registry")} keeps the 35 hand-written assets): its crypto universe is built by the same directory logic from the simulated venues' listings, ${code("coverage?plane=crypto")} lists over 400 assets (over 200 ${code("core")}, all in ${code("rank")}), multiplier symbols (${code("1000")}, ${code("k")}, ${code("1000000")} bundles) resolve under their asset, and ${code("GMX")}, ${code("ICP")}, ${code("FIL")} (like ${code("TON")}) name two assets each (${code("best: null")}, ${code("symbol_collision")}). The hand-written assets keep their IDs, listings and data; a start generates the larger market in the background (a few seconds more before ${code("rank")} answers).`,
    `- A simulated listing: the simulated feed's equity plane grows from five fictional companies to 525 (520 generated: sectors, sizes, fiscal year ends, share classes, some without prices, insiders, twelve 13F managers holding many of them; ${code("MARKET_DATA_SIMULATED_COMPANIES")} sets how many), written to the database at start and named there, so a restart writes nothing; see the equity plane in ${code("domains")}.`,
    `- Nothing billed without a body: ${code("HEAD")} on a paid operation is ${code("405 method_not_allowed")} with ${code("Allow: GET")} (it was charged in full and answered no body), and the ${code("Allow")} of any refused method on a paid operation is ${code("GET")}; a conditional ${code("read")} on unchanged data is ${code("304")} at zero credits whatever the balance (a key with no credits left got ${code("402")}, because credits were held before the ETag was compared). See ${code("docs?section=access")}.`,
    `- Equity daily prices in live mode: a price connector fetches daily bars for every equity asset from Yahoo Finance's chart endpoint (keyless, unofficial; ${code("MARKET_DATA_PRICES")}, ${code("MARKET_DATA_PRICES_PER_MINUTE")}), so ${code("price")}, ${code("technicals")}, ${code("valuation")} and the equity ${code("read")} headline answer for those tickers; in live mode an equity's price during the session is the previous session's close and says ${code('status: "delayed"')} (it said ${code("live")}); ${code("coverage")} ${code("sources")} for an equity also lists the price source (venue ${code("yahoo")}, component ${code("bars")}). ${code("ingest prices")} is unchanged. See ${code("docs?section=domains")}.`,
    `- Live EDGAR for every company: live mode follows EDGAR's latest-filings feed (minutes) and daily form index (the backstop, and the watermark) and ingests every company's new Form 4, 13F-HR, 10-K, 10-Q and 8-K filings (refreshing the filers' submissions and companyfacts), within one shared SEC limiter (at most 10 requests per second as the SEC counts them; ${code("MARKET_DATA_SEC_MAX_RPS")} lower, ${code("MARKET_DATA_SEC_DAILY_INDEX=off")} to follow only ${code("MARKET_DATA_SEC_CIKS")}). In live mode the equity ${code("read")}'s ${code("filings_indexed_through")} is the last day whose filings were all processed (it was the company's latest filing date, which could run ahead of a day with a failed fetch). ${code("MARKET_DATA_SEC_USER_AGENT")} must be of the form ${code("Name email")} (an address alone is refused at start). The follower's health shows in ${code("sources")} (venue ${code("sec")}, components ${code("dailyIndex")} and ${code("latestFilings")}). See ${code("docs?section=domains")}.`,
    `- The whole ticker list: every company of the SEC's ticker list is an equity asset as soon as the list is ingested (one asset per ticker, ${code("eq:<cik>:<ticker>")}), and so is an issuer a Form 4 names once that Form 4 is in; ${code("events")}, ${code("holders")}, ${code("profile")} and ${code("financials")} answer from what is in for it, with typed ${code("unavailable")} reasons where nothing is (before, such a company answered ${code("404 unknown_asset")} even after its Form 4 was loaded). A company with several tickers is listed once per ticker (before, under its first ticker only). See ${code("docs?section=domains")}.`,
    `- Bulk SEC archives: ${code("market-data ingest sec")} reads ${code("companyfacts.zip")} and ${code("submissions.zip")} entry by entry (no extraction), one transaction per company with ${code("COPY")}, skipping on a rerun the entries already loaded unchanged; a bad entry is named with its reason and the command exits 1. Answers are those of the per-file ingest. See ${code("docs?section=domains")}.`,
    `- Crypto numbers: the cross-venue funding aggregate returns equal inputs exactly (one venue aggregates to its own rate, so its ${code("pctl")} equals the venue's ${code("rate_pctl")}); funding baselines are sampled from the settlement history held, so ${code("pctl_1y")} covers a year of settlements beside 90 days of bars; every crypto percentile carries its sample count (${code("n")}, ${code("n_1y")}, ${code("rate_pctl_n")}); 4 h and 1 d technicals and series count complete periods only (a history that began mid-period no longer moves ${code("ema_200")}, ${code("ema_50")} or ${code("adx_14")}); figures are rounded to the documented precision (percentages and rates at most 12 decimals: ${code("venue_spread_8h_pct")} prints 0 where venues agree). See ${code("docs?section=domains")}.`,
    `- For operators (no answer changes): ${code("market-data ingest sec")} on a bulk archive parses in a worker thread while the main thread inflates and the database copies, each overlapping the others with bounded queues; a companyfacts document is read one concept at a time, so memory no longer follows the largest document (two 44 MB documents: 1.1 GB before, about 0.4 GB now). A new embedded data folder's database is created in a child process, and ${code("ingest")} runs with V8's baseline WebAssembly compiler (as ${code("npm start")} does): an ingest into the embedded store peaked near 0.9 GB, now about 0.4 GB. A bad entry is still named with its reason and leaves nothing, even when found bad after its rows began to be copied.`,
    `- ${code("market-data ingest prices")} reads its CSVs with a CSV library (csv-parse, RFC 4180) instead of splitting lines: a quoted cell may hold commas, doubled quotes and line breaks, and each row is named by the line it starts on; a file the grammar refuses (a quote never closed, text after a closing quote) fails whole with the fault and its line, since its row boundaries after the fault are unknown (before, such lines were refused or misread one by one).`,
    `- The whole market, continued (live mode): every USDT/USDC spot pair of the four venues joins the asset directory beside the perpetuals (a coin traded only spot is a ${code("listed_token")} asset; fiat pairs, leveraged tokens and other quotes are skipped and named); the Binance and Bybit liquidation streams follow the directory's perpetuals and subscribe a new listing without a restart; the first page of a ${code("coverage")} browse carries ${code("sources")}, the source summary of the planes browsed, whose ${code("listings")} rows name every skipped instrument (additive; that ${code("detail")} is no longer cut at 300 characters); ${code("resolve")} reads an index of each directory, same answers, flat cost at 10,000 assets. See ${code("docs?section=domains")}, "The asset directory".`,
    `- The human docs page at ${code("/")} renders these sections with a CommonMark library (markdown-it, GitHub tables) instead of a hand-written subset: raw HTML in a section shows as text, images are not rendered, links go only to web, mail or relative targets.`,
    `- For operators and embedders (nothing changes over HTTP or MCP): the ${code("market-data")} command line is read with Node's own ${code("parseArgs")}; ${code("--")} ends the options (a word after it may start with a dash), and a single-dash option or a value given to ${code("--json")} (${code("--json=yes")}) is refused in one line with exit 2 instead of being taken as a word or ignored. The library ${code("@market-data/embedded")} keeps its name and API; in the repository it moved from ${code("adapters/inprocess")} to ${code("embedded/")}, above the composition root, which mounts the MCP endpoint beside the HTTP API.`,
    `- Live equity prices for the whole issuer list: the price connector follows every equity asset the store holds (the ticker list's companies, stored companies and Form 4 issuers with a ticker; before, a Form 4 issuer was never fetched), one request per ticker after each close (each ticker its own series: see the share classes entry below); an issuer with no ticker is counted in the price source's ${code("detail")}. See ${code("docs?section=domains")}.`,
    `- Share classes trade apart: daily bars are kept per ticker, not per company, so the two assets of a company with two classes (${code("eq:1067983:BRK-A")} and ${code("eq:1067983:BRK-B")}, GOOGL and GOOG) answer ${code("price")}, ${code("technicals")}, ${code("series")}, ${code("valuation")}'s ${code("price_usd")} and the equity ${code("read")} headline from their own prices (before, every ticker of a company answered from one series: wrong for at least one class), and the tier and ${code("alive")} are the ticker's. For a company under more than one ticker, ${code("market_cap_usd")}, ${code("pe_ttm")}, ${code("ps_ttm")} and ${code("ev_ebitda_ttm")} are given on its primary ticker (${code("JPM")}, not ${code("JPM-PD")}) and are ${code("null")} with ${code("not_applicable")} under ${code("unavailable")} on its other lines and on both classes of a two-class company (BRK-A and BRK-B): the filed share count and earnings per share are the company's, not a class's. The price connector fetches every ticker (one request each) and ${code("ingest prices")} loads a file's rows into the ticker it names. See ${code("docs?section=domains")}.`,
    `- Keyless IPv6 callers are rate limited by their /64 (the block one subscriber is given) instead of by each address: a caller could multiply its keyless budget by drawing addresses from its block. IPv4 callers are unchanged. See ${code("docs?section=access")}.`,
    `- Keyless callers behind a reverse proxy: the operator can list trusted proxies (${code("MARKET_DATA_TRUSTED_PROXIES")}); a request arriving through one is rate limited by the client address the proxy reports in ${code("X-Forwarded-For")} (the right-most entry that is not a trusted proxy) instead of sharing the proxy's address with every other keyless caller. From any other peer the header is ignored, as before. See ${code("docs?section=access")}.`,
    `- The simulated market kept (embedded default): a reopened data folder reads the simulated crypto history back from ${code("MARKET_DATA_DIR/simulated-market/")} and generates only the time since it was written, instead of the whole year again (${code("DATABASE_URL=memory")} and server PostgreSQL still generate it at start; on a fresh folder the year is generated in a child process, on a second core, while the database is created, and each asset is read back as soon as the child has written it); the answers are those of a start that generated everything. Simulated series values (prices, volumes, taker flow, book depth, open interest, liquidations; funding rates excepted) now carry float32 precision, about seven significant digits, which halves the memory they take; the simulated history for a given seed changed accordingly.`,
    `- For operators (no answer changes): ${code("market-data serve")} turns V8's allocation-site pretenuring off in its own process (${code("npm start")}, ${code("npx market-data serve")} and the container alike). Requests answered while a start was still generating and sampling history (a load balancer's ${code("/readyz")}, an agent polling) made V8 allocate the request path in the old generation for good, which cost a warm 428-asset server nearly twice the CPU per answer; see docs/performance.md.`,
    `- For operators (no answer changes): a new embedded data folder's database is created aside and moved in whole, so a start stopped part-way (SIGTERM, SIGKILL, power loss) never leaves a half-made database that the next start would take for a whole one; a SIGTERM during that creation stops it at once instead of waiting for it.`,
    `- Live mode at the whole market's size: a first start takes every perpetual's quote from the venues' bulk tickers and its last day of bars before any deeper history, so each is alive with its price within a minute (550 Binance perpetuals; it took up to an hour, the history being fetched one asset at a time); the history fills in behind, the busiest assets first. Binance klines weigh what their window holds (a poll's new bar 1 instead of 5). The order books come in cycles the venue's request budget allows (every minute up to a few dozen perpetuals; 550 on Binance: every 6 minutes), and the ${code("books")} status gives the cadence the cycles measure, so ${code("price")} and ${code("liquidity")} read ${code("live")} at the whole market's size instead of ${code("stale")}.`,
    `- Every trading perpetual served or named (live mode): a coin the registry knows spot or on-chain (${code("crypto:monero")}, ${code("crypto:popcat")}) is priced from its perpetual once it trades one (it had no price), and a venue's perpetual comes before the registry's spot pair there (OKX's ${code("ENS-USDT-SWAP")} was not fed); a coin the registry knows to discovery only is served once it trades; two coins under one ticker on one venue (Binance's ${code("1000000BOBUSDT")} and ${code("BOBUSDT")}) are two assets (one was not fed); a perpetual another symbol of its asset feeds (${code("BTCUSDC")} beside ${code("BTCUSDT")}, ${code("MKRUSDT")} beside ${code("SKYUSDT")}) is named ${code("same_asset")} in the venue's ${code("listings")} source. See ${code("docs?section=domains")} ("The asset directory").`,
    `- Live mode at the venues' speed: each perpetual's top of book, mark, index and funding rate stream in from the venues' public websockets (Binance ${code("<symbol>@bookTicker")} and ${code("!markPrice@arr@1s")}, Bybit ${code("tickers")}, OKX ${code("tickers")}, ${code("mark-price")} and ${code("funding-rate")}, Hyperliquid ${code("bbo")} and ${code("activeAssetCtx")}), so ${code("price")} carries the venue's current bid and ask and its ${code("as_of")} is the venue's event time (the books were polled, up to 20 minutes apart at the whole market's size). The ${code("books")} and ${code("fundingState")} statuses follow the stream (a 5 s cadence; ${code("stale")} at once with the reason when it is down, then the REST fallback's). Every instance holds its own streams, so an instance that does not lead answers as fresh as the leader. ${code("liquidity")}'s ${code("depth")} gives the time its depth was read (${code("as_of")}); each venue's REST weight per minute is its new ${code("rest")} source. Binance's liquidations now come from its routed ${code("/market")} endpoint (an unrouted connection receives none since Binance split its endpoints). See ${code("docs?section=domains")} (freshness) and the operator's live-mode notes (README, "Live mode").`,
    `- No crypto figure across a hole in the history (live mode, while the history fills in behind the last day a start stores first): the returns, ${code("range_pos_7d_pct")}, the technicals, ${code("structure")} and the baselines' samples use only the 15 m bars held end to end up to the newest one, and a figure whose window they do not cover is ${code("null")} with ${code("insufficient_history")} (it could average prices from both sides of the hole: a 1 h ${code("sma_50")} of 1,592 where the newest closes gave 1,196). Technicals and baselines computed before history was stored behind them are rebuilt at the next request (the technicals waited for the next closed bar, the baselines kept the hole). After a venue outage the bar forming is stored only next to the bars behind it, which the bars job fetches first, so an outage no longer leaves a hole for good (the bars job resumes from the newest stored bar). See ${code("docs?section=domains")}, "History with a hole".`,
    `- Venue conventions, checked and said: open interest is USD of one side on every venue. Bybit's ${code("openInterest")} and ${code("openInterestValue")} count both sides (longs plus shorts), and so does Hyperliquid's ${code("openInterest")} (the sum of absolute position sizes): Bybit's are read from its single-side fields (${code("singleOpenInterestValue")}, ${code("singleOpenInterest")}; half the both-sides figure where a row lacks them), Hyperliquid's halved, so ${code("open_interest.usd")} and what is built on it (its change, ${code("net_delta_pct_of_oi_24h")}, ${code("intensity_pct_of_oi_24h")}, the funding weights) no longer count those venues twice; their ${code("by_venue")} rows carry ${code('venue_counts: "both_sides"')} (additive). Rows stored before are not rewritten: a live store kept across the change shows a one-time step down on those venues. ${code("liquidations")} carries ${code("lower_bound")} (additive) when its totals are a floor, naming the figures and each venue with its reason: Binance's all-market stream sends at most one liquidation per symbol per second, OKX's liquidation orders are read 100 per instrument family every 5 minutes, Hyperliquid publishes none. See ${code("docs?section=domains")}, "Venue conventions".`,
    `- The simulated default streams as live mode does: every 250 ms the simulated market applies each listing's top of book and each perpetual's mark, index, funding and open interest through the same ingest interface as the venue streams (between 15-minute closes the price follows a path to the next close, deterministic from the seed and the instant), and serves the bar still forming, refreshed every minute; so ${code("price")}'s bid and ask move sub-second, ${code("as_of")} follows the clock, and the ${code("books")} and ${code("fundingState")} statuses have the stream's 5 s cadence (their ${code("source")} stays ${code("simulated")}). Its prices stay believable: every asset stays within its late-2025 range over the whole simulated year (ether 1,500 to 8,000 USD, bitcoin 60,000 to 150,000, solana 80 to 400; the default seed read an ether at 19,127 USD); the simulated history for a given seed changed accordingly, and a kept history is generated anew.`,
    `- Liquidations and the forming bar over the venues' streams (live mode): the Binance, Bybit and OKX liquidation streams run on the same connection manager as the market streams (keep-alive, silence, reconnect with backoff and jitter, rotation, following listings; a status ${code("last_error")} is typed: ${code("network")}, ${code("timeout")}, or ${code("status: subscribe: subscription refused")}). OKX's liquidations now stream in too (${code("liquidation-orders")}, every swap), beside its REST poll, which stays as backfill and fallback: both write the same one-minute rows, each side the larger of the two counts, never their sum, and OKX's totals stay a floor (${code("lower_bound")}, as before). OKX's forming 15-minute bar streams from ${code("candle15m")} on its business endpoint (${code("MARKET_DATA_OKX_WS_BUSINESS_BASE_URL")}, default the OKX websocket base URL's) in place of a REST request per swap each minute. Hyperliquid keeps its forming bar on REST (its per-IP subscription cap leaves no room for a candle per perpetual) and publishes no market-wide liquidations. See the operator's live-mode notes (LiveDoc, "Liquidation streams").`,
    `- MCP revision ${code("2026-07-28")} beside ${code("2025-11-25")}, ${code("2025-06-18")} and ${code("2025-03-26")} on ${code("/api/mcp")}, chosen per request: no handshake, the version and client capabilities in each request's ${code("_meta")} and ${code("MCP-Protocol-Version")}, ${code("Mcp-Method")}/${code("Mcp-Name")} mirrored headers and ${code("Mcp-Param-Asset-Id")} for a tool's ${code("id")}, ${code("server/discover")}, ${code("resultType")} and server identity on every result, ${code("ttlMs")}/${code("cacheScope")} caching hints, unknown methods 404 and unknown resources ${code("-32602")}. Asset resources ${code(`${MCP_ASSET_URI_PREFIX}{asset_id}`)} (the ${code("read")} result, billed exactly as ${code("read")}; keyless refused) on every revision, and push at ${code("2026-07-28")}: ${code("subscriptions/listen")} with ${code("notifications/resources/updated")} when a subscribed asset's data changes (limits in ${code("access")}). The older revisions answer as before, except that an unsupported ${code("MCP-Protocol-Version")} is now ${code("-32022")} with the supported versions and the request's id (it was ${code("-32000")} without an id). See ${code("mcp")}.`,
    `- The ${code("Idempotency-Key")} rule is worded once and the same everywhere (these docs, the ${code("invalid_idempotency_key")} message and the OpenAPI schema, which gains a ${code("pattern")}): a key is ${IDEMPOTENCY_KEY_RULE}. Which keys are accepted is unchanged (a key with inner spaces always was); a rejection's message now names what is wrong, then the rule. The ${code("market-data")} command exits 0 for ${code("--help")} as for ${code("help")}. For operators (no answer changes): until ${code("serve")} listens it logs a ${code("starting, N s so far: ...")} line about every 5 s naming what it is doing and how far along (loading its modules, creating and migrating the embedded database, generating and writing the simulated filings, the crypto history's child process); ${code("compose.yaml")} passes every ${code(".env.example")} variable on to its instances except those marked ${code("[host only]")}.`,
    `- A database outage costs a retrying client about a second, not the lease: a request whose admission committed before the database went away (its answer lost with the connection) is released too, and the server that admitted it releases every such request as soon as the database is back (it tries every quarter second, not only before the key's next request on that server), so a retry with the same ${code("Idempotency-Key")} on any server answers normally instead of ${code("409 request_in_progress")} for up to 60 s. The fault suite checks every request an outage cut answers within 5 s of the database's return, on another server.`,
    `- Internal, no change to any answer: the request pipeline is a folder read top to bottom (${code("core/src/pipeline/")}: Handle, Authenticate, Paid, Metered, Free, Conditional, Answers); the releases an outage kept from the store belong to the money store's decorator (${code("core/src/ReleaseAfterOutage.ts")}); the request path's process-local memory (ETags, key hashes, decoded parameters) is a set of bounded caches each service instance builds for itself (${code("RequestCaches")}); the HTTP adapter takes every ETag from the core (the ETags of the keyless documents change value once) and writes every API answer in one place.`,
    `- Hardening against callers without a key: ${code("/metrics")} is served only on a port of its own (9464 on loopback by default, never the public port), rendered at most once a second; connections are capped per client address (128) and in all (1,024), one past a cap answered ${code("429")} or ${code("503")} with ${code("Retry-After: 1")} before its request is read; a request body must arrive within 5 s (${code("408")} otherwise); a keyless MCP POST spends its rate unit when it arrives, whatever becomes of it, and once out of units is answered ${code("429")} with one JSON-RPC error (not one per batch member; later members of a batch cut short by the limit get a short refusal); the embedded data folder is owner-only (${code("0700")}, files ${code("0600")}) and tightened at start; cursors are documented as positions anyone may write. See ${code("docs?section=access")}.`,
    `- Live mode across a 15-minute close: where a venue's kline stream marks the closed bar (Binance ${code("x: true")}, Bybit ${code("confirm: true")}, OKX ${code('confirm: "1"')}), that bar is stored from the stream at the close, and REST is asked only for the bars the stream missed (before, every close cost one REST request per perpetual, 550 on Binance, and an asset whose newest stored bar was a slot behind read ${code("delayed")} for minutes). Freshness per asset: a symbol a venue's stream does not serve while it serves the others (refused, or silent) reads the time of its own REST book and funding state and the REST job's cadence, not the stream's health; ${code("price")} is judged by the primary venue, whose book it quotes, so another venue's outage no longer turns it ${code("stale")}. ${code("open_interest")}: a venue that streams open interest (Bybit, Hyperliquid; every perpetual in the simulated default) answers its row from the stream, one side in USD, as of the stream's newest event; the 24 h change, the basis and their percentiles stay on the stored 15-minute snapshots.`,
    `- MCP push across instances: a ${code("subscriptions/listen")} stream reads each subscribed asset at least every ${MCP_LISTEN_LIMITS.watchMaxIntervalMs / 1000} s, not only when its ${code("next_update_at")} comes, so a change that lands before it (the forming bar of a ${code("read")} whose ${code("next_update_at")} is the next bar close; an instance that does not lead re-reading the leader's data from the store) is announced within ${MCP_LISTEN_LIMITS.watchMaxIntervalMs / 1000} s instead of at that time (up to 15 minutes later). Tested with two live instances on one PostgreSQL: a listener on the one that does not lead is notified of what the leader ingested. See ${code("mcp")}.`,
    `- Freshness judged by what an answer reads: ${code("technicals")}, ${code("structure")} and ${code("series")}, computed from the primary venue's 15-minute bars alone, are judged by that venue alone as ${code("price")} is (another venue's failing bars job turned them ${code("stale")} with nothing of theirs missing); and since no answer reads another venue's 15-minute bars, the ${code("bars")} component is judged on the primary venue alone by every operation (a venue whose bars run late, such as Hyperliquid's polled candles at the whole market's size, no longer turns ${code("read")} ${code("delayed")} for every asset it lists). OKX's open interest streams too (live mode, its ${code("open-interest")} channel, every 3 s on change): ${code("open_interest")} answers OKX's row from it as it does Bybit's and Hyperliquid's; Binance's row stays on the 15-minute snapshot (Binance streams no open interest).`,
    `- Live mode, no answer changes but when: each run of a venue's bars job asks every perpetual's new bars first and only then the history behind the first stored day, which gives way at the next close (before, each perpetual's history came before the next one's new bar, so a 15-minute close during a start's backfill left the perpetuals late in the order ${code("delayed")} for minutes on a venue with a small REST budget, such as Hyperliquid, whose candles are polled).`,
    `- Live mode: Hyperliquid's forming 15-minute bar streams (its ${code("candle")} subscription at ${code("15m")}) for the coins Hyperliquid is the primary venue of, those whose bars are their price; the forming-bar job writes it without a request, and the first push of the next bar makes the bar before final, so the close needs none either (before, ${code("candleSnapshot")} at weight 21 of Hyperliquid's 1,200 a minute reached about 28 coins a minute, and a coin's bar ran minutes behind at a few dozen primaries). The other coins' bars, which no answer reads, stay on REST, so two instances still fit under Hyperliquid's 1,000 subscriptions per IP.`,
    `- Internal, no change to any answer: no module of the core holds state. What answering remembers (each parameter's validating schema, the measures' derived columns and scratch, ${code("resolve")}'s directory indexes, each result's serialized text, an asset's venues) belongs to the parameter spec, crypto plane, universe or handler that made it, so two service instances in one process never share it; a test reads the core's source and types to keep it so.`,
    `- Internal, no change to any answer: the HTTP transport is one stack on Node's request event. The API, the docs page and the MCP endpoint (its ${code("subscriptions/listen")} streams included) are answered by one handler, with the same request ID, log line and metrics, and written in one place; the HTTP adapter keeps nothing at module scope, so each server instance has its own. The docs page's ETags come from the core's ETag function like every other (they change value once).`,
    `- MCP push at scale: one watcher per instance serves every ${code("subscriptions/listen")} stream, an asset read once however many streams subscribe to it; the ${MCP_LISTEN_LIMITS.watchMaxIntervalMs / 1000} s look at each subscribed asset reads it only when the store's revision for that asset moved (an idle subscription costs a number compared, not a read), the looks spread evenly over the period by asset instead of in bursts; a stream keeps a few numbers per subscription (its URIs are not stored beside the asset IDs). New: ${code('"resourcesListChanged": true')} in the listen filter is honoured, ${code("notifications/resources/list_changed")} coming when the asset universe changes size (a new listing), and ${code("server/discover")} says ${code('resources: {"listChanged": true}')}. See ${code("mcp")} and ${code("access")}.`,
    `- A start opens its port first: while the service opens (a first start creates its database and loads the simulated filings for tens of seconds), ${code("/healthz")} answers ${code("200")}, ${code("/readyz")} ${code("503")} naming the step under way, and every other request ${code("503 source_unavailable")} with ${code("Retry-After: 1")}: nothing executed, nothing charged, so a retry lands on the open service instead of a refused connection.`,
    `- For operators (no answer changes): live mode's market streams read their frames on a worker thread of their own, and what the frames change reaches the thread that answers as compact numeric records at most every 10 ms; at the whole market's pace the frames' garbage (about 20 MB a second) was collected on the answering thread, between requests. ${code("MARKET_DATA_STREAM_THREAD=off")} reads them on the answering thread as before. A stream worker that stops turns its venues' streams down with the reason (their books go to REST) and is replaced within seconds.`,
    `- Internal, no change to any answer: a repeated paid ${code("read")} or ${code("price")} builds nothing per request on the planes' path while its data has not changed (the answer memo's key kept per decoded parameter set, a single-${code("id")} answer's output kept per result), so the service's own paid ${code("read")} answers faster (0.60x a bare ${code("node:http")} answer in the money bench, 0.49x before).`,
    `- For operators (no answer changes): a listing refresh that changes nothing (live mode, every 30 minutes) keeps every asset's measures and baselines; each was recomputed at its next request after every refresh, which slowed answers for minutes at the whole market's size.`,
    `- For operators (no answer changes): live mode's leader lock on PostgreSQL is per database and schema (it was per database): two deployments in one database on different schemas (a ${code("search_path")} in ${code("DATABASE_URL")}'s ${code("options")}) each have a leader, where before one of them ingested nothing. During an upgrade from an earlier version, the old and the new instances contend for different locks, so one of each may ingest until the old ones stop (the writes are the same, stored once). An instance that cannot reach PostgreSQL for the lock logs it once, and once when it can again.`,
    `- For operators (no answer changes): live mode's stream worker thread runs at niceness 10 (${code("MARKET_DATA_STREAM_THREAD_NICE")}, 0 to 19; Linux), the thread that answers at the process's priority, so that a request arriving while frames are read goes first when both want a core.`,
    `- For operators (no answer changes): once a start's work is done, the heap may grow to twice what the last full collection kept before the next one (it was 1.25 times): full collections come a quarter as often under load, and their marking no longer takes the core that answering and the clients share (the paid ${code("read")} on the memory store answered 0.53x to 0.62x bare ${code("node:http")} instead of 0.42x to 0.49x). The warm server's RSS under load is about 40 to 100 MB higher at the 35-asset registry.`,
    `- Internal, no change to any answer: what answering derives from a result (its text, its ${code("next_update_at")}, its output) is kept on the result itself instead of in weak maps keyed by results, which grew by every result replaced and which V8 goes over in each full collection's pause: under the whole market's streams, the thread that answers paused 7 to 33 ms for a full collection under request load instead of up to 210 ms. The JSON request line is written with plain ${code("JSON.stringify")} where the general formatter changes nothing (the same bytes, a quarter of the time).`,
    `- Live mode, no change to any answer: once every asset's baselines are warm, ${code("serve")} logs ${code("crypto baselines warm")} and hands back the memory its start freed, and from then on its heap grows by at most its live size between full collections, as the simulated default's already did: under the whole market's streams the answering thread's heap had grown to 340 MB of mostly garbage before a full collection, which then paused up to 75 ms; now 9 to 23 ms.`,
    "",
    todo.length === 0
      ? "Nothing is temporary."
      : `Temporary: these operations are defined but their data plane has not landed; until it does they answer ${code("501 not_implemented")}, uncharged: ${todo.map((o) => code(o.name)).join(", ")}.`,
    "",
    `Compatibility: ${code(ctx.basePath)} changes only by adding. A field or operation that is to be retired first gets ${code("Deprecation")} and ${code("Sunset")} headers and an entry here.`
  ].join("\n")
}

const RENDER: { readonly [S in DocsSection]: (ctx: DocsContext) => string } = {
  index,
  quickstart,
  domains,
  access,
  grammar,
  refusals,
  resolve: resolveSection,
  errors,
  pricing,
  examples,
  changelog
}

/** Renders one section as markdown. */
export const renderDocs = (section: DocsSection, ctx: DocsContext): string => `${RENDER[section](ctx)}\n`

/** Every section, in order (for resources listings). */
export const allSections: ReadonlyArray<DocsSection> = DocsSections
