/**
 * One live process per instance id on a shared database: a session holding the id's advisory
 * lock (another process) makes the store refuse it with InstanceIdInUse; when that session dies,
 * as it does the moment its process is killed, the id is free at once. A second client of one
 * process is refused too.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import { HandleStore } from "@mcp-handles/core/HandleStore"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as TestServices from "effect/TestServices"
import { advisoryKey } from "../src/internal/instance-lock.js"

describe("instance lock", () => {
  it.layer(TestDatabase.layerStore())((it) => {
    it.effect("a held id is refused, and free once the holding session is gone", () =>
      Effect.gen(function* () {
        const store = yield* HandleStore
        const sql = yield* PgClient.PgClient
        const { schema } = yield* TestDatabase.TestSchema
        // Another process: a session of its own that took the id's lock.
        const other = yield* Scope.make()
        const connection = yield* Scope.extend(sql.reserve, other)
        const key = advisoryKey(schema, "worker-1")
        const [[taken] = []] = yield* connection.executeValues("SELECT pg_try_advisory_lock($1::bigint)", [
          key,
        ])
        expect(taken).toBe(true)
        const [[pid] = []] = yield* connection.executeValues("SELECT pg_backend_pid()", [])

        const refused = yield* Effect.either(Effect.scoped(store.lockInstance("worker-1")))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("InstanceIdInUse")
        if (Either.isLeft(refused)) expect(refused.left.message).toContain(`database backend ${pid}`)
        yield* Effect.scoped(store.lockInstance("worker-2"))

        // The holder dies (its socket closes): the database drops its locks at once.
        yield* sql`SELECT pg_terminate_backend(${Number(pid)})`
        yield* Scope.close(other, Exit.void).pipe(Effect.ignore)
        const mine = yield* Scope.make()
        yield* Scope.extend(store.lockInstance("worker-1"), mine)
        // A second client of this process is refused; the first one's hold stands.
        const second = yield* Effect.either(Effect.scoped(store.lockInstance("worker-1")))
        expect(Either.isLeft(second) && second.left._tag).toBe("InstanceIdInUse")
        if (Either.isLeft(second)) expect(second.left.message).toContain("another client in this process")
        const stillHeld = yield* sql<{ readonly n: number }>`
          SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted
            AND ((classid::bigint << 32) | objid::bigint) = ${key}::bigint`
        expect(stillHeld[0]?.n).toBe(1)
        yield* Scope.close(mine, Exit.void)
        const released = yield* sql<{ readonly n: number }>`
          SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted
            AND ((classid::bigint << 32) | objid::bigint) = ${key}::bigint`
        expect(released[0]?.n).toBe(0)
      }).pipe(
        // Real time: a pooled session the kill took down is retried after a real backoff.
        TestServices.provideLive,
      ),
    )
  })
})
