/**
 * The PostgreSQL store as the CLI opens it, in a module of its own so that the driver is loaded
 * only for a `postgres://` store.
 */
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import { PgStore } from "@mcp-handles/store-postgres"
import * as Layer from "effect/Layer"
import { type CliError, describe, failed } from "./CliError.js"
import { redactUrl } from "./StoreSpec.js"

export const layer = (url: string): Layer.Layer<HandleStore.HandleStore, CliError> => {
  // The store retries transient connection failures; a CLI command should fail fast instead.
  const store = PgStore.layerUrl(url, {
    retry: { budget: "1 second" },
    connectTimeout: "5 seconds",
    maxConnections: 4,
    applicationName: "mcp-handles-cli",
  })
  return Layer.mapError(store, (error) => {
    const detail = describe(error).message.replace(/^cannot open store: (PgClient: )?/, "")
    // A driver message may quote the URL; its password must not reach the terminal.
    const safe = redactUrl(url)
    return failed(`cannot open store ${safe}: ${detail.replaceAll(url, safe)}`)
  })
}
