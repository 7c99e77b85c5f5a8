import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["core/test/**/*.test.ts", "adapters/*/test/**/*.test.ts", "infra/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
