/**
 * The market-data service embedded in your own Node program: no server, no HTTP. `createMarketData` from
 * `@market-data/embedded` opens the same service `npm start` runs (stores, data planes, the request pipeline)
 * inside this process and gives you the 23 operations as methods.
 *
 * Part 1 runs as the embedding program itself (no `apiKey`): a trusted caller, not billed, not rate limited.
 * Part 2 opens it again with an API key: every call then goes through authentication, the rate limit and
 * credits exactly as over HTTP, including conditional reads (ETag / 304) and `insufficient_credits`.
 *
 * Both use the in-memory store and the deterministic simulated feed (a year of market history is generated
 * when the service opens, about 3 s each). Run it from the repository root:
 *
 *   node examples/embedded.ts
 *
 * Exit code: 0 when every step went as described, 1 otherwise.
 */
import { createMarketData, MarketDataError } from "@market-data/embedded"

// A made-up key for the memory store: `ensureCredits` creates it inside this process (format `mdk_` + 32 base62).
const DEMO_KEY = "mdk_EmbeddedExample0123456789abcdefg"

const show = (title: string, value: unknown) => console.log(`\n== ${title}\n${JSON.stringify(value, null, 2)}`)

/** The parts of answers this example reads (the full shapes are in `schema` and the `domains` docs section). */
interface Contextual {
  readonly value: number
  readonly pctl: number
}
interface ReadCrypto {
  readonly asset_id: string
  readonly status: string
  readonly as_of: string
  readonly next_update_at: string
  readonly headline: {
    readonly price_usd: number
    readonly return_24h_pct: Contextual
    readonly funding_rate_8h_pct: Contextual
    readonly trend_state: string
  }
  readonly assessment: Record<string, { readonly rule: string } & Record<string, string>>
}
interface Financials {
  readonly periods: ReadonlyArray<{ readonly id: string; readonly form: string; readonly filed_at: string }>
  readonly values: Record<string, { readonly unit: string; readonly by_period: ReadonlyArray<string | null> }>
}

const trusted = async () => {
  console.log("# Part 1: the embedding program as a trusted caller (no apiKey)")
  const md = await createMarketData({ store: "memory", feed: "simulated" })
  try {
    // Methods resolve to the operation's JSON envelope `{data}` and reject with a MarketDataError.
    const btc = (await md.read({ id: "crypto:bitcoin" })).data as ReadCrypto
    const h = btc.headline
    show("read crypto:bitcoin (headline)", h)
    console.log(
      `BTC ${h.price_usd} USD, 24h ${h.return_24h_pct.value.toFixed(2)}% (pctl ${h.return_24h_pct.pctl}), ` +
        `trend ${h.trend_state}, status ${btc.status}, next update at ${btc.next_update_at}`
    )

    // A batch: `ids` answers `{data: [...], refused: [...]}`; an unknown asset is refused, not an error.
    const batch = await md.price({ ids: ["crypto:bitcoin", "crypto:ethereum", "crypto:no-such-coin"] })
    const prices = batch.data as ReadonlyArray<{ asset_id: string; usd: number }>
    show(
      "price, a batch of three",
      prices.map((p) => `${p.asset_id} ${p.usd} USD`)
    )
    show("refused", batch.refused)

    const funding = (await md.funding({ id: "crypto:bitcoin" })).data as {
      funding: {
        rate_8h_pct: Contextual & { pctl_1y: number }
        apr_pct: number
        funding_band: string
        next_funding_at: string
      }
    }
    const f = funding.funding
    show("funding crypto:bitcoin", {
      rate_8h_pct: f.rate_8h_pct,
      apr_pct: f.apr_pct,
      funding_band: f.funding_band,
      next_funding_at: f.next_funding_at
    })

    // A simulated company: find it by name, then read its filed statements. Filed values are exact decimal
    // strings, never floats, so arithmetic on them should stay exact (BigInt for whole dollars here).
    const resolved = (await md.resolve({ q: "Aldermoor" })).data as { best: { asset_id: string; name: string } | null }
    const company = resolved.best?.asset_id
    if (company === undefined) throw new Error("resolve found no simulated company named Aldermoor")
    console.log(`\n== resolve "Aldermoor" -> ${company} (${resolved.best?.name})`)
    const fin = (await md.financials({ id: company, statements: ["income"], period_kind: "quarter", periods: 2 }))
      .data as Financials
    show(
      `financials ${company}, last two quarters`,
      fin.periods.map((p) => `${p.id}: ${p.form} filed ${p.filed_at}`)
    )
    for (const concept of ["revenue", "cost_of_revenue", "gross_profit", "eps_diluted"]) {
      const line = fin.values[concept]
      if (line !== undefined) console.log(`${concept.padEnd(16)} ${line.unit.padEnd(14)} ${line.by_period.join("  ")}`)
    }
    const [revenue, cost, gross] = ["revenue", "cost_of_revenue", "gross_profit"].map(
      (c) => fin.values[c]?.by_period[0]
    )
    if (revenue && cost && gross && /^-?\d+$/.test(revenue + cost + gross)) {
      const computed = BigInt(revenue) - BigInt(cost)
      console.log(`revenue - cost_of_revenue = ${computed} (filed gross_profit ${gross})`)
    }

    // A typed error: funding is a crypto operation, so an equity is refused with `plane_mismatch` (422).
    try {
      await md.funding({ id: company })
      throw new Error("funding on an equity should have been refused")
    } catch (e) {
      if (!(e instanceof MarketDataError)) throw e
      console.log(`\n== funding ${company} -> ${e.status} ${e.code}: ${e.message}`)
    }
  } finally {
    await md.close()
  }
}

const keyed = async () => {
  console.log("\n# Part 2: with an API key (authenticated, rate limited, billed)")
  // `ensureCredits` makes sure the key exists with at least this balance: handy on the memory store, where no
  // other process can mint keys. On PGlite or PostgreSQL you would mint it with `market-data keys create`.
  const md = await createMarketData({ store: "memory", apiKey: DEMO_KEY, ensureCredits: 3 })
  try {
    const credits = async () => ((await md.usage()).data as { credits_remaining: number }).credits_remaining
    console.log(`credits: ${await credits()}`)

    // `call` answers what a transport would see: status, charge, ETag, seconds until next_update_at.
    const first = await md.call("read", { id: "crypto:bitcoin" })
    console.log(
      `read crypto:bitcoin -> ${first.status}, charged ${first.creditsCharged}, ETag ${first.etag}, ` +
        `max-age ${first.maxAgeSeconds} s, source ${first.dataSource}`
    )
    // Asking again before next_update_at with the ETag: 304, nothing new, zero credits.
    const again = await md.call(
      "read",
      { id: "crypto:bitcoin" },
      first.etag === undefined ? {} : { ifNoneMatch: first.etag }
    )
    console.log(`read again with If-None-Match -> ${again.status}, charged ${again.creditsCharged}`)

    // funding costs 3 credits; 2 are left, so the service refuses it up front and charges nothing.
    try {
      await md.funding({ id: "crypto:bitcoin" })
      throw new Error("funding should have been refused for lack of credits")
    } catch (e) {
      if (!(e instanceof MarketDataError)) throw e
      console.log(`funding crypto:bitcoin -> ${e.status} ${e.code} (retryable ${e.retryable}): ${e.message}`)
    }
    console.log(`credits: ${await credits()}`)
  } finally {
    await md.close()
  }
}

try {
  await trusted()
  await keyed()
} catch (e) {
  console.error(`embedded: ${e instanceof Error ? e.message : String(e)}`)
  process.exitCode = 1
}
