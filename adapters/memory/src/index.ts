/** @market-data/memory: in-memory adapters for every core port, for tests and `DATABASE_URL=memory`. */
import {
  type KeyStore,
  KeyStore as KeyStoreTag,
  type MoneyStore,
  MoneyStore as MoneyStoreTag,
  type RateLimiter,
  RateLimiter as RateLimiterTag
} from "@market-data/core"
import { Layer } from "effect"
import { makeMemoryKeys } from "./MemoryKeyStore.ts"
import { makeMemoryMoneyStore } from "./MemoryMoneyStore.ts"
import { makeMemoryRateCounter, makeMemoryRateLimiter } from "./MemoryRateLimiter.ts"

export * from "./MemoryKeyStore.ts"
export * from "./MemoryMoneyStore.ts"
export * from "./MemoryRateLimiter.ts"

/** Every store port, in memory; each build of the layer gets fresh, wired instances. */
export const layerMemoryStores: Layer.Layer<KeyStore | MoneyStore | RateLimiter> = Layer.suspend(() => memoryStores())

/**
 * Every store port over one fresh set of in-memory instances, fixed at call time: providing the returned
 * layer several times shares the same data (unlike `layerMemoryStores`, which builds anew per build). The money
 * store and the rate limiter share one rate counter; the money store sees the key store's revocations.
 */
export const memoryStores = (): Layer.Layer<KeyStore | MoneyStore | RateLimiter> => {
  const keys = makeMemoryKeys()
  const rate = makeMemoryRateCounter()
  return Layer.mergeAll(
    Layer.succeed(KeyStoreTag)(keys.service),
    Layer.succeed(MoneyStoreTag)(makeMemoryMoneyStore(rate, keys.revokedNow)),
    Layer.succeed(RateLimiterTag)(makeMemoryRateLimiter(rate))
  )
}
export * from "./MemoryDirectoryStore.ts"
export * from "./MemoryEquityStore.ts"
export * from "./MemoryLeaderLock.ts"
export * from "./MemoryMarketStore.ts"
