/**
 * A small bounded cache: process-local memory of derived values (ETags of serialized bodies, decoded parameters,
 * key hashes), owned by whoever builds it, so a test or a second service instance in one process has its own.
 *
 * Capacity is a number of entries. When full, a new entry evicts the oldest one inserted (first in, first out):
 * no bookkeeping on a hit, so a lookup costs one `Map.get`. Values are derived and may be recomputed at any
 * time; a cache never decides anything.
 */
export interface BoundedCache<K, V> {
  readonly capacity: number
  readonly get: (key: K) => V | undefined
  readonly set: (key: K, value: V) => void
  readonly delete: (key: K) => void
  readonly size: () => number
}

/** A cache of at most `capacity` entries (a whole number >= 1), evicting the oldest inserted when full. */
export const makeBoundedCache = <K, V>(capacity: number): BoundedCache<K, V> => {
  if (!Number.isSafeInteger(capacity) || capacity < 1) {
    throw new RangeError(`a cache's capacity must be a whole number >= 1, got ${capacity}`)
  }
  const entries = new Map<K, V>()
  return {
    capacity,
    get: (key) => entries.get(key),
    set: (key, value) => {
      if (!entries.has(key) && entries.size >= capacity) {
        const oldest = entries.keys().next()
        if (oldest.done !== true) entries.delete(oldest.value)
      }
      entries.set(key, value)
    },
    delete: (key) => {
      entries.delete(key)
    },
    size: () => entries.size
  }
}
