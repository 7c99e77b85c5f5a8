import { equityStoreContract } from "../../../core/test/contracts/EquityStoreContract.ts"
import { layerMemoryEquityStore } from "../src/MemoryEquityStore.ts"

equityStoreContract("memory", () => layerMemoryEquityStore)
