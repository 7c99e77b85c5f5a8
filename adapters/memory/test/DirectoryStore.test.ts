import { directoryStoreContract } from "../../../core/test/contracts/DirectoryStoreContract.ts"
import { layerMemoryDirectoryStore } from "../src/index.ts"

directoryStoreContract("memory", () => layerMemoryDirectoryStore)
