import { configDefaults, defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["core/test/**/*.test.ts", "adapters/*/test/**/*.test.ts", "infra/test/**/*.test.ts", "test/**/*.test.ts"],
    // The fault suite runs on its own: `npm run test:faults` (vitest.faults.config.ts).
    exclude: [...configDefaults.exclude, "test/faults/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
