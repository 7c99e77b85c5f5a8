import { MarketStore } from "@market-data/core"
import { Layer } from "effect"
import { marketStoreContract } from "../../../core/test/contracts/MarketStoreContract.ts"
import { layerMemoryMarketStore, makeMemoryMarketStore, makeWriteThroughMarketStore } from "../src/index.ts"

marketStoreContract("memory", () => layerMemoryMarketStore)

// The write-through composition keeps the port's contract (here over two memory stores; PGlite in adapters/postgres).
marketStoreContract("write-through (memory over memory)", () =>
  Layer.sync(MarketStore)(() => makeWriteThroughMarketStore(makeMemoryMarketStore(), makeMemoryMarketStore()))
)
