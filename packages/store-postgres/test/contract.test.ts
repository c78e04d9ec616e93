import { handleStoreContract } from "@mcp-handles/core/testing"
import * as TestDatabase from "./support/TestDatabase.js"

handleStoreContract("postgres", TestDatabase.layerStore())
