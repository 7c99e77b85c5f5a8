/**
 * Live mode's market streams on all four venues end to end (issue #29): a `market-data serve` process in live mode
 * on the memory store, pointed at replay Binance, Bybit, OKX and Hyperliquid venues on this machine
 * (`support/replay/four-venues.ts`: each venue lists its own assets, each book moving about once a second and
 * pushed on the venue's documented public channels) and a fake SEC EDGAR. Nothing leaves the machine.
 *
 * 1. Once every venue's perpetuals are streamed and their bars are in, `price` of random perpetuals for 15 s: on
 *    every venue, at least 95% of the answers carry `bid_usd` and `ask_usd`, every quote is one the venue
 *    published, and the book age at answer time (how long before the answer arrived the venue had replaced that
 *    quote, 0 while it is current; `stalenessOf` of the venue that lists the asset) has p99 <= 2 s.
 * 2. Each venue in turn has every websocket connection cut (`dropStreams`): its answers are that fresh again
 *    within 15 s.
 *
 * Small listings (`LIVE_VENUES_COUNTS`, default 40 Binance, 40 Bybit, 30 OKX, 10 Hyperliquid: Hyperliquid's info
 * API weighs a coin's first day of bars and funding 57 of its 1,200 a minute, and the service spends half of it)
 * so the file runs in about a minute and a half; the whole-market size (1,000 perpetuals) is the streams bench's
 * (`BENCH_ONLY=streams npm run bench`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FourVenues, startFourVenues, VENUES, type VenueName } from "./support/replay/four-venues.ts"
import {
  liveServiceEnv,
  type PriceSample,
  type ServedPerp,
  samplePrices,
  servedPerps,
  sleep,
  startFakeSec,
  summarize
} from "./support/replay/live-service.ts"
import { SERVE_ENTRY, type ServerProcess, startServerProcess, stopServerProcess } from "./support/server-process.ts"

const KEY = `mdk_${"Venus".repeat(6)}XY`
const BAR_MS = 15 * 60_000
const SAMPLE_MS = 15_000
const STALENESS_P99_MS = 2_000
const RECOVERY_MS = 15_000

const COUNTS: Record<VenueName, number> = (() => {
  const [binance, bybit, okx, hyperliquid] = (process.env.LIVE_VENUES_COUNTS ?? "40,40,30,10").split(",").map(Number)
  return { binance: binance ?? 40, bybit: bybit ?? 40, okx: okx ?? 30, hyperliquid: hyperliquid ?? 10 }
})()
const TOTAL = VENUES.reduce((n, v) => n + COUNTS[v], 0)

const until = async (
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean> | boolean,
  state: () => string = () => "",
  everyMs = 250
): Promise<number> => {
  const t0 = Date.now()
  for (;;) {
    if (await check()) return Date.now() - t0
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms (${state()})`)
    await sleep(everyMs)
  }
}

/** Samples by the venue that lists their asset. */
const byVenue = (four: FourVenues, samples: ReadonlyArray<PriceSample>): Record<VenueName, Array<PriceSample>> => {
  const out: Record<VenueName, Array<PriceSample>> = { binance: [], bybit: [], okx: [], hyperliquid: [] }
  for (const s of samples) {
    const v = four.venueOf(s.symbol)
    if (v !== undefined) out[v].push(s)
  }
  return out
}

describe("live mode streams the four venues' perpetuals from replay venues (memory store)", () => {
  let four: FourVenues
  let sec: { url: string; close: () => Promise<void> }
  let server: ServerProcess
  let perps: Array<ServedPerp> = []
  const startedMs = Date.now()

  beforeAll(async () => {
    four = await startFourVenues({ counts: COUNTS })
    sec = await startFakeSec()
    server = await startServerProcess(
      { DATABASE_URL: "memory", ...liveServiceEnv(four.binance, sec.url, KEY, four.env()) },
      { entry: SERVE_ENTRY, args: ["serve"], startTimeoutMs: 90_000 }
    )
  }, 120_000)

  afterAll(async () => {
    if (server !== undefined) await stopServerProcess(server)
    await four?.close()
    await sec?.close()
  })

  it("answers every venue's price from its stream, as fresh as the venue", async () => {
    const streamed = () => new Set(VENUES.flatMap((v) => four.venues[v].streamedSymbols()))
    const barsAsked = () => new Set(VENUES.flatMap((v) => four.venues[v].barsAsked()))
    await until(
      "every venue's perpetuals served and streamed",
      90_000,
      async () => {
        perps = await servedPerps(server.base, KEY, four)
        // A renamed ticker's asset (Binance's MKRUSDT is SKY's) carries the new ticker: not matched here.
        if (perps.length < TOTAL * 0.95) return false
        const s = streamed()
        return perps.every((p) => s.has(p.symbol))
      },
      () =>
        `${perps.length} of ${TOTAL} served; streamed ${VENUES.map((v) => `${v} ${four.venues[v].streamedSymbols().length}`).join(", ")}`,
      500
    )
    await until(
      "every perpetual's bars asked",
      90_000,
      () => {
        const k = barsAsked()
        return perps.every((p) => k.has(p.symbol))
      },
      () => VENUES.map((v) => `${v} ${four.venues[v].barsAsked().length}`).join(", ")
    )
    // Live answers with quotes everywhere, and a window that does not straddle a quarter-hour close. A close in the
    // first minutes once kept some assets `delayed` past two minutes (CI: 87 of 903 answers): Hyperliquid's bars,
    // polled at about 28 coins a minute, queued behind the first history. Since, the bars job asks every
    // perpetual's new bars before any history, Hyperliquid streams the forming bar of the coins it is the primary
    // of, and answers are judged by the primary venue's bars alone; the bound stays generous for a loaded CI.
    let probe: ReturnType<typeof summarize> | undefined
    await until(
      "price answers live with a quote",
      240_000,
      async () => {
        if (BAR_MS - (Date.now() % BAR_MS) < SAMPLE_MS + 20_000) return false
        probe = summarize(await samplePrices(server.base, KEY, four, perps, 500, 4))
        return probe.quotedShare === 1 && probe.statuses.live === probe.answers
      },
      () => JSON.stringify(probe?.statuses),
      1_000
    )
    console.info(
      `live streams (four venues): ${perps.length} perpetuals served, streamed and live ${Date.now() - startedMs} ms after the start; connections ${VENUES.map((v) => `${v} ${four.venues[v].connections()}`).join(", ")}`
    )

    const samples = byVenue(four, await samplePrices(server.base, KEY, four, perps, SAMPLE_MS, 4))
    for (const v of VENUES) {
      const s = summarize(samples[v])
      console.info(
        `live streams (four venues), ${v}: ${s.answers} answers, ${(s.quotedShare * 100).toFixed(1)}% quoted, book age p50 ${s.p50} ms p99 ${s.p99} ms max ${s.max} ms, ${s.unmatched} unmatched, statuses ${JSON.stringify(s.statuses)}`
      )
      expect(s.answers, v).toBeGreaterThan(20)
      expect(s.quotedShare, v).toBeGreaterThanOrEqual(0.95)
      expect(s.unmatched, `${v}: bid and ask the venue never published`).toBe(0)
      expect(s.p99, v).toBeLessThanOrEqual(STALENESS_P99_MS)
    }
  }, 480_000)

  it.each(VENUES)(
    "%s: every stream connection cut, its answers are fresh again within 15 s",
    async (v) => {
      expect(perps.length).toBeGreaterThan(0)
      const mine = perps.filter((p) => four.venueOf(p.symbol) === v)
      const venue = four.venues[v]
      const before = venue.connections()
      const framesBefore = venue.frames().total
      const dropMs = Date.now()
      venue.dropStreams()
      let last: ReturnType<typeof summarize> | undefined
      const ms = await until(
        `${v}: fresh answers after the streams were cut`,
        RECOVERY_MS + 10_000,
        async () => {
          const batch = await samplePrices(server.base, KEY, four, mine, 1_000, 4)
          // Reconnected and resubscribed (so the check cannot pass on the answers of before the cut)...
          if (venue.connections() < before || venue.frames().total === framesBefore) return false
          const streamed = new Set(venue.streamedSymbols())
          if (mine.some((p) => !streamed.has(p.symbol))) return false
          // ... and a second of answers as fresh as before.
          last = summarize(batch)
          return last.quotedShare >= 0.95 && last.unmatched === 0 && last.p99 <= STALENESS_P99_MS
        },
        () =>
          `${venue.connections()} connections, ${venue.streamedSymbols().length} of ${mine.length} streamed, last ${JSON.stringify(last)}`,
        100
      )
      console.info(
        `live streams (four venues), ${v} cut: fresh again ${Date.now() - dropMs} ms after it (${ms} ms of checks; last second ${last?.answers} answers, p99 ${last?.p99} ms)`
      )
      expect(Date.now() - dropMs).toBeLessThanOrEqual(RECOVERY_MS)
    },
    60_000
  )
})
