import { configDefaults, defineConfig } from "vitest/config"
import { e2eFiles } from "./vitest.e2e.config.ts"

/**
 * `npm test`: the unit and contract suites (in-process: in-memory stores, PGlite, server PostgreSQL when
 * TEST_DATABASE_URL is set). The suites that start processes, browsers or tarballs run in `npm run test:e2e`
 * (vitest.e2e.config.ts); the fault suite in `npm run test:faults` (vitest.faults.config.ts).
 */
export default defineConfig({
  test: {
    include: [
      "core/test/**/*.test.ts",
      "adapters/*/test/**/*.test.ts",
      "infra/test/**/*.test.ts",
      "embedded/test/**/*.test.ts",
      "test/**/*.test.ts"
    ],
    exclude: [...configDefaults.exclude, "test/faults/**", ...e2eFiles],
    // The suites run the five hand-made simulated companies (child processes and in-process services alike);
    // test/planes.test.ts and infra/test/Ingest.test.ts ask for the generated ones themselves.
    // The suites run the small simulated universe and no generated companies (a server they start inherits it).
    env: { MARKET_DATA_SIMULATED_COMPANIES: "0", MARKET_DATA_SIM_UNIVERSE: "registry" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Both cores: vitest's default is one worker fewer than the cores, which on a 2-core machine runs the files
    // one at a time while the main process mostly waits. (Suites on server PostgreSQL each use their own schema.)
    maxWorkers: 2
  }
})
