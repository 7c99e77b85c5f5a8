/**
 * The data planes and their feeds, for the life of a scope. Each plane's store lives beside the account
 * stores the configuration names; its feed (the deterministic simulated market and simulated filings, or
 * the live sources) fills it.
 */
import type { PlaneOperations } from "@market-data/core"
import { Effect, type Scope } from "effect"
import { type AppConfig, ConfigProblem } from "./AppConfig.ts"
import type { OpenedStores } from "./Stores.ts"

export interface OpenedPlanes {
  readonly planes: ReadonlyArray<PlaneOperations>
  /** The feed, in words, for the startup line. */
  readonly description: string
}

/** Opens the planes the configuration's feed can fill. */
export const openPlanes = (
  config: AppConfig,
  _stores: OpenedStores
): Effect.Effect<OpenedPlanes, ConfigProblem, Scope.Scope> =>
  Effect.gen(function* () {
    if (config.feed === "live") {
      return yield* Effect.fail(
        new ConfigProblem(
          "MARKET_DATA_FEED=live is not available in this version: the live venue and SEC EDGAR connectors have not landed. Use MARKET_DATA_FEED=simulated (the default)."
        )
      )
    }
    return { planes: [], description: `simulated (seed ${config.seed})` }
  })
