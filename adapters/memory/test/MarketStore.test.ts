import { marketStoreContract } from "../../../core/test/contracts/MarketStoreContract.ts"
import { layerMemoryMarketStore } from "../src/index.ts"

marketStoreContract("memory", () => layerMemoryMarketStore)
