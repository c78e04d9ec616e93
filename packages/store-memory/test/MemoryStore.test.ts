import { handleStoreContract } from "@mcp-handles/core/testing"
import { MemoryStore } from "@mcp-handles/store-memory"

handleStoreContract("memory", MemoryStore.layer)
