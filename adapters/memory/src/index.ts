/** @market-data/memory: in-memory adapters for every core port, for tests and `DATABASE_URL=memory`. */
import {
  type IdempotencyStore,
  IdempotencyStore as IdempotencyStoreTag,
  type KeyStore,
  KeyStore as KeyStoreTag,
  type Ledger,
  Ledger as LedgerTag,
  type RateLimiter,
  RateLimiter as RateLimiterTag
} from "@market-data/core"
import { Layer } from "effect"
import { makeMemoryIdempotency } from "./MemoryIdempotencyStore.ts"
import { makeMemoryKeyStore } from "./MemoryKeyStore.ts"
import { makeMemoryLedger } from "./MemoryLedger.ts"
import { makeMemoryRateCounter, makeMemoryRateLimiter } from "./MemoryRateLimiter.ts"

export * from "./MemoryIdempotencyStore.ts"
export * from "./MemoryKeyStore.ts"
export * from "./MemoryLedger.ts"
export * from "./MemoryRateLimiter.ts"

/** Every store port, in memory; each build of the layer gets fresh, wired instances. */
export const layerMemoryStores: Layer.Layer<KeyStore | Ledger | RateLimiter | IdempotencyStore> = Layer.suspend(() =>
  memoryStores()
)

/**
 * Every store port over one fresh set of in-memory instances, fixed at call time: providing the returned
 * layer several times shares the same data (unlike `layerMemoryStores`, which builds anew per build).
 */
export const memoryStores = (): Layer.Layer<KeyStore | Ledger | RateLimiter | IdempotencyStore> => {
  const idempotency = makeMemoryIdempotency()
  const rate = makeMemoryRateCounter()
  return Layer.mergeAll(
    Layer.succeed(KeyStoreTag)(makeMemoryKeyStore()),
    Layer.succeed(LedgerTag)(
      makeMemoryLedger(
        {
          owns: (r) => idempotency.ownsNow(r.keyId, r.idempotencyKey, r.token),
          complete: (r, nowMs) => idempotency.completeNow(r.keyId, r.idempotencyKey, r.token, r.answer, nowMs)
        },
        rate
      )
    ),
    Layer.succeed(RateLimiterTag)(makeMemoryRateLimiter(rate)),
    Layer.succeed(IdempotencyStoreTag)(idempotency.service)
  )
}
export * from "./MemoryDirectoryStore.ts"
export * from "./MemoryEquityStore.ts"
export * from "./MemoryLeaderLock.ts"
export * from "./MemoryMarketStore.ts"
