import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import { HandleStore } from "@mcp-handles/core/HandleStore"
import { PgStore } from "@mcp-handles/store-postgres"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"

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

  it.live("a server at its connection limit is waited out within the retry budget", () =>
    Effect.gen(function* () {
      const url = yield* TestDatabase.databaseUrl
      const suffix = Math.random().toString(36).slice(2, 10)
      const role = `limited_${suffix}`
      const schema = `limited_${suffix}`
      const database = new URL(url).pathname.slice(1)
      const admin = PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })
      const asAdmin = (statement: string) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
          Effect.provide(admin),
          Effect.orDie,
        )
      yield* asAdmin(`CREATE ROLE ${role} LOGIN PASSWORD '${suffix}' CONNECTION LIMIT 1`)
      yield* asAdmin(`GRANT CREATE ON DATABASE "${database}" TO ${role}`)
      yield* Effect.addFinalizer(() =>
        Effect.zipRight(
          asAdmin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`),
          asAdmin(`DROP OWNED BY ${role}; DROP ROLE ${role}`),
        ),
      )
      const limited = new URL(url)
      limited.username = role
      limited.password = suffix
      // The role's one connection is taken until `held` closes.
      const held = yield* Scope.make()
      yield* Layer.buildWithScope(
        PgClient.layer({ url: Redacted.make(limited.toString()), maxConnections: 1 }),
        held,
      )
      const opening = yield* Effect.fork(
        Effect.scoped(
          Effect.flatMap(
            Layer.build(PgStore.layerUrl(limited.toString(), { schema, maxConnections: 1 })),
            (context) => Context.get(context, HandleStore).get("s", "k"),
          ),
        ),
      )
      yield* Effect.sleep("1 second")
      // Still trying, not failed: the limit is a condition that passes.
      expect(opening.unsafePoll()).toBeNull()
      yield* Scope.close(held, Exit.void)
      const found = yield* Fiber.join(opening)
      expect(Option.isNone(found)).toBe(true)
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
