import { defineConfig } from "vitest/config"

/**
 * The fault suite (`npm run test:faults`): PostgreSQL stopped and restarted under load, SIGKILL mid-request,
 * slow and hanging sources, 10,000 fuzzed requests over HTTP and over MCP, with the ledger invariant after
 * each. Not part of `npm test` (vitest.config.ts excludes test/faults).
 */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.test.ts"],
    // The suites run the five hand-made simulated companies (child processes and in-process services alike);
    // test/planes.test.ts and infra/test/Ingest.test.ts ask for the generated ones themselves.
    // The suites run the small simulated universe and no generated companies (a server they start inherits it).
    env: { MARKET_DATA_SIMULATED_COMPANIES: "0", MARKET_DATA_SIM_UNIVERSE: "registry" },
    testTimeout: 240_000,
    hookTimeout: 120_000,
    // Each file starts its own server processes and database; two at a time on a 2-core machine.
    maxWorkers: 2,
    fileParallelism: true
  }
})
