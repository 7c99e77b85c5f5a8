/**
 * Believable simulated prices for other seeds than the default: over the whole simulated year, every bar of every
 * listing of the registry's assets stays inside the asset's late-2025 range (`SimulatedPriceRanges.test.ts` holds it
 * for the default seed in `npm test`; this file runs in `npm run test:e2e`, each seed a whole year of the registry's
 * market).
 */
import { describe, it } from "vitest"
import { expectRegistryYearInRange, OTHER_SEEDS } from "./PriceRanges.ts"

describe("simulated prices stay believable for other seeds", () => {
  it.each(OTHER_SEEDS)(
    "keeps every bar of every registry asset inside its late-2025 range over the simulated year (seed %s)",
    (seed) => expectRegistryYearInRange(seed),
    60_000
  )
})
