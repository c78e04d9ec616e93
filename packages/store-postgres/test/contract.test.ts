import { handleStoreContract } from "@mcp-handles/core/testing"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"

handleStoreContract("postgres", TestDatabase.layerStore())
