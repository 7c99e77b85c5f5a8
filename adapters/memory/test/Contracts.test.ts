import { storeContracts } from "../../../core/test/contracts/StoreContracts.ts"
import { memoryStores } from "../src/index.ts"

storeContracts("memory", () => memoryStores())
