import { handleStoreContract } from "@mcp-handles/store-contract"
import { MemoryStore } from "@mcp-handles/store-memory"

handleStoreContract("memory", MemoryStore.layer)
