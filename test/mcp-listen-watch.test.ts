/**
 * The listen watcher's own work, through `listen` and its transport-neutral body (`open`, `next`, `close`):
 *
 * - the `watchMaxIntervalMs` floor reads an asset again only when its plane's revision for it moved
 *   (`PlaneOperations.revisionOf`), so an idle subscription costs a number compared, not a read; a change the
 *   revision announces is read and notified before the asset's `next_update_at`;
 * - `resourcesListChanged`: a stream that asked for it gets `notifications/resources/list_changed` when the crypto
 *   universe grows (a new listing folded into the in-memory asset directory), and one that did not gets nothing.
 */
import {
  coinIndex,
  createKey,
  type DirectoryEntry,
  MarketStore,
  makeCryptoPlaneOver,
  makeUniverseRef,
  mergeDirectory,
  type PipelineServices,
  type PlaneOperations,
  seedDirectory,
  universeOfDirectory,
  type WireStream,
  wellKnownCoins
} from "@market-data/core"
import { layerCore } from "@market-data/infra"
import { LISTEN_LIMITS, listen, listenTotals } from "@market-data/mcp"
import { layerMemoryStores, makeMemoryMarketStore } from "@market-data/memory"
import { type Context, Effect, Exit, Layer, Scope } from "effect"
import type * as SecureRandom from "effect/crypto/SecureRandom"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { testConfig } from "./support/server.ts"

const decoder = new TextDecoder()
const saved = { ...LISTEN_LIMITS }
afterEach(() => Object.assign(LISTEN_LIMITS, saved))

/**
 * Counts the calls the watcher makes into the test's plane, and lets the test wait for the call that brings the
 * count to a number (an event, not a poll; the test's timeout bounds the wait).
 */
const callCounter = () => {
  let count = 0
  const waiting: Array<{ readonly at: number; readonly resolve: () => void }> = []
  return {
    count: () => count,
    hit: () => {
      count++
      for (let i = waiting.length - 1; i >= 0; i--) {
        const w = waiting[i] as { readonly at: number; readonly resolve: () => void }
        if (count >= w.at) {
          waiting.splice(i, 1)
          w.resolve()
        }
      }
    },
    reached: (at: number): Promise<void> =>
      count >= at ? Promise.resolve() : new Promise((resolve) => waiting.push({ at, resolve }))
  }
}

interface Service {
  readonly context: Context.Context<PipelineServices | SecureRandom.SecureRandom>
  readonly scope: Scope.Closeable
}

const open = async (planes: ReadonlyArray<PlaneOperations>): Promise<Service> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(layerCore(testConfig({ rateLimitPerMinute: 10_000 }), layerMemoryStores, [], planes), scope)
  )
  return { context, scope }
}

/** Opens a listen stream on `service` and returns its body, opened. */
const openStream = async (
  service: Service,
  id: number,
  notifications: Record<string, unknown>,
  key?: string
): Promise<WireStream> => {
  const answered = await Effect.runPromise(
    Effect.provide(
      listen(
        id,
        { notifications },
        {
          authorization: key === undefined ? [] : [`Bearer ${key}`],
          client: "127.0.0.1",
          forwardedFor: [],
          headers: {}
        }
      ),
      service.context
    )
  )
  if (answered._tag !== "Stream") throw new Error(`refused: ${JSON.stringify(answered.response)}`)
  const body = answered.response.body as WireStream
  body.open()
  return body
}

/** The next message of a stream, parsed (`undefined` for a keep-alive comment). */
const nextMessage = async (body: WireStream): Promise<{ method?: string; params?: Record<string, unknown> }> => {
  const chunk = await body.next()
  if (chunk === undefined) throw new Error("the stream ended")
  const text = decoder.decode(chunk)
  return text.startsWith("data: ") ? JSON.parse(text.slice(6)) : {}
}

describe("the floor of the listen watcher", () => {
  // One asset whose content and revision the test moves by hand; its `next_update_at` is an hour away, so only
  // the floor can see a change.
  let value = 1
  let revision = 7
  // The plane's reads, and the watcher's looks at its revision (each floor look, and each read's start).
  const reads = callCounter()
  const looks = callCounter()
  const entry: DirectoryEntry = {
    asset_id: "crypto:bitcoin",
    plane: "crypto",
    symbol: "BTC",
    name: "Bitcoin",
    tier: "core",
    networks: [],
    aliases: [],
    alive: true
  }
  const plane: PlaneOperations = {
    plane: "crypto",
    perAsset: new Map([
      [
        "read",
        (e) =>
          Effect.sync(() => {
            reads.hit()
            return {
              asset_id: e.asset_id,
              status: "live",
              next_update_at: new Date(Date.now() + 3_600_000).toISOString(),
              headline: { price_usd: value }
            }
          })
      ]
    ]),
    calls: new Map(),
    directory: Effect.succeed([entry]),
    lookup: (id) => Effect.succeed(id === entry.asset_id ? entry : undefined),
    revisionOf: () => {
      looks.hit()
      return revision
    }
  }
  let service: Service
  beforeAll(async () => {
    service = await open([plane])
  })
  afterAll(() => Effect.runPromise(Scope.close(service.scope, Exit.void)))

  it("reads an idle asset again only when its revision moved, and then notifies its change", async () => {
    LISTEN_LIMITS.watchMaxIntervalMs = 100
    const { key } = await Effect.runPromise(
      Effect.provide(Effect.orDie(createKey({ credits: 1, rateLimitPerMinute: null })), service.context)
    )
    const readsBefore = listenTotals.assetsRead
    const body = await openStream(service, 1, { resourceSubscriptions: ["service://read/crypto:bitcoin"] }, key)
    try {
      expect((await nextMessage(body)).method).toBe("notifications/subscriptions/acknowledged")
      // The first read (the baseline), then looks every 100 ms that the unchanged revision answers.
      await reads.reached(1)
      expect(listenTotals.assetsRead).toBeGreaterThan(readsBefore)
      const assetsRead = listenTotals.assetsRead
      const skipped = listenTotals.floorSkipped
      // Five more looks at the unchanged revision: each skipped, none read.
      await looks.reached(looks.count() + 5)
      expect(listenTotals.floorSkipped).toBeGreaterThanOrEqual(skipped + 5)
      expect(listenTotals.assetsRead).toBe(assetsRead)
      expect(reads.count()).toBe(1)

      // New content with its revision moved: the next look reads it, and the change is notified.
      value = 2
      revision = 8
      const pending = nextMessage(body)
      const message = await pending
      expect(message.method).toBe("notifications/resources/updated")
      expect(message.params).toEqual({
        _meta: { "io.modelcontextprotocol/subscriptionId": 1 },
        uri: "service://read/crypto:bitcoin"
      })
      expect(listenTotals.assetsRead).toBe(assetsRead + 1)
      expect(reads.count()).toBe(2)
    } finally {
      body.close()
    }
  })
})

describe("resourcesListChanged", () => {
  const seed = seedDirectory()
  const universe = makeUniverseRef(universeOfDirectory(seed))
  let service: Service
  beforeAll(async () => {
    const plane = await Effect.runPromise(
      makeCryptoPlaneOver(universe).pipe(Effect.provideService(MarketStore, makeMemoryMarketStore()))
    )
    service = await open([plane])
  })
  afterAll(() => Effect.runPromise(Scope.close(service.scope, Exit.void)))

  it("is refused when not a boolean", async () => {
    const answered = await Effect.runPromise(
      Effect.provide(
        listen(
          3,
          { notifications: { resourcesListChanged: "yes" } },
          {
            authorization: [],
            client: "127.0.0.1",
            forwardedFor: [],
            headers: {}
          }
        ),
        service.context
      )
    )
    expect(answered._tag).toBe("Refused")
    if (answered._tag === "Refused") expect(answered.response).toMatchObject({ id: 3, error: { code: -32602 } })
  })

  it("notifies the streams that asked when the universe grows, and no other", async () => {
    LISTEN_LIMITS.universeCheckMs = 50
    LISTEN_LIMITS.keepAliveMs = 50
    const asked = await openStream(service, 1, { resourcesListChanged: true })
    const other = await openStream(service, 2, { toolsListChanged: true })
    try {
      expect(await nextMessage(asked)).toEqual({
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: {
          _meta: { "io.modelcontextprotocol/subscriptionId": 1 },
          notifications: { resourcesListChanged: true }
        }
      })
      expect((await nextMessage(other)).params?.notifications).toEqual({})

      // A refresh that finds a new perpetual on Hyperliquid: one asset more.
      const hyperliquidPerps = seed.assets.flatMap((a) =>
        a.listings.filter((l) => l.venue === "hyperliquid" && l.market === "perp" && l.status === "trading")
      )
      const merged = mergeDirectory(
        seed,
        [
          {
            venue: "hyperliquid",
            markets: ["perp"],
            listings: [
              ...hyperliquidPerps,
              {
                venue: "hyperliquid",
                market: "perp",
                symbol: "ZZNEW",
                base: "ZZNEW",
                quote: "USDC",
                multiplier: 1,
                status: "trading"
              }
            ]
          }
        ],
        { coins: coinIndex(wellKnownCoins), nowMs: Date.now() }
      )
      expect(merged.added).toHaveLength(1)
      universe.set(universeOfDirectory(merged.directory))

      let message = await nextMessage(asked)
      while (message.method === undefined) message = await nextMessage(asked)
      expect(message).toEqual({
        jsonrpc: "2.0",
        method: "notifications/resources/list_changed",
        params: { _meta: { "io.modelcontextprotocol/subscriptionId": 1 } }
      })
      // The other stream was passed over in the same look: what it has pending now is a keep-alive comment.
      expect(await nextMessage(other)).toEqual({})
    } finally {
      asked.close()
      other.close()
    }
  })
})
