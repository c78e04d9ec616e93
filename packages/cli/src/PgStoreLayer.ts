/**
 * The PostgreSQL store as the CLI opens it, in a module of its own so that the driver is loaded
 * only for a `postgres://` store.
 *
 * @since 0.1.0
 */
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import { PgStore } from "@mcp-handles/store-postgres"
import type * as ConfigError from "effect/ConfigError"
import * as Layer from "effect/Layer"
import * as Match from "effect/Match"
import { type CliError, failed } from "./CliError.js"
import { type Mode, missing, redactUrl } from "./StoreSpec.js"

type OpenFailure = PgStore.OpenError | ConfigError.ConfigError

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (url: string, mode: Mode): Layer.Layer<HandleStore.HandleStore, CliError> => {
  // The store retries transient connection failures; a CLI command should fail fast instead.
  const store = PgStore.layerUrl(url, {
    retry: { budget: "1 second" },
    connectTimeout: "5 seconds",
    maxConnections: 4,
    applicationName: "mcp-handles-cli",
    // Reading never creates a store: without migrations, a schema never set up reads as version 0.
    migrate: mode === "create",
  })
  const safe = redactUrl(url)
  // The store phrases the problem (the driver's own words, one line); the CLI names the store by
  // the URL it was given, its password masked.
  const describe: (error: OpenFailure) => CliError = Match.type<OpenFailure>().pipe(
    Match.tag("OpenError", (e) =>
      e.reason === "older-schema" && e.found === 0
        ? missing(`${safe} (schema ${PgStore.defaults.schema})`)
        : failed(`cannot open store ${safe}: ${e.problem ?? e.message}`),
    ),
    Match.orElse((e) => failed(`cannot open store ${safe}: ${e.message}`)),
  )
  // A driver message may quote the URL; its password must not reach the terminal.
  return Layer.mapError(store, (error) => {
    const cliError = describe(error)
    return cliError.message.includes(url) ? failed(cliError.message.replaceAll(url, safe)) : cliError
  })
}
