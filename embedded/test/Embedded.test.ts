/**
 * The embedded library: the same pipeline as HTTP in process, keyed or as the internal principal, on memory
 * and on an embedded PGlite directory.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Operations } from "@market-data/core"
import { afterAll, describe, expect, it } from "vitest"
import { createMarketData, MarketDataError } from "../src/index.ts"

const KEY = `mdk_${"Embed".repeat(6)}XY`

describe("createMarketData", () => {
  it("has one method per operation, named as the operations", async () => {
    const md = await createMarketData()
    try {
      for (const op of Operations) expect(typeof (md as unknown as Record<string, unknown>)[op.name]).toBe("function")
      expect(Operations.length).toBe(23)
    } finally {
      await md.close()
    }
  })

  it("answers discovery without a key and refuses usage for the internal principal", async () => {
    const md = await createMarketData()
    try {
      const markdown = await md.docs({ section: "quickstart" })
      expect(markdown).toMatch(/^# /)
      const schema = await md.schema({ resource: "funding" })
      expect((schema.data as { name: string }).name).toBe("funding")
      const usage = await md.usage().then(
        () => undefined,
        (e: unknown) => e
      )
      expect(usage).toBeInstanceOf(MarketDataError)
      expect((usage as MarketDataError).code).toBe("unauthenticated")
      const bad = await md.schema({ resource: "nope" }).catch((e: unknown) => e)
      expect(bad).toMatchObject({ code: "invalid_parameter", param: "resource", status: 400 })
      const unknown = await md.call("nope")
      expect(unknown.status).toBe(404)
    } finally {
      await md.close()
    }
  })

  it("with a key goes through the same pipeline as HTTP: usage, rate limit, idempotency key validation", async () => {
    const md = await createMarketData({ apiKey: KEY, ensureCredits: 25, rateLimitPerMinute: 5 })
    try {
      const usage = await md.usage()
      expect(usage.data).toMatchObject({ credits_remaining: 25, rate_limit: { limit: 5 } })
      // Whitespace at the ends of an Idempotency-Key, which HTTP parsers strip, is refused here too.
      const padded = await md.call("price", { id: "crypto:bitcoin" }, { idempotencyKey: " k1" })
      expect(padded.status).toBe(400)
      expect((padded.body as { error: { code: string } }).error.code).toBe("invalid_idempotency_key")
      const answers = await Promise.all(Array.from({ length: 4 }, () => md.call("usage")))
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429])
      expect(answers[3]?.retryAfterSeconds).toBeGreaterThanOrEqual(1)
    } finally {
      await md.close()
    }
  })

  it("refuses an unknown key like HTTP does", async () => {
    const md = await createMarketData({ apiKey: `mdk_${"Other".repeat(6)}XY` })
    try {
      const e = await md.usage().catch((x: unknown) => x)
      expect(e).toMatchObject({ code: "unauthenticated", status: 401 })
    } finally {
      await md.close()
    }
  })

  it("rejects a malformed apiKey at once, naming the option (not a server variable)", async () => {
    for (const apiKey of ["mdk_short", "sk_live_0123456789abcdefghijklmnopqrstuv", `mdk_${"x".repeat(31)}!`]) {
      const e = await createMarketData({ apiKey, ensureCredits: 5 }).catch((x: unknown) => x)
      expect(e).toBeInstanceOf(Error)
      expect((e as Error).message).toMatch(/^apiKey must be `mdk_` followed by 32 letters or digits/)
      expect((e as Error).message).not.toContain("MARKET_DATA_")
    }
  })

  describe("on an embedded PGlite directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "md-embedded-"))
    afterAll(() => rmSync(dir, { recursive: true, force: true }))

    it("keeps the key and its credits across close and reopen, and locks the directory while open", async () => {
      const first = await createMarketData({ store: { pglite: dir }, apiKey: KEY, ensureCredits: 7 })
      const second = await createMarketData({ store: { pglite: dir } }).catch((e: unknown) => e)
      expect(String(second)).toMatch(/already open in this process/)
      await first.close()
      const again = await createMarketData({ store: { pglite: dir }, apiKey: KEY })
      try {
        expect((await again.usage()).data).toMatchObject({ credits_remaining: 7 })
      } finally {
        await again.close()
      }
    })
  })
})
