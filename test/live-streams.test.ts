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
 * 4. A 15-minute close: the venue and the service run on one clock shifted ahead of this machine's
 *    (`support/shifted-clock.ts`, the venue's `clockOffsetMs`) so that a quarter-hour closes `CLOSE_AFTER_MS`
 *    (180 s) after the start, after the cases above. For 45 s after it 99 % of the `price` answers are `live` with the
 *    venue's quote, REST is asked for (almost) no kline (the closed bars come from the kline stream's closing
 *    frames), and the closed bar served is the venue's as it closed. This case was a failure before that change:
 *    the close cost one REST kline request per perpetual (73 in the 45 s after it, behind the depth run), and a
 *    run that crossed a close once ran past its limit with answers `delayed`.
 *
 * About four minutes: the start, the directory and the bars of 550 perpetuals take about 70 s, the close comes at
 * 180 s, and 45 s are watched after it.
 *
 * The second `describe` (server PostgreSQL, TEST_DATABASE_URL) starts two service processes on one database, on a
 * venue of 150 perpetuals: the one that does not lead ingestion answers `price` as fresh as the leader (staleness
 * p99 within 1 s of the leader's), since every instance holds its own streams (about a minute).
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
import { shiftedClockEnv } from "./support/shifted-clock.ts"

const KEY = `mdk_${"Strms".repeat(6)}XY`
const PERPETUALS = 550
/**
 * The two-instance case's venue: what it compares is the follower's freshness with the leader's, which does not
 * depend on the market's size, and each start of 550 perpetuals costs a minute of REST pacing.
 */
const TWO_INSTANCE_PERPETUALS = 150
const BAR_MS = 15 * 60_000
const SAMPLE_MS = 20_000
const STALENESS_P99_MS = 2_000
const RECOVERY_MS = 15_000
const MARK_TOPIC = "!markPrice@arr@1s"
/** How long after the service's start its clock crosses a quarter-hour (the memory suite's third case). */
const CLOSE_AFTER_MS = Number(process.env.LIVE_STREAMS_CLOSE_AFTER_MS ?? 180_000)
/** How long after the close the third case watches. */
const AFTER_CLOSE_MS = 45_000

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
      if (perps.length < venue.symbols.length * 0.9) return false
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

/** Waits until a probe of random perpetuals answers `live` with a quote. */
const untilLive = async (
  server: ServerProcess,
  venue: ReplayVenue,
  perps: ReadonlyArray<ServedPerp>,
  label: string
) => {
  let probe: ReturnType<typeof summarize> | undefined
  await until(
    `${label}: price answers live`,
    240_000,
    async () => {
      probe = summarize(await samplePrices(server.base, KEY, venue, perps, 500, 4))
      return probe.quotedShare === 1 && probe.statuses.live === probe.answers
    },
    () => JSON.stringify(probe?.statuses),
    1_000
  )
}

describe("live mode streams 550 perpetuals from a replay Binance (memory store)", () => {
  let venue: ReplayVenue
  let sec: { url: string; close: () => Promise<void> }
  let server: ServerProcess
  let startedMs = 0
  /** The quarter-hour (the venue's and the service's clock) the third case crosses. */
  let closeMs = 0
  /** The perpetuals served and streamed (the first case's). */
  let served: Array<ServedPerp> = []
  /** `price` answers from the cut of every stream until they were fresh again (the first case's). */
  const outage: Array<PriceSample> = []

  beforeAll(async () => {
    // The venue's and the service's clocks run ahead of this machine's so that a quarter-hour closes
    // `CLOSE_AFTER_MS` after the start: late enough for the first case, early enough not to wait for it.
    const closeRealMs = Date.now() + CLOSE_AFTER_MS
    closeMs = Math.ceil(closeRealMs / BAR_MS) * BAR_MS
    const offsetMs = closeMs - closeRealMs
    venue = await startBinanceReplay({ symbols: PERPETUALS, clockOffsetMs: offsetMs })
    sec = await startFakeSec()
    startedMs = Date.now()
    server = await startServerProcess(
      { DATABASE_URL: "memory", ...liveServiceEnv(venue, sec.url, KEY), ...shiftedClockEnv(offsetMs) },
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
    served = perps
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

  // A quarter-hour closes: the kline stream's closing frame (`x: true`) is the closed bar, stored as it came, so REST
  // is asked for none of them, and no answer goes `delayed` waiting for its bar. (Before: every close cost 550 REST
  // kline requests, queued behind the depth run, and an asset whose newest stored bar was a slot behind read
  // `delayed` until its turn.)
  it("across a 15-minute close: the closed bars come from the kline stream, REST fetches none of them, price stays live", async () => {
    expect(served.length).toBeGreaterThan(PERPETUALS * 0.9)
    const aheadMs = closeMs - venue.now()
    console.info(`live streams, close: the quarter-hour closes ${aheadMs} ms after the first cases ended`)
    expect(
      aheadMs,
      "the service was ready before the quarter-hour (raise LIVE_STREAMS_CLOSE_AFTER_MS)"
    ).toBeGreaterThan(0)
    const samples: Array<PriceSample> = []
    await until(
      "the close and the time after it",
      aheadMs + AFTER_CLOSE_MS + 30_000,
      async () => {
        samples.push(...(await samplePrices(server.base, KEY, venue, served, 1_000, 4)))
        return venue.now() >= closeMs + AFTER_CLOSE_MS
      },
      () => "",
      0
    )
    const offsetMs = venue.now() - Date.now()
    const after = samples.filter((x) => x.receivedMs + offsetMs >= closeMs)
    const a = summarize(after)
    const notLive = after.filter((x) => x.status !== "live")
    const klines = venue.rest.log.filter((e) => e.path === "/fapi/v1/klines" && e.t >= closeMs)
    console.info(
      `live streams, close: ${a.answers} answers in the ${AFTER_CLOSE_MS / 1000} s after it, ${(a.quotedShare * 100).toFixed(1)}% quoted, staleness p99 ${a.p99} ms, statuses ${JSON.stringify(a.statuses)}${
        notLive.length === 0
          ? ""
          : `; first not live: ${notLive
              .slice(0, 5)
              .map((x) => `${x.symbol} +${x.receivedMs + offsetMs - closeMs} ms ${x.status}`)
              .join(", ")}`
      }; ${klines.length} REST kline requests after it (${new Set(klines.map((e) => e.symbol)).size} symbols)`
    )
    expect(a.answers).toBeGreaterThan(200)
    expect(a.quotedShare).toBeGreaterThanOrEqual(0.99)
    expect(a.p99).toBeLessThanOrEqual(STALENESS_P99_MS)
    // Every answer `live` but for a hiccup of a loaded machine (a close that left assets a bar behind turned them
    // `delayed` for minutes, not single answers).
    expect(notLive.length / a.answers, "answers not live after the close").toBeLessThanOrEqual(0.01)
    // The stream missed none here; REST may still fetch a bar the stream sent after the wait (a book quiet for
    // 15 s), never one per perpetual.
    expect(klines.length, "REST kline requests after the close").toBeLessThanOrEqual(Math.ceil(served.length * 0.02))

    // The closed bar each asset serves is the venue's, as it closed (not the forming bar's last minute).
    const closedIso = new Date(closeMs - BAR_MS).toISOString()
    const wrong: Array<string> = []
    for (const p of served.filter((_, k) => k % 11 === 0)) {
      const r = await fetch(
        `${server.base}/api/v1/series?id=${encodeURIComponent(p.assetId)}&interval=15m&range=1w&limit=4`,
        {
          headers: { authorization: `Bearer ${KEY}` }
        }
      )
      const body = (await r.json()) as {
        data?: { bars?: Array<{ t: string; o: number; h: number; l: number; c: number }> }
      }
      const bar = body.data?.bars?.find((b) => b.t === closedIso)
      const v = venue.bar(p.symbol, closeMs - BAR_MS)
      if (bar === undefined || v === undefined) {
        wrong.push(`${p.symbol}: ${bar === undefined ? `no closed bar served (HTTP ${r.status})` : "no venue bar"}`)
        continue
      }
      const same = (x: number, y: number) => Math.abs(x - y) <= 1e-8 * Math.abs(y)
      const u = p.tokensPerUnit
      if (!same(bar.o, v.open / u) || !same(bar.h, v.high / u) || !same(bar.l, v.low / u) || !same(bar.c, v.close / u))
        wrong.push(`${p.symbol}: served ${JSON.stringify(bar)}, venue ${JSON.stringify(v)}`)
    }
    expect(wrong.slice(0, 5), "closed bars that are not the venue's").toEqual([])
  }, 300_000)

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
      let doneMs = venue.now()
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
          doneMs = venue.now()
        }
      }
      await sleep(window.fromMs + window.ms - venue.now())
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

if (TEST_DATABASE_URL === undefined) {
  console.warn("live streams on two instances SKIPPED: set TEST_DATABASE_URL=postgres://...")
  describe.skip("two instances on one PostgreSQL (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  describe("two instances on one PostgreSQL: the one that does not lead is as fresh as the leader", () => {
    let venue: ReplayVenue
    let sec: { url: string; close: () => Promise<void> }
    let t: TestDatabase
    let leader: ServerProcess
    let follower: ServerProcess

    beforeAll(async () => {
      venue = await startBinanceReplay({ symbols: TWO_INSTANCE_PERPETUALS })
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
