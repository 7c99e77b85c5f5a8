import { configDefaults, defineConfig } from "vitest/config"
import { e2eFiles } from "./vitest.e2e.config.ts"

/**
 * `npm test`: the unit and contract suites (in-process: in-memory stores, PGlite, server PostgreSQL when
 * TEST_DATABASE_URL is set). The suites that start processes, browsers or tarballs run in `npm run test:e2e`
 * (vitest.e2e.config.ts); the fault suite in `npm run test:faults` (vitest.faults.config.ts).
 */

/** Where the unit and contract suites are. */
export const unitInclude = [
  "core/test/**/*.test.ts",
  "adapters/*/test/**/*.test.ts",
  "infra/test/**/*.test.ts",
  "embedded/test/**/*.test.ts",
  "test/**/*.test.ts"
]

/**
 * The suites that set `process.env` for the service under test to read. Effect's default `ConfigProvider` copies the
 * environment once per process, at the first configuration read, so these run each in a fresh worker (`isolate:
 * true`); every other file shares its worker's modules with the files before it (`isolate: false`).
 */
export const isolatedFiles = [
  // Sets MARKET_DATA_ALLOWED_ORIGINS before its server reads it per request.
  "test/mcp.test.ts",
  // Points every live source at a closed port before the embedded library's live instance reads its configuration.
  "test/coverage-sources.test.ts"
]

const common = {
  // The suites run the small simulated universe and no generated companies (a server they start inherits it);
  // test/planes.test.ts and infra/test/Ingest.test.ts ask for the generated ones themselves.
  env: { MARKET_DATA_SIMULATED_COMPANIES: "0", MARKET_DATA_SIM_UNIVERSE: "registry" },
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // Both cores, in each project: a project with `extends: false` does not take the root's `maxWorkers`; it got
  // vitest's default (one worker fewer than the cores: one here), and the `unit` project, with `isolate: false` and
  // one worker, then ran every file one after the other in a single worker (about 230 s of wall time for 180 s of
  // CPU time, one core idle). test/suites.test.ts checks that every project runs on two workers.
  maxWorkers: 2
}

export default defineConfig({
  test: {
    // Both cores: vitest's default is one worker fewer than the cores, which on a 2-core machine runs the files
    // one at a time while the main process mostly waits. (Suites on server PostgreSQL each use their own schema.)
    // The projects below say it again (`common`): they do not inherit it.
    maxWorkers: 2,
    projects: [
      {
        extends: false,
        test: {
          ...common,
          name: "unit",
          include: unitInclude,
          exclude: [...configDefaults.exclude, "test/faults/**", ...e2eFiles, ...isolatedFiles],
          // A worker runs file after file on the modules it has loaded (Effect, the core, the adapters): each file
          // spared its own import of the graph, about a quarter of the run's CPU time. A file that needs a fresh
          // process goes in `isolatedFiles`.
          isolate: false
        }
      },
      {
        extends: false,
        test: { ...common, name: "isolated", include: isolatedFiles, isolate: true }
      }
    ]
  }
})
