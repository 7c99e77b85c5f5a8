/**
 * A live instance that does not lead serves what the leader writes: it re-reads the recent market data and the
 * sources' statuses from the database every minute (`infra/src/Planes.ts`, `LIVE_REFRESH_EVERY`). On server
 * PostgreSQL, in a database of its own (the leader lock is a database-wide advisory lock, so other suites'
 * instances must not see this one): the test holds the ingest lock as the "leader" and writes market rows through
 * its own store, and the instance under test (opened as `serve` opens it, `MARKET_DATA_FEED=live`) answers
 * `price` from its hot in-memory store. Before the refresh it still serves the old bar; one minute later on the
 * TestClock it serves the leader's new bar and the leader's source status.
 */
import { randomUUID } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { CryptoAssets, LIVE_INGEST_LOCK, type PlaneOperations } from "@market-data/core"
import { makePgLeaderLock, makePgMarketStore, openPostgres } from "@market-data/postgres"
import { ConfigProvider, Effect, References } from "effect"
import { TestClock } from "effect/testing"
import { sql } from "kysely"
import pg from "pg"
import { callPlanes, dataOf } from "../../core/test/support/PlaneCall.ts"
import { loadConfig } from "../src/AppConfig.ts"
import { openPlanes } from "../src/Planes.ts"
import { openStores } from "../src/Stores.ts"

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL
if (TEST_DATABASE_URL === undefined)
  console.warn("LiveRefresh.test: TEST_DATABASE_URL is unset; the non-leader refresh on PostgreSQL is skipped")

const BAR_MS = 15 * 60_000
const ASSET = "crypto:bitcoin"
const PRIMARY = CryptoAssets.find((a) => a.id === ASSET)?.listings[0]?.venue ?? "binance"

/** A database of the test's own on the test server, dropped with the scope. */
const privateDatabase = (base: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const name = `md_refresh_${randomUUID().replace(/-/g, "").slice(0, 16)}`
      const admin = new pg.Client({ connectionString: base })
      await admin.connect()
      try {
        await admin.query(`create database ${name}`)
      } finally {
        await admin.end()
      }
      const u = new URL(base)
      u.pathname = `/${name}`
      return { name, url: u.toString() }
    }),
    ({ name }) =>
      Effect.promise(async () => {
        const admin = new pg.Client({ connectionString: base })
        await admin.connect()
        try {
          await admin.query(`drop database if exists ${name} with (force)`)
        } finally {
          await admin.end()
        }
      })
  )

/** The `price` answer for bitcoin, as the transports serve it. */
const priceOf = (planes: ReadonlyArray<PlaneOperations>, nowMs: number) =>
  Effect.map(callPlanes(planes, "price", [["id", ASSET]], nowMs), dataOf<{ usd: number | null; status: string }>)

/** Flat 15-minute bars closing at `close`, opening at each of `times`. */
const bars = (times: ReadonlyArray<number>, close: number) => ({
  kind: "bars" as const,
  assetId: ASSET,
  venue: PRIMARY,
  t: times,
  open: times.map(() => close),
  high: times.map(() => close + 10),
  low: times.map(() => close - 10),
  close: times.map(() => close),
  volume: times.map(() => 50)
})

describe.skipIf(TEST_DATABASE_URL === undefined)("a live instance that does not lead (PostgreSQL)", () => {
  it.effect(
    "serves the leader's new rows and statuses after its one-minute refresh, not before",
    () =>
      Effect.gen(function* () {
        const db = yield* privateDatabase(TEST_DATABASE_URL as string)
        // Whole minutes of the real clock, so the rows sit where the warm and refresh windows look.
        const start = Math.floor(Date.now() / BAR_MS) * BAR_MS + 5 * 60_000
        yield* TestClock.setTime(start)
        const slot = Math.floor(start / BAR_MS) * BAR_MS

        const env = {
          DATABASE_URL: db.url,
          MARKET_DATA_FEED: "live",
          MARKET_DATA_SEC_USER_AGENT: "Market Data Tests tests@example.com",
          // Nothing to ingest even if it led, and nowhere to reach: this instance only serves.
          MARKET_DATA_LIVE_VENUES: "",
          MARKET_DATA_SEC_CIKS: "",
          MARKET_DATA_SEC_13F_FILERS: "",
          MARKET_DATA_SEC_BASE_URL: "http://127.0.0.1:9",
          MARKET_DATA_SEC_ARCHIVES_BASE_URL: "http://127.0.0.1:9",
          MARKET_DATA_PRICES_BASE_URL: "http://127.0.0.1:9",
          LOG_LEVEL: "warn"
        }
        const config = yield* loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))
        const stores = yield* openStores(config) // migrates the private database

        // The leader: holds the ingest lock and writes through its own store, as another process would.
        const lock = makePgLeaderLock(db.url)
        yield* Effect.addFinalizer(() => lock.close)
        assert.isTrue(yield* lock.acquire(LIVE_INGEST_LOCK, "the-leader", 30_000))
        const writerDb = openPostgres(db.url, { poolSize: 2 })
        yield* Effect.addFinalizer(() => Effect.promise(() => writerDb.close()))
        const leader = makePgMarketStore(writerDb)
        // Two hours of bars up to the previous bar, closing at 90,000.
        const before = Array.from({ length: 8 }, (_, i) => slot - (8 - i) * BAR_MS)
        yield* leader.write([bars(before, 90_000)])

        // The instance under test opens (warming its hot store from the database) and does not lead.
        const planes = yield* openPlanes(config, stores).pipe(
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))
        )
        const first = yield* priceOf(planes.planes, start)
        assert.strictEqual(first.usd, 90_000, "warmed from the database at start")

        // The leader writes the bar now forming (closing at 91,234) and a live status for the bars.
        yield* leader.write([bars([slot], 91_234)])
        yield* leader.putStatus([
          {
            source: "live",
            venue: PRIMARY,
            component: "bars",
            newestMs: start,
            cadenceMs: BAR_MS,
            checkedMs: start,
            failing: false,
            lastSuccessMs: start
          }
        ])
        // Not yet: the instance serves its hot store, which only the refresh brings up to date.
        const stale = yield* priceOf(planes.planes, start + 30_000)
        assert.strictEqual(stale.usd, 90_000, "before the refresh the new bar is not served")
        assert.isUndefined(
          (yield* planes.market.status).find((s) => s.venue === PRIMARY && s.component === "bars"),
          "nor the leader's status"
        )
        const held = yield* Effect.promise(() =>
          sql<{ n: string }>`select count(*)::text as n from pg_locks
            where locktype = 'advisory' and granted
              and database = (select oid from pg_database where datname = current_database())`.execute(writerDb.db)
        )
        assert.strictEqual(held.rows[0]?.n, "1", "only the test's leader holds the ingest lock")

        // One minute on: the refresh re-reads the database.
        yield* TestClock.adjust(60_000)
        // The refresh runs in the background over real database round trips: wait (in real time) until it is done.
        const barsStatus = Effect.map(planes.market.status, (all) =>
          all.find((s) => s.venue === PRIMARY && s.component === "bars")
        )
        let refreshed = yield* priceOf(planes.planes, start + 60_000)
        for (let i = 0; i < 250 && (refreshed.usd !== 91_234 || (yield* barsStatus) === undefined); i++) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
          refreshed = yield* priceOf(planes.planes, start + 60_000)
        }
        assert.strictEqual(refreshed.usd, 91_234, "the leader's new bar is served after the refresh")
        assert.deepInclude(yield* barsStatus, { failing: false, newestMs: start, lastSuccessMs: start })
        // And nothing was ingested here: the only statuses are the leader's.
        assert.deepStrictEqual(
          (yield* planes.market.status).map((s) => `${s.venue}/${s.component}`),
          [`${PRIMARY}/bars`]
        )
      }).pipe(Effect.scoped, Effect.provideService(References.MinimumLogLevel, "Warn")),
    60_000
  )
})
