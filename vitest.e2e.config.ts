import { defineConfig } from "vitest/config"

/**
 * The end-to-end suites (`npm run test:e2e`): those that start processes or external programs, and the slow
 * in-process ones, so that `npm test` stays fast. vitest.config.ts excludes exactly this list, so every test
 * runs in one of the scripts (test/suites.test.ts checks it).
 */
export const e2eFiles = [
  // Packs the workspaces with npm and installs the tarballs into a scratch project.
  "test/pack.test.ts",
  // Runs every example program as a child process against a served test plane.
  "test/examples.test.ts",
  // Runs the official MCP conformance runner (a child process) against a server.
  "test/mcp-conformance.test.ts",
  // Drives Chromium headless over the docs page (skipped, with a message, when Chromium is absent).
  "test/docs-page-browser.test.ts",
  // Starts the stdio bridge as a host would (a child process per client).
  "test/mcp-stdio-bridge.test.ts",
  // Starts the service as a child process (the `serve` CLI) and ingests into it.
  "test/decimal-transport.test.ts",
  // Starts `serve --live` as a child process with the network sources unreachable.
  "test/live-offline.test.ts",
  // Starts `serve` in live mode against a replay Binance (550 perpetuals streamed over websockets, across a
  // 15-minute close on a shifted clock, about four minutes; two processes on server PostgreSQL when
  // TEST_DATABASE_URL is set, about a minute more).
  "test/live-streams.test.ts",
  // Starts `serve` in live mode against replay Binance, Bybit, OKX and Hyperliquid venues (120 perpetuals streamed
  // over each venue's protocol; each venue's streams cut in turn; about a minute and a half).
  "test/live-streams-venues.test.ts",
  // Server PostgreSQL proofs across processes (several service processes on one database).
  "test/postgres-proofs.test.ts",
  // Two live `serve` processes on server PostgreSQL and a replay Binance: a 2026-07-28 listen stream on the one
  // that does not lead is notified of what the leader ingested (about two minutes).
  "test/mcp-listen-instances.test.ts",
  // `serve` started and stopped as a child process, besides the CLI's commands on embedded PGlite stores.
  "infra/test/Cli.test.ts",
  // Service processes started and signalled: `npm start` and the bin under signals, the admin channel of a
  // running server, health, readiness and metrics of a server process.
  "test/process.test.ts",
  "test/admin.test.ts",
  "test/telemetry.test.ts",
  // The slow in-process suites (each opens many PGlite databases or generates whole simulated markets; together
  // about two thirds of the unit run's time): ingest on hand-made and on the real SEC files, the embedded
  // library on PGlite, the progressive start compared with the blocking one.
  "infra/test/Ingest.test.ts",
  "test/ingest-sec.test.ts",
  "test/ingest-listed.test.ts",
  // Every company of the SEC's real ticker list (9,441) on memory, PGlite and PostgreSQL.
  "adapters/postgres/test/EquityUniverseReal.test.ts",
  "embedded/test/Embedded.test.ts",
  "infra/test/ProgressivePlanes.test.ts",
  // The simulated history kept in an embedded data folder: two progressive starts of the registry's market.
  "infra/test/KeptSimulatedHistory.test.ts",
  // Bulk archives on memory, PGlite (a database per test) and PostgreSQL; an ingest process killed mid-archive.
  "infra/test/BulkIngest.test.ts",
  "infra/test/BulkWorker.test.ts",
  "test/ingest-bulk-kill.test.ts",
  // A server process on an embedded data folder killed under paid load, three times, and the folder reopened.
  "test/embedded-kill.test.ts",
  // A server process on an empty data folder signalled while its kept history's child process generates.
  "test/history-child-sigterm.test.ts",
  // A first live start of 550 perpetuals run through 70 minutes of the test clock (about 20 s, 600 MB).
  "adapters/sources/test/live/WholeMarketStart.test.ts",
  // New embedded clusters created in child processes, stopped by a signal and left part-made.
  "adapters/postgres/test/PgliteCreation.test.ts",
  // The slowest in-process suites left in `npm test` (issue 32: `npm test` within 2 minutes on 2 cores), together
  // about half its time: every operation over HTTP and MCP on one server with the whole simulated market and
  // filings; the simulated crypto feed's whole-universe backfills, compared byte for byte; ticker-keyed bars end to
  // end on memory, PGlite and PostgreSQL; the 520 generated simulated companies generated and parsed.
  "test/mcp-planes.test.ts",
  "adapters/sources/test/SimulatedCrypto.test.ts",
  "infra/test/ShareClassBars.test.ts",
  "adapters/sources/test/SimulatedEquityUniverse.test.ts",
  // Believable simulated prices for three seeds besides the default (a whole year of the registry's market each;
  // the default seed's year stays in `npm test`, adapters/sources/test/SimulatedPriceRanges.test.ts).
  "adapters/sources/test/SimulatedPriceRangesSeeds.test.ts",
  // A `serve` process on a new embedded data folder under umask 000: every entry owner-only; a loosened one
  // tightened at the next start.
  "test/data-folder-modes.test.ts",
  // Starts a `serve` process with a preload that forces collections (V8's layout of Node's HTTP objects).
  "test/serve-node-shapes.test.ts"
]

export default defineConfig({
  test: {
    include: e2eFiles,
    // The suites run the five hand-made simulated companies (child processes and in-process services alike);
    // test/planes.test.ts and infra/test/Ingest.test.ts ask for the generated ones themselves.
    // The suites run the small simulated universe and no generated companies (a server they start inherits it).
    env: { MARKET_DATA_SIMULATED_COMPANIES: "0", MARKET_DATA_SIM_UNIVERSE: "registry" },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Each file starts processes of its own; two at a time on a 2-core machine.
    maxWorkers: 2
  }
})
