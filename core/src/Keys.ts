/**
 * Personal API keys: the format, minting, hashing at rest, and the key store port.
 *
 * A key is `mdk_` followed by 32 base62 characters (about 190 bits). Only its SHA-256 hash is stored. A
 * presented key is hashed, looked up by hash, and the stored hash is compared in constant time. Missing,
 * malformed, unknown and revoked keys all produce the identical `unauthenticated` error.
 */
import { Clock, Context, Effect, Option } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { type ApiError, apiError } from "./Errors.ts"
import { RequestCaches } from "./RequestCaches.ts"

/** `mdk_` + 32 base62 characters. */
export const KEY_FORMAT = /^mdk_[0-9A-Za-z]{32}$/

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** A stored key. The secret itself is never stored. */
export interface KeyRecord {
  /** Public identifier (`key_` + 12 base62), safe to log and show. */
  readonly id: string
  /** Lower-case hex SHA-256 of the full key. */
  readonly hash: string
  /** First 8 characters of the key (`mdk_` + 4), to help an operator recognise it. */
  readonly prefix: string
  readonly label: string | null
  readonly createdAt: Date
  readonly revokedAt: Date | null
  /** Per-key rate-limit override in units per minute; null uses the service default. */
  readonly rateLimitPerMinute: number | null
}

/** Where keys live. One implementation per store (memory, PGlite, PostgreSQL). */
export class KeyStore extends Context.Service<
  KeyStore,
  {
    readonly insert: (record: KeyRecord) => Effect.Effect<void>
    /**
     * Inserts `record` unless a key with its hash exists; returns the stored key with that hash either way (the
     * existing one when another caller got there first). Atomic: callers racing with one secret get one key.
     */
    readonly insertIfAbsent: (record: KeyRecord) => Effect.Effect<KeyRecord>
    readonly findByHash: (hash: string) => Effect.Effect<Option.Option<KeyRecord>>
    readonly findById: (id: string) => Effect.Effect<Option.Option<KeyRecord>>
    readonly list: Effect.Effect<ReadonlyArray<KeyRecord>>
    /** Marks the key revoked; false when no such key or already revoked. */
    readonly revoke: (id: string, at: Date) => Effect.Effect<boolean>
  }
>()("market-data/core/KeyStore") {}

const randomBase62 = (length: number): Effect.Effect<string, never, SecureRandom.SecureRandom> =>
  Effect.gen(function* () {
    const random = yield* SecureRandom.SecureRandom
    let out = ""
    while (out.length < length) {
      const bytes = yield* random.randomBytes(length * 2)
      for (const b of bytes) {
        // 248 = 4 * 62: rejection sampling keeps every character equally likely.
        if (b < 248 && out.length < length) out += BASE62[b % 62]
      }
    }
    return out
  })

/** Lower-case hex SHA-256 of a key. */
export const hashKey = (key: string): Effect.Effect<string, never, Digest.Digest> =>
  Effect.flatMap(Digest.Digest, (d) => d.digestHex(Digest.sha256, new TextEncoder().encode(key)))

/** Compares two strings in time that depends only on their lengths. */
export const constantTimeEqual = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  const n = Math.max(a.length, b.length)
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}

/** A freshly minted key: the secret (shown once) and the record to store. */
export interface MintedKey {
  readonly key: string
  readonly record: KeyRecord
}

/** Mints a new key record from a given secret (used for bootstrap keys) or a random one. */
export const mintKey = (options: {
  readonly label?: string | null
  readonly rateLimitPerMinute?: number | null
  readonly secret?: string
  readonly now: Date
}): Effect.Effect<MintedKey, never, Digest.Digest | SecureRandom.SecureRandom> =>
  Effect.gen(function* () {
    const key = options.secret ?? `mdk_${yield* randomBase62(32)}`
    const hash = yield* hashKey(key)
    const id = `key_${yield* randomBase62(12)}`
    return {
      key,
      record: {
        id,
        hash,
        prefix: key.slice(0, 8),
        label: options.label ?? null,
        createdAt: options.now,
        revokedAt: null,
        rateLimitPerMinute: options.rateLimitPerMinute ?? null
      }
    }
  })

const UNAUTHENTICATED = "a valid API key is required: send `Authorization: Bearer <API_KEY>` (see docs section access)"

/** The one error for every authentication failure, so that the answer reveals nothing about the key. */
export const unauthenticated = (): ApiError => apiError("unauthenticated", UNAUTHENTICATED)

/**
 * Parses the `Authorization` header values of a request. Returns the presented key, `undefined` when no
 * header was sent, or an error: two headers is `invalid_header`; anything but `Bearer <token>` is
 * `unauthenticated`. The scheme is case-insensitive.
 */
export const parseAuthorization = (values: ReadonlyArray<string>): string | undefined | ApiError => {
  if (values.length === 0) return undefined
  if (values.length > 1) {
    return apiError("invalid_header", "send exactly one `Authorization` header", { param: "authorization" })
  }
  const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(values[0] ?? "")
  if (m === null) return unauthenticated()
  return m[1]
}

/**
 * Resolves a presented key to its record, or the identical `unauthenticated` error for a malformed, unknown
 * or revoked key.
 */
export const authenticate = (key: string): Effect.Effect<KeyRecord, ApiError, KeyStore | Digest.Digest> => {
  if (!KEY_FORMAT.test(key)) return Effect.fail(unauthenticated())
  // Plain combinators rather than a generator, and both services read from the context at once: this runs for
  // every keyed request.
  return Effect.contextWith((context: Context.Context<KeyStore | Digest.Digest>) => {
    const digest = Context.get(context, Digest.Digest)
    const store = Context.get(context, KeyStore)
    // This instance's memory of recent keys' hashes (`RequestCaches`), when it has one.
    const memory = Context.get(context, RequestCaches)?.keyHashes
    const remembered = memory?.get(key)
    const lookUp = (hash: string): Effect.Effect<KeyRecord, ApiError> =>
      Effect.flatMap(store.findByHash(hash), (found): Effect.Effect<KeyRecord, ApiError> => {
        if (found._tag === "None" || !constantTimeEqual(found.value.hash, hash) || found.value.revokedAt !== null) {
          memory?.delete(key)
          return Effect.fail(unauthenticated())
        }
        // Only keys the store knew are remembered: a flood of guesses cannot fill the cache.
        if (remembered === undefined) memory?.set(key, hash)
        return Effect.succeed(found.value)
      })
    return remembered === undefined
      ? Effect.flatMap(digest.digestHex(Digest.sha256, new TextEncoder().encode(key)), lookUp)
      : lookUp(remembered)
  })
}

/**
 * A key store that remembers successful lookups for `ttlMs`, sparing the database a query per request.
 * Revocations made through this store take effect at once; a revocation made by another process is seen
 * within `ttlMs`. Unknown keys are not cached (each guess is a lookup, and failed attempts are rate limited).
 */
export const cachedKeyStore = (store: KeyStore["Service"], ttlMs: number, maxEntries = 10_000): KeyStore["Service"] => {
  const byHash = new Map<string, { readonly record: KeyRecord; readonly until: number }>()
  const forget = (id: string) => {
    for (const [hash, e] of byHash) if (e.record.id === id) byHash.delete(hash)
  }
  return {
    ...store,
    findByHash: (hash) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const hit = byHash.get(hash)
        if (hit !== undefined && hit.until > now) return Effect.succeed(Option.some(hit.record))
        return Effect.map(store.findByHash(hash), (found) => {
          if (found._tag === "Some" && found.value.revokedAt === null) {
            if (byHash.size >= maxEntries) byHash.clear()
            byHash.set(hash, { record: found.value, until: now + ttlMs })
          } else {
            byHash.delete(hash)
          }
          return found
        })
      }),
    revoke: (id, at) => Effect.tap(store.revoke(id, at), () => Effect.sync(() => forget(id)))
  }
}
