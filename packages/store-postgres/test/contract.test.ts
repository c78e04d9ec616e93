import { handleStoreContract } from "@mcp-handles/store-contract"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"

handleStoreContract("postgres", TestDatabase.layerStore())
