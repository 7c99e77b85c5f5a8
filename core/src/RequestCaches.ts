/**
 * The process-local memory of the request path, one per service instance: values derived from a request that the
 * next identical request can reuse, each in a bounded cache (`BoundedCache`: a capacity, the oldest entry evicted
 * first). Built by the composition root (`layerRequestCaches`), so a test or a second service instance in one
 * process has its own; without it (a bare test context) nothing is remembered and every value is computed again.
 * A cache never decides anything: every entry is a pure function of its key.
 */
import { Context, Layer } from "effect"
import { type BoundedCache, makeBoundedCache } from "./BoundedCache.ts"
import type { DecodedParams } from "./Params.ts"

export interface RequestCachesShape {
  /** ETags of bodies handlers hand over already serialized (they reuse the text while their data is unchanged). */
  readonly etags: BoundedCache<string, string>
  /**
   * SHA-256 of API keys that recently authenticated: a busy key is hashed once. Only keys the store knew are
   * remembered (a flood of guesses cannot fill it); revocation is still checked against the store every time.
   */
  readonly keyHashes: BoundedCache<string, string>
  /** Decoded parameters of recent requests, by operation and pairs (all strings, as HTTP sends them). */
  readonly decodedParams: BoundedCache<string, DecodedParams>
}

/** How many entries each cache holds by default. */
export const RequestCacheCapacity = { etags: 1024, keyHashes: 10_000, decodedParams: 8192 } as const

export const RequestCaches = Context.Reference<RequestCachesShape | undefined>("market-data/core/RequestCaches", {
  defaultValue: () => undefined
})

/** Fresh, empty caches. */
export const makeRequestCaches = (
  capacity: { readonly [K in keyof RequestCachesShape]: number } = RequestCacheCapacity
): RequestCachesShape => ({
  etags: makeBoundedCache(capacity.etags),
  keyHashes: makeBoundedCache(capacity.keyHashes),
  decodedParams: makeBoundedCache(capacity.decodedParams)
})

/** This service instance's request caches, built when the layer is. */
export const layerRequestCaches = (
  capacity?: { readonly [K in keyof RequestCachesShape]: number }
): Layer.Layer<never> => Layer.sync(RequestCaches)(() => makeRequestCaches(capacity))
