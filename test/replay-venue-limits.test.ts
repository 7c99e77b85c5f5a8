/**
 * The replay venues' own bookkeeping (`test/support/replay/`), which the e2e suites and the streams bench lean on:
 * Hyperliquid's per-IP subscription count releases a closed connection's topics (it did not: the shared server
 * forgot them before the venue saw the close, so after a cut and a resubscription the count grew until the venue
 * refused "more than 1000 channels"), and `blast` sends exactly the book frames asked, the venue's own, to the
 * topic's subscribers.
 */
import { afterEach, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { type HyperliquidReplay, startHyperliquidReplay } from "./support/replay/hyperliquid-venue.ts"

let venue: HyperliquidReplay | undefined
afterEach(async () => {
  await venue?.close()
  venue = undefined
})

/** A client counting frames; `subscribe` sends one subscription a message, as Hyperliquid takes them. */
const client = async (wsUrl: string) => {
  const ws = new WebSocket(`${wsUrl}/ws`)
  const texts: Array<string> = []
  ws.on("message", (d: Buffer) => texts.push(d.toString()))
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve())
    ws.once("error", reject)
  })
  const answers = () => texts.filter((t) => t.includes('"subscriptionResponse"') || t.includes('"error"'))
  return {
    texts,
    /** Every coin on each type; resolves with the answers to them all. */
    subscribe: async (coins: ReadonlyArray<string>, types: ReadonlyArray<string>) => {
      const before = answers().length
      for (const type of types)
        for (const coin of coins) ws.send(JSON.stringify({ method: "subscribe", subscription: { type, coin } }))
      await expect.poll(() => answers().length - before, { timeout: 10_000 }).toBe(coins.length * types.length)
      return answers().slice(before)
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()))
      ws.close()
      await closed
    }
  }
}

describe("replay venues", () => {
  it("Hyperliquid frees a closed connection's subscriptions from its per-IP count of 1,000", async () => {
    venue = await startHyperliquidReplay({ symbols: 150, meanIntervalMs: 0 })
    const coins = venue.symbols.map((s) => s.symbol)
    const first = await client(venue.wsUrl)
    const answered = await first.subscribe(coins, ["bbo", "activeAssetCtx", "trades"])
    expect(answered.filter((t) => t.includes('"error"'))).toEqual([])
    await first.close()
    await expect.poll(() => venue?.connections()).toBe(0)
    // 450 more on a new connection: within the 1,000 only if the first 450 were released.
    const second = await client(venue.wsUrl)
    const again = await second.subscribe(coins, ["bbo", "activeAssetCtx", "trades"])
    expect(again.filter((t) => t.includes('"error"'))).toEqual([])
    // Past the limit it still refuses, as the venue does: 450 + 600 asked, the last 50 refused.
    const third = await client(venue.wsUrl)
    const answers = await third.subscribe(coins, ["bbo", "activeAssetCtx", "trades", "l2Book"])
    expect(answers.filter((t) => t.includes("Cannot subscribe to more than 1000 channels")).length).toBe(50)
    await second.close()
    await third.close()
  })

  it("blast sends the book frames asked, each the venue's own top-of-book frame, to the subscribers", async () => {
    venue = await startHyperliquidReplay({ symbols: 20, meanIntervalMs: 0 })
    const coins = venue.symbols.map((s) => s.symbol)
    const c = await client(venue.wsUrl)
    await c.subscribe(coins, ["bbo"])
    const before = c.texts.length
    const result = await venue.blast(5_000)
    expect(result.book).toBe(5_000)
    expect(result.sent).toBe(5_000)
    await expect.poll(() => c.texts.length - before, { timeout: 20_000 }).toBe(5_000)
    const frames = c.texts.slice(before).map((t) => JSON.parse(t) as { channel: string; data: { coin: string } })
    expect(new Set(frames.map((f) => f.channel))).toEqual(new Set(["bbo"]))
    // Round robin over the subscribed books.
    expect(new Set(frames.map((f) => f.data.coin)).size).toBe(coins.length)
    await c.close()
  })
})
