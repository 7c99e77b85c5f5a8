/**
 * Live planes once every asset's baselines are sampled (`infra/src/Planes.ts`): they log `crypto baselines warm`,
 * and a server's progressive start (`serve`) then hands back what its start freed and bounds the heap's growth
 * between full collections (`releaseFreedMemory`), as the simulated planes do; a blocking start (the embedded
 * library, tests) leaves its caller's process alone. Live mode on the memory store with no venue and nowhere to
 * reach, so nothing leaves the machine.
 */
import { ConfigProvider, Effect, Logger } from "effect"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../src/AppConfig.ts"
import { openPlanes } from "../src/Planes.ts"
import { openStores } from "../src/Stores.ts"

const CLOSED = "http://127.0.0.1:9"
const env = {
  DATABASE_URL: "memory",
  MARKET_DATA_FEED: "live",
  MARKET_DATA_SEC_USER_AGENT: "Market Data Tests tests@example.com",
  MARKET_DATA_LIVE_VENUES: "",
  MARKET_DATA_SEC_CIKS: "",
  MARKET_DATA_SEC_13F_FILERS: "",
  MARKET_DATA_SEC_BASE_URL: CLOSED,
  MARKET_DATA_SEC_ARCHIVES_BASE_URL: CLOSED,
  MARKET_DATA_PRICES_BASE_URL: CLOSED,
  MARKET_DATA_COIN_LIST_URL: "off"
}

/** Opens the live planes, waits (bounded) until they log that the baselines are warm, and returns the messages. */
const warmMessages = (progressive: boolean) => {
  const expected = progressive ? "released freed memory" : "crypto baselines warm"
  const lines: Array<string> = []
  let seen: () => void = () => {}
  const logged = new Promise<void>((resolve) => {
    seen = resolve
  })
  const capture = Logger.make(({ message }) => {
    const line = (Array.isArray(message) ? message : [message]).map(String).join(" ")
    lines.push(line)
    if (line === expected) seen()
  })
  const provider = ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))
  return Effect.gen(function* () {
    const config = yield* loadConfig.pipe(Effect.provide(provider))
    const stores = yield* openStores(config)
    yield* openPlanes(config, stores, { progressive }).pipe(Effect.provide(provider))
    // The warm fiber logs the line (and, on a progressive start, runs the collection and logs its line) without
    // yielding in between, so by the time this resumes a collection after the warm line would have been logged.
    yield* Effect.promise(() => logged).pipe(
      Effect.timeoutOrElse({
        duration: "30 seconds",
        orElse: () => Effect.die(new Error(`no "${expected}" within 30 s: ${JSON.stringify(lines)}`))
      })
    )
    return lines
  }).pipe(Effect.scoped, Effect.provide(Logger.layer([capture])), Effect.runPromise)
}

describe("live planes when the baselines are warm", () => {
  it("a progressive start logs them warm, then releases the start's freed memory", async () => {
    const lines = await warmMessages(true)
    const warm = lines.indexOf("crypto baselines warm")
    expect(warm).toBeGreaterThanOrEqual(0)
    expect(lines.indexOf("released freed memory")).toBeGreaterThan(warm)
  }, 60_000)

  it("a blocking start logs them warm and runs no collection of its own", async () => {
    const lines = await warmMessages(false)
    expect(lines).toContain("crypto baselines warm")
    expect(lines).not.toContain("released freed memory")
  }, 60_000)
})
