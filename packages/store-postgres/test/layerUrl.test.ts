import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import { HandleStore } from "@mcp-handles/core/HandleStore"
import { PgStore } from "@mcp-handles/store-postgres"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

describe("PgStore.layerUrl", () => {
  it.live("opens a store of its own from a URL, in its own schema", () =>
    Effect.gen(function* () {
      const url = yield* TestDatabase.databaseUrl
      const schema = `layer_url_${Math.random().toString(36).slice(2, 10)}`
      const context = yield* Layer.build(PgStore.layerUrl(url, { schema, maxConnections: 2 }))
      const store = Context.get(context, HandleStore)
      yield* Effect.addFinalizer(() =>
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`),
        ).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.orDie),
      )
      const { created } = yield* store.insertOrGet({
        scope: "s",
        key: "k",
        serverId: "srv",
        tool: "t",
        arguments: { a: 1 },
        argumentsHash: "h",
        owner: "me",
        leaseMs: 1_000,
        now: 1,
      })
      expect(created).toBe(true)
      expect(Option.isSome(yield* store.get("s", "k"))).toBe(true)
    }).pipe(Effect.scoped),
  )

  it.live("a server that refuses the credentials is a typed error, not a hang", () =>
    Effect.gen(function* () {
      const url = yield* TestDatabase.databaseUrl
      const wrong = new URL(url)
      wrong.username = "no_such_role_here"
      const result = yield* Effect.either(
        Effect.scoped(Layer.build(PgStore.layerUrl(wrong.toString(), { connectTimeout: "3 seconds" }))),
      )
      expect(Either.isLeft(result)).toBe(true)
    }),
  )
})
