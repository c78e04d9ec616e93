/**
 * The PostgreSQL store as the CLI opens it, in a module of its own so that the driver is loaded
 * only for a `postgres://` store.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import { PgStore } from "@mcp-handles/store-postgres"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { type CliError, describe, failed } from "./CliError.js"
import { redactUrl } from "./StoreSpec.js"

export const layer = (url: string): Layer.Layer<HandleStore.HandleStore, CliError> => {
  const client = PgClient.layer({
    url: Redacted.make(url),
    connectTimeout: Duration.seconds(5),
    maxConnections: 4,
    applicationName: "mcp-handles-cli",
  })
  // The store retries transient connection failures; a CLI command should fail fast instead.
  const store = PgStore.layer({ retry: { times: 1 } }).pipe(Layer.provide(client))
  return Layer.mapError(store, (error) => {
    const detail = describe(error).message.replace(/^cannot open store: (PgClient: )?/, "")
    // A driver message may quote the URL; its password must not reach the terminal.
    const safe = redactUrl(url)
    return failed(`cannot open store ${safe}: ${detail.replaceAll(url, safe)}`)
  })
}
