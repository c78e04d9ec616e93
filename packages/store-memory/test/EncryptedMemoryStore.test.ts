import { EncryptedStore, Encryption } from "@mcp-handles/core"
import { handleStoreContract } from "@mcp-handles/store-contract"
import { MemoryStore } from "@mcp-handles/store-memory"

// The store contract holds through the encryption decorator: sealing changes no behaviour.
handleStoreContract(
  "memory, encrypted at rest",
  EncryptedStore.layer(
    MemoryStore.layer,
    Encryption.layerKeys({ current: "k1", keys: new Map([["k1", new Uint8Array(32).fill(1)]]) }),
  ),
)
