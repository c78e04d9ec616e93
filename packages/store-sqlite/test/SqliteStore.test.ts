import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { EncryptedStore, Encryption } from "@mcp-handles/core"
import { handleStoreContract } from "@mcp-handles/store-contract"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A new database file in a new temporary directory for every build of the layer. */
export const freshStore = (options: Partial<SqliteStore.Options> = {}) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-sqlite-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
      )
      return SqliteStore.layer({ filename: path.join(dir, "handles.db"), ...options })
    }),
  )

handleStoreContract("sqlite", freshStore())
handleStoreContract("sqlite (synchronous NORMAL)", freshStore({ synchronous: "NORMAL" }))
// Task ids are sealed deterministically above the store: the task id column holds the sealed
// form, and its uniqueness is still one row per task id.
handleStoreContract(
  "sqlite, encrypted at rest",
  EncryptedStore.layer(
    freshStore(),
    Encryption.layerKeys({ current: "k1", keys: new Map([["k1", new Uint8Array(32).fill(1)]]) }),
  ),
)
