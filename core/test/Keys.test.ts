import { createHash } from "node:crypto"
import { layerMemoryStores } from "@market-data/memory"
import { Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { describe, expect, it } from "vitest"
import { createKey, ensureBootstrapKey, grantCredits, listKeys, revokeKey } from "../src/Admin.ts"
import { authenticate, constantTimeEqual, hashKey, KEY_FORMAT, type KeyStore, parseAuthorization } from "../src/Keys.ts"
import { MoneyStore } from "../src/MoneyStore.ts"
import { isApiError } from "../src/Params.ts"

const layer = Layer.mergeAll(layerMemoryStores, Digest.layerWebCrypto, SecureRandom.layerWebCrypto)
const run = <A, E>(e: Effect.Effect<A, E, KeyStore | MoneyStore | Digest.Digest | SecureRandom.SecureRandom>) =>
  Effect.runPromise(Effect.provide(e, layer))

describe("keys", () => {
  it("mints keys of the documented format, distinct each time", async () => {
    const keys = await run(Effect.forEach(Array.from({ length: 50 }), () => createKey({ credits: 0 })))
    for (const k of keys) {
      expect(k.key).toMatch(KEY_FORMAT)
      expect(k.record.id).toMatch(/^key_[0-9A-Za-z]{12}$/)
      expect(k.record.prefix).toBe(k.key.slice(0, 8))
    }
    expect(new Set(keys.map((k) => k.key)).size).toBe(50)
  })

  it("stores only the SHA-256 hash, equal to an independent implementation's", async () => {
    const { key, record } = await run(createKey({ credits: 1 }))
    expect(record.hash).toBe(createHash("sha256").update(key).digest("hex"))
    expect(JSON.stringify(record)).not.toContain(key)
    expect(await run(hashKey(key))).toBe(record.hash)
  })

  it("compares in constant time and correctly", () => {
    expect(constantTimeEqual("abc", "abc")).toBe(true)
    expect(constantTimeEqual("abc", "abd")).toBe(false)
    expect(constantTimeEqual("abc", "abcd")).toBe(false)
    expect(constantTimeEqual("", "")).toBe(true)
  })

  it("parses Authorization: case-insensitive Bearer, one header only", () => {
    expect(parseAuthorization([])).toBeUndefined()
    expect(parseAuthorization(["Bearer abc"])).toBe("abc")
    expect(parseAuthorization(["bearer abc"])).toBe("abc")
    expect(parseAuthorization(["BEARER\tabc "])).toBe("abc")
    const two = parseAuthorization(["Bearer a", "Bearer a"])
    expect(isApiError(two) && two.code).toBe("invalid_header")
    for (const bad of ["Basic abc", "Bearer", "Bearer a b", "abc"]) {
      const r = parseAuthorization([bad])
      expect(isApiError(r) && r.code, bad).toBe("unauthenticated")
    }
  })

  it("authenticates a live key and refuses malformed, unknown and revoked ones identically", async () => {
    const outcome = await run(
      Effect.gen(function* () {
        const live = yield* createKey({ credits: 0 })
        const gone = yield* createKey({ credits: 0 })
        yield* revokeKey(gone.record.id)
        const ok = yield* authenticate(live.key)
        const errors = yield* Effect.forEach([`mdk_${"z".repeat(32)}`, "nope", gone.key], (k) =>
          Effect.flip(authenticate(k))
        )
        return { ok, errors }
      })
    )
    expect(outcome.ok.revokedAt).toBeNull()
    expect(new Set(outcome.errors.map((e) => JSON.stringify(e.toBody()))).size).toBe(1)
    expect(outcome.errors[0]?.code).toBe("unauthenticated")
  })

  it("ensures a bootstrap key idempotently, topping up to the requested balance", async () => {
    const secret = `mdk_${"b".repeat(32)}`
    const r = await run(
      Effect.gen(function* () {
        const first = yield* ensureBootstrapKey(secret, 100)
        const second = yield* ensureBootstrapKey(secret, 100)
        const third = yield* ensureBootstrapKey(secret, 150)
        const keys = yield* listKeys
        return { first, second, third, keys }
      })
    )
    expect(r.first.created).toBe(true)
    expect(r.first.granted).toBe(100)
    expect(r.second.created).toBe(false)
    expect(r.second.granted).toBe(0)
    expect(r.third.granted).toBe(50)
    expect(r.keys).toHaveLength(1)
    expect(r.keys[0]?.balance).toBe(150)
  })

  it("bootstraps started together (interleaved at every yield) leave one key at exactly the requested balance", async () => {
    const secret = `mdk_${"c".repeat(32)}`
    const r = await run(
      Effect.gen(function* () {
        const results = yield* Effect.all(
          Array.from({ length: 8 }, () => ensureBootstrapKey(secret, 100)),
          { concurrency: "unbounded" }
        )
        return { results, keys: yield* listKeys }
      })
    )
    expect(r.keys).toHaveLength(1)
    expect(r.keys[0]?.balance).toBe(100)
    expect(r.results.filter((x) => x.created)).toHaveLength(1)
    expect(r.results.reduce((s, x) => s + x.granted, 0)).toBe(100)
  })

  it("refuses a malformed bootstrap key and bad credit amounts", async () => {
    const e1 = await run(Effect.flip(ensureBootstrapKey("mdk_short", 10)))
    expect(e1.message).toContain("MARKET_DATA_BOOTSTRAP_KEY")
    const e2 = await run(Effect.flip(createKey({ credits: -1 })))
    expect(e2.message).toContain("credits")
    const e3 = await run(Effect.flip(grantCredits("key_nope", 5, "test")))
    expect(e3.message).toContain("no key")
  })

  it("keeps ledger entries append-only", async () => {
    const entries = await run(
      Effect.gen(function* () {
        const k = yield* createKey({ credits: 10 })
        yield* grantCredits(k.record.id, 5, "top-up")
        const ledger = yield* MoneyStore
        return { entries: yield* ledger.entries(k.record.id), balance: yield* ledger.balance(k.record.id, Date.now()) }
      })
    )
    expect(entries.entries.map((e) => [e.kind, e.amount])).toEqual([
      ["grant", 10],
      ["grant", 5]
    ])
    expect(entries.balance).toBe(15)
  })
})
