/**
 * Live mode's market streams end to end (issue #29): a `market-data serve` process in live mode on the memory store,
 * pointed at a replay Binance USD-M venue on this machine (`support/replay/binance-venue.ts`: 550 perpetuals, each
 * book moving about once a second, pushed as `bookTicker` frames, each move a trade in the `kline_15m` bar, the
 * mark-price array every second) and a fake SEC EDGAR. Nothing leaves the machine.
 *
 * 1. Once the streams are subscribed and the bars are in, `price` of random perpetuals for 20 s: at least 95% of
 *    the answers carry `bid_usd` and `ask_usd`, their staleness (how long before the answer arrived the venue had
 *    replaced that quote; 0 while it is the venue's current one; prices converted back to the venue's units for
 *    multiplied symbols such as `1000PEPEUSDT`) has p99 <= 2 s, every quote is one the venue published, and at
 *    least 95% of the answers say `live`.
 * 2. Every websocket connection cut (`dropStreams`): the answers are that fresh again within 15 s.
 * 3. REST: no `/fapi/v1/depth` request for a streamed book between the 15-minute depth runs. The service's REST
 *    budget (1,000 weight a minute) makes a depth run over 550 books (weight 5 each) take minutes, and the start's
 *    first one ends after this case; so this case checks that no streamed book was fetched twice in one 15-minute
 *    bucket while it ran, and `LIVE_STREAMS_STEADY=1` adds the steady-state case, which waits for a depth run to
 *    have covered every book and counts the depth requests of up to three minutes after it, before the next
 *    quarter-hour's run (ten to twenty minutes).
 * A defect found by this suite, now fixed, has its own case (see it): during the reconnect, answers say `live` with REST books
 * older than the stream's cadence.
 *
 * About 100 s (the start, the directory and the bars of 550 perpetuals take about 70 s); up to a minute or two more
 * when a quarter-hour falls just ahead, since the measurement waits for the bars of the closing one (`untilLive`).
 *
 * The second `describe` (server PostgreSQL, TEST_DATABASE_URL) starts two service processes on one database: the
 * one that does not lead ingestion answers `price` as fresh as the leader (staleness p99 within 1 s of the
 * leader's), since every instance holds its own streams (about a minute).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "../adapters/postgres/test/support.ts"
import { type ReplayVenue, startBinanceReplay } from "./support/replay/binance-venue.ts"
import {
  componentStatus,
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

const KEY = `mdk_${"Strms".repeat(6)}XY`
const PERPETUALS = 550
const BAR_MS = 15 * 60_000
const SAMPLE_MS = 20_000
const STALENESS_P99_MS = 2_000
const RECOVERY_MS = 15_000
const MARK_TOPIC = "!markPrice@arr@1s"

/** Polls `check` every `everyMs` until it answers true; fails with `what` (and the last state) past `timeoutMs`. */
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

/** An answer that says `live` with a quote older than the stream's cadence (`STREAM_CADENCE_MS`, 5 s). */
const falselyLive = (x: PriceSample) => x.status === "live" && (x.stalenessMs ?? 0) > 5_000

/** The symbols whose `bookTicker` a connection to the venue subscribes now. */
const streamedSymbols = (venue: ReplayVenue): Set<string> => {
  const out = new Set<string>()
  for (const c of venue.ws.connections())
    for (const t of c.topics) if (t.endsWith("@bookTicker")) out.add(t.slice(0, -"@bookTicker".length).toUpperCase())
  return out
}

/** Waits until `server` streams every perpetual it serves and has their bars; returns the perpetuals. */
const untilStreaming = async (
  server: ServerProcess,
  venue: ReplayVenue,
  label: string,
  symbolsStreamed: () => Set<string> = () => streamedSymbols(venue)
): Promise<{ perps: Array<ServedPerp>; ms: number }> => {
  const t0 = Date.now()
  let perps: Array<ServedPerp> = []
  // The directory has taken the venue's list (the registry's 35 assets before), and the stream subscribed it.
  await until(
    `${label}: the perpetuals listed and streamed`,
    90_000,
    async () => {
      perps = await servedPerps(server.base, KEY, venue)
      if (perps.length < PERPETUALS * 0.9) return false
      const streamed = symbolsStreamed()
      return perps.every((p) => streamed.has(p.symbol)) && venue.ws.subscribers(MARK_TOPIC) > 0
    },
    () => `${perps.length} served, ${symbolsStreamed().size} streamed`,
    500
  )
  // Each perpetual's last day of bars (the start's), so `price` has its newest bar to measure the book against.
  const klines = () => new Set(venue.rest.log.filter((e) => e.path === "/fapi/v1/klines").map((e) => e.symbol))
  await until(
    `${label}: every perpetual's bars fetched`,
    90_000,
    () => {
      const k = klines()
      return perps.every((p) => k.has(p.symbol))
    },
    () => `${klines().size} of ${perps.length}`
  )
  await untilLive(server, venue, perps, label)
  return { perps, ms: Date.now() - t0 }
}

/**
 * Waits until a probe of random perpetuals answers `live` with a quote, and until the next quarter-hour is far
 * enough that the measurement after this does not straddle it: when a 15-minute bar closes, the service fetches
 * the closed bar of every perpetual over REST (550 requests through its 1,000-weight-a-minute budget, queued behind
 * whatever else runs), and until an asset's comes its newest bar is more than a bar old, so its answers say
 * `delayed` (the bar clock's, not the quote's) for up to a minute or two.
 */
const untilLive = async (
  server: ServerProcess,
  venue: ReplayVenue,
  perps: ReadonlyArray<ServedPerp>,
  label: string,
  aheadMs = SAMPLE_MS + 25_000
) => {
  let probe: ReturnType<typeof summarize> | undefined
  await until(
    `${label}: price answers live, not just before a quarter-hour`,
    240_000,
    async () => {
      if (BAR_MS - (Date.now() % BAR_MS) < aheadMs) return false
      probe = summarize(await samplePrices(server.base, KEY, venue, perps, 500, 4))
      return probe.quotedShare === 1 && probe.statuses.live === probe.answers
    },
    () => JSON.stringify(probe?.statuses),
    1_000
  )
}

/**
 * Opt-in (`LIVE_STREAMS_E2E=1`): a run that crosses a 15-minute close waits minutes for the bars the close asks of
 * REST (550 perpetuals at Binance's weights) and once ran past its 300 s limit; until that is understood the
 * suite is run by hand, not by CI.
 */
const RUN = process.env.LIVE_STREAMS_E2E === "1"
if (!RUN) console.warn("live streams e2e SKIPPED: set LIVE_STREAMS_E2E=1 to run it")

describe.runIf(RUN)("live mode streams 550 perpetuals from a replay Binance (memory store)", () => {
  let venue: ReplayVenue
  let sec: { url: string; close: () => Promise<void> }
  let server: ServerProcess
  let startedMs = 0
  /** `price` answers from the cut of every stream until they were fresh again (the first case's). */
  const outage: Array<PriceSample> = []

  beforeAll(async () => {
    venue = await startBinanceReplay({ symbols: PERPETUALS })
    sec = await startFakeSec()
    startedMs = Date.now()
    server = await startServerProcess(
      { DATABASE_URL: "memory", ...liveServiceEnv(venue, sec.url, KEY) },
      { entry: SERVE_ENTRY, args: ["serve"], startTimeoutMs: 90_000 }
    )
  }, 120_000)

  afterAll(async () => {
    if (server !== undefined) await stopServerProcess(server)
    await venue?.close()
    await sec?.close()
  })

  it("answers price from the stream, as fresh as the venue, recovers from a cut stream, and polls no streamed book between depth runs", async () => {
    const { perps, ms: readyMs } = await untilStreaming(server, venue, "memory")
    const books = await componentStatus(server.base, KEY, "crypto:bitcoin", "binance", "books")
    console.info(
      `live streams: ${perps.length} perpetuals served and streamed over ${venue.ws.connections().length} connections, bars in, ${Date.now() - startedMs} ms after the start (${readyMs} ms of waiting); coverage's binance books source: ${JSON.stringify(books)}`
    )

    // 1. Price from the stream.
    const samples = await samplePrices(server.base, KEY, venue, perps, SAMPLE_MS)
    const s = summarize(samples)
    console.info(
      `live streams, steady: ${s.answers} answers, ${(s.quotedShare * 100).toFixed(1)}% with bid and ask, staleness p50 ${s.p50} ms p99 ${s.p99} ms max ${s.max} ms, ${s.unmatched} quotes the venue never published, statuses ${JSON.stringify(s.statuses)}, latency p50 ${s.latencyP50.toFixed(1)} ms p99 ${s.latencyP99.toFixed(1)} ms${s.unquoted.length > 0 ? `; without a quote: ${[...new Set(s.unquoted)].slice(0, 10).join(", ")}` : ""}`
    )
    expect(s.answers).toBeGreaterThan(200)
    expect(s.quotedShare).toBeGreaterThanOrEqual(0.95)
    expect(s.unmatched, "bid and ask the venue never published").toBe(0)
    expect(s.p99).toBeLessThanOrEqual(STALENESS_P99_MS)
    // `live` (a 15-minute bar closing during the window can leave an asset's newest bar late for the seconds its
    // REST fetch queues behind the others: `delayed`, the bar clock's, not the quote's).
    expect((s.statuses.live ?? 0) / s.answers, JSON.stringify(s.statuses)).toBeGreaterThanOrEqual(0.95)

    // 2. Every connection cut: the service notices, reconnects, resubscribes; the answers are fresh again.
    const connectsBefore = venue.ws.stats().connects
    const connectionsBefore = venue.ws.connections().length
    const dropMs = Date.now()
    venue.dropStreams()
    let recovered: ReturnType<typeof summarize> | undefined
    const recoveryMs = await until(
      "fresh answers after the streams were cut",
      RECOVERY_MS + 5_000,
      async () => {
        const samples = await samplePrices(server.base, KEY, venue, perps, 1_000)
        outage.push(...samples)
        // Reconnected and resubscribed (so the check cannot pass on the answers of before the cut)...
        if (venue.ws.stats().connects < connectsBefore + connectionsBefore) return false
        const streamed = streamedSymbols(venue)
        if (perps.some((p) => !streamed.has(p.symbol))) return false
        // ... and a second of answers as fresh as before.
        const batch = summarize(samples)
        recovered = batch
        return batch.quotedShare >= 0.95 && batch.p99 <= STALENESS_P99_MS
      },
      () => `${venue.ws.connections().length} connections, ${streamedSymbols(venue).size} symbols streamed`,
      100
    )
    console.info(
      `live streams, after the cut: fresh again ${recoveryMs} ms after it (${venue.ws.stats().connects - connectsBefore} connects; last second: ${recovered?.answers} answers, p99 ${recovered?.p99} ms)`
    )
    expect(Date.now() - dropMs).toBeLessThanOrEqual(RECOVERY_MS)
    const o = summarize(outage)
    console.info(
      `live streams, during the cut: ${o.answers} answers, ${(o.quotedShare * 100).toFixed(1)}% quoted, staleness p99 ${o.p99} ms max ${o.max} ms, statuses ${JSON.stringify(o.statuses)}, ${outage.filter(falselyLive).length} live with a quote older than the stream's 5 s cadence`
    )

    // 3. REST: every streamed book fetched at most once per 15-minute bucket (the depth runs) while this ran.
    const depth = venue.rest.log.filter((e) => e.path === "/fapi/v1/depth")
    const perBucket = new Map<string, number>()
    for (const e of depth) {
      const k = `${e.symbol}@${Math.floor(e.t / BAR_MS)}`
      perBucket.set(k, (perBucket.get(k) ?? 0) + 1)
    }
    const twice = [...perBucket].filter(([, n]) => n > 1).map(([k]) => k)
    const byPath = venue.rest.byPath()
    console.info(
      `live streams, REST: ${depth.length} depth requests (${new Set(depth.map((e) => e.symbol)).size} books) in ${Math.round((Date.now() - startedMs) / 1000)} s; weight by path ${JSON.stringify(Object.fromEntries(Object.entries(byPath).map(([p, x]) => [p, x.weight])))}; 429s for the weight limit ${venue.rest.limited()}`
    )
    expect(twice.slice(0, 10), "books fetched twice in one 15-minute bucket").toEqual([])
    expect(venue.rest.limited(), "requests past Binance's weight limit").toBe(0)
  }, 300_000)

  // While the streams reconnect, no answer says `live` from an older REST book: the venue's stream health is up only
  // while every connection is (`MarketStream.ts`, `publish`). This case was an expected failure until that fix.
  it("during the reconnect, no answer says live with a quote older than the stream's cadence", () => {
    expect(outage.length).toBeGreaterThan(0)
    const wrong = outage.filter(falselyLive)
    expect(
      wrong.length,
      `${wrong.length} answers live with quotes up to ${Math.max(0, ...wrong.map((x) => x.stalenessMs ?? 0))} ms old`
    ).toBe(0)
  })

  it.runIf(process.env.LIVE_STREAMS_STEADY === "1")(
    "steady state: between the 15-minute depth runs, no depth request for a streamed book",
    async () => {
      const { perps } = await untilStreaming(server, venue, "memory")
      const depth = () => venue.rest.log.filter((e) => e.path === "/fapi/v1/depth")
      const coveredSince = (fromMs: number) => {
        const fetched = new Set(depth().flatMap((e) => (e.t >= fromMs ? [e.symbol] : [])))
        return perps.every((p) => fetched.has(p.symbol))
      }
      // The start's depth run (every book, for the depth behind the top) has reached every perpetual.
      const firstRunMs = await until(
        "the first depth run over every book",
        15 * 60_000,
        () => coveredSince(0),
        () => `${new Set(depth().map((e) => e.symbol)).size} of ${perps.length}`,
        1_000
      )
      console.info(`live streams, steady state: the first depth run ended ${firstRunMs} ms into this case`)
      // A window after a depth run has covered every book and before the next quarter-hour's run (at +30 s): at
      // least a minute of it, at most three.
      let doneMs = Date.now()
      let window: { fromMs: number; ms: number } | undefined
      while (window === undefined) {
        const nextBucketMs = (Math.floor(doneMs / BAR_MS) + 1) * BAR_MS
        const roomMs = nextBucketMs + 30_000 - (doneMs + 5_000)
        if (roomMs >= 60_000) window = { fromMs: doneMs + 5_000, ms: Math.min(3 * 60_000, roomMs - 2_000) }
        else {
          await until(
            "the next quarter-hour's depth run over every book",
            15 * 60_000,
            () => coveredSince(nextBucketMs),
            () => "",
            1_000
          )
          doneMs = Date.now()
        }
      }
      await sleep(window.fromMs + window.ms - Date.now())
      const streamed = streamedSymbols(venue)
      const inWindow = depth().filter((e) => e.t >= (window as { fromMs: number }).fromMs)
      const ofStreamed = inWindow.filter((e) => e.symbol !== undefined && streamed.has(e.symbol))
      console.info(
        `live streams, steady state: ${inWindow.length} depth requests in the ${Math.round(window.ms / 1000)} s after a depth run (before the next), ${ofStreamed.length} of them for streamed books (${[...new Set(ofStreamed.map((e) => e.symbol))].slice(0, 10).join(", ")})`
      )
      expect(ofStreamed.length).toBe(0)
    },
    25 * 60_000
  )
})

if (!RUN || TEST_DATABASE_URL === undefined) {
  console.warn("live streams on two instances SKIPPED: set LIVE_STREAMS_E2E=1 and TEST_DATABASE_URL=postgres://...")
  describe.skip("two instances on one PostgreSQL (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  describe("two instances on one PostgreSQL: the one that does not lead is as fresh as the leader", () => {
    let venue: ReplayVenue
    let sec: { url: string; close: () => Promise<void> }
    let t: TestDatabase
    let leader: ServerProcess
    let follower: ServerProcess

    beforeAll(async () => {
      venue = await startBinanceReplay({ symbols: PERPETUALS })
      sec = await startFakeSec()
      t = await postgresTestDatabase(TEST_DATABASE_URL as string, 4)
    }, 120_000)

    afterAll(async () => {
      await Promise.all([leader && stopServerProcess(leader), follower && stopServerProcess(follower)])
      await venue?.close()
      await sec?.close()
      await t?.drop()
    })

    it("answers price with staleness p99 within 1 s of the leader's", async () => {
      const env = { DATABASE_URL: t.url as string, DATABASE_POOL_SIZE: "6", ...liveServiceEnv(venue, sec.url, KEY) }
      leader = await startServerProcess(env, { entry: SERVE_ENTRY, args: ["serve"], startTimeoutMs: 90_000 })
      const { perps } = await untilStreaming(leader, venue, "leader")
      // The venue tells the instances' connections apart by the order they came: the leader's are there now.
      const leaderConnections = new Set(venue.ws.connections().map((c) => c.id))
      await until("the leader leads", 10_000, () => /leads ingestion/.test(leader.stdout()))
      // The second instance starts on the data the leader wrote (bars, the directory), and streams on its own.
      follower = await startServerProcess(env, { entry: SERVE_ENTRY, args: ["serve"], startTimeoutMs: 90_000 })
      const followerStreamed = () => {
        const out = new Set<string>()
        for (const c of venue.ws.connections()) {
          if (leaderConnections.has(c.id)) continue
          for (const topic of c.topics)
            if (topic.endsWith("@bookTicker")) out.add(topic.slice(0, -"@bookTicker".length).toUpperCase())
        }
        return out
      }
      await untilStreaming(follower, venue, "follower", followerStreamed)
      expect(follower.stdout()).not.toMatch(/leads ingestion/)

      // Both at once, the same perpetuals at random.
      const [a, b] = await Promise.all([
        samplePrices(leader.base, KEY, venue, perps, 15_000, 2),
        samplePrices(follower.base, KEY, venue, perps, 15_000, 2)
      ])
      const sa = summarize(a)
      const sb = summarize(b)
      const line = (x: ReturnType<typeof summarize>) =>
        `${x.answers} answers, ${(x.quotedShare * 100).toFixed(1)}% quoted, staleness p50 ${x.p50} ms p99 ${x.p99} ms, ${x.unmatched} unmatched, ${JSON.stringify(x.statuses)}`
      console.info(`live streams, two instances: leader ${line(sa)}; follower ${line(sb)}`)
      expect(sb.quotedShare).toBeGreaterThanOrEqual(0.95)
      expect(sb.unmatched).toBe(0)
      expect(sb.p99).toBeLessThanOrEqual(sa.p99 + 1_000)
      expect(sb.p99).toBeLessThanOrEqual(STALENESS_P99_MS)
    }, 300_000)
  })
}
