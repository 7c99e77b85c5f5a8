/**
 * The public coin list (CoinGecko `coins/list`): a hand-made fixture (always runs) and the real recorded lists in
 * `../shared/data/crypto` (skipped with a message when absent), including the bundled well-known table's facts.
 */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { coinIndex, WellKnownAssets } from "@market-data/core"
import { describe, expect, it } from "vitest"
import { parseCoinList } from "../../src/live/CoinList.ts"
import { Malformed } from "../../src/live/Parse.ts"

describe("parseCoinList on a hand-made answer", () => {
  it("keeps every coin once, skips unusable entries with a reason, refuses a body that is not a list", () => {
    const p = parseCoinList([
      { id: "bitcoin", symbol: "btc", name: "Bitcoin", platforms: {} },
      { id: "arcium", symbol: "", name: "Arcium" },
      { id: "bitcoin", symbol: "btc2", name: "Again" },
      { id: "", symbol: "x", name: "No id" },
      { symbol: "y", name: "No id either" },
      { id: "odd", symbol: 5, name: "Odd" },
      "junk"
    ])
    expect(p.coins).toEqual([
      { id: "bitcoin", symbol: "btc", name: "Bitcoin" },
      { id: "arcium", symbol: "", name: "Arcium" }
    ])
    expect(p.skipped.map((s) => s.index)).toEqual([2, 3, 4, 5, 6])
    expect(p.skipped[0]?.reason).toBe("id bitcoin repeated")
    expect(() => parseCoinList({ coins: [] })).toThrow(Malformed)
  })
})

const CRYPTO = fileURLToPath(new URL("../../../../../shared/data/crypto/", import.meta.url))
const present = existsSync(CRYPTO)
if (!present) console.warn(`SKIPPED: the real coin list tests need ${CRYPTO}, which is absent`)
const real = (file: string): unknown => JSON.parse(readFileSync(CRYPTO + file, "utf8"))

describe.skipIf(!present)(
  present ? "the real coin lists" : "the real coin lists (SKIPPED: ../shared/data is absent)",
  () => {
    it("CoinGecko coins/list of 2025-08-24: 18,289 coins, many tickers shared", () => {
      const p = parseCoinList(real("listings/coingecko_api_v3_coins_list_2025-08-24_NOLICENSE.json"))
      expect(p.coins).toHaveLength(18_289)
      expect(p.skipped).toEqual([])
      const index = coinIndex(p.coins)
      expect(index.bySymbol.get("PEPE")).toHaveLength(24)
      expect(index.bySymbol.get("X")).toHaveLength(15)
      expect(index.bySymbol.get("1INCH")?.map((c) => c.id)).toEqual(["1inch"])
    })

    it("the include_platform form parses the same way (platforms ignored)", () => {
      const p = parseCoinList(real("coingecko/coins_list_include_platform_first26.json"))
      expect(p.coins).toHaveLength(26)
      expect(p.coins[1]).toEqual({ id: "0chain", symbol: "zcn", name: "Zus" })
    })

    it("the bundled well-known coins are the 2023 top 250 in market-cap order, as the 2025 list names them", () => {
      const list = new Map(
        parseCoinList(real("listings/coingecko_api_v3_coins_list_2025-08-24_NOLICENSE.json")).coins.map((c) => [
          c.id,
          c
        ])
      )
      const top = (real("coingecko/coins_markets_usd_top250_2023-07-28.json") as ReadonlyArray<{ id: string }>)
        .map((c) => c.id)
        .filter((id) => list.has(id))
      expect(WellKnownAssets.map(([id]) => id)).toEqual(top)
      for (const [id, symbol, name] of WellKnownAssets) expect(list.get(id), id).toEqual({ id, symbol, name })
    })
  }
)
