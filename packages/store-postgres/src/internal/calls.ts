/**
 * Calls: the rows table, one statement per operation (two where a retry must learn what
 * happened).
 *
 * @internal
 */
import * as crypto from "node:crypto"
import type { SqlError } from "@effect/sql/SqlError"
import type { PgClient } from "@effect/sql-pg/PgClient"
import * as CallStoreDriver from "@mcp-handles/core/CallStoreDriver"
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as SqlStore from "@mcp-handles/core/SqlStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Migrations from "./migrations.js"
import * as Rows from "./rows.js"
import type { StatementRunner } from "./statement-runner.js"

/**
 * The task id as its indexed column holds it: as a JSON string literal, since a server's id may
 * hold a NUL or a lone surrogate, which a text column refuses.
 */
const taskIdColumn = (taskId: string | null): string | null =>
  taskId === null ? null : JSON.stringify(taskId)

/** A unique violation (23505) of the named index, wherever the driver put the details. */
const violates = (error: SqlError, index: string): boolean => {
  const cause = error.cause as { code?: unknown; constraint?: unknown } | undefined
  return cause?.code === "23505" && cause.constraint === index
}

const corrupt = (operation: string) => (error: ParseResult.ParseError) =>
  new HandleStore.StoreError({ operation, message: `row does not decode: ${error.message}`, cause: error })

export const calls = (
  sql: PgClient,
  schema: string,
  run: StatementRunner,
): CallStoreDriver.CallStoreDriver => {
  const t = sql(`${schema}.${Migrations.table}`)
  const columns = sql.literal(Rows.selectColumns)
  /**
   * `ListFilter.keyContains`: strpos, not LIKE (which reads % and _ in the text), over the key
   * with its ASCII capitals made small (`foldAscii`; translate, not lower, whose folding would
   * follow the database's locale provider).
   */
  const keyContains = (text: string) =>
    sql`strpos(translate(key, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), ${CallStoreDriver.foldAscii(text)}) > 0`
  const open = sql.literal(`(${SqlStore.openStatusList})`)
  // The rows of an instance's servers (`HandleStore.ServerFilter`): by identity, or by the name
  // part of it (an identity is the name, a colon and 16 hex digits; an id without them is its own
  // name).
  const servedBy = (servers: HandleStore.ServerFilter | undefined) => {
    if (servers === undefined) return sql`TRUE`
    const byId = servers.ids.length > 0 ? sql`server_id IN ${sql.in(servers.ids)}` : sql`FALSE`
    const byName =
      servers.names.length > 0
        ? sql`(CASE WHEN length(server_id) > 17 AND substr(server_id, length(server_id) - 16, 1) = ':'
            THEN substr(server_id, 1, length(server_id) - 17) ELSE server_id END) IN ${sql.in(servers.names)}`
        : sql`FALSE`
    return sql`(${byId} OR ${byName})`
  }

  const decode = (operation: string) => (raw: unknown) =>
    Effect.mapError(Rows.decodeRow(raw), corrupt(operation))
  const encode = (operation: string, record: HandleRecord.HandleRecord) =>
    Effect.mapError(
      Rows.encodeRow(record),
      (error) =>
        new HandleStore.StoreError({
          operation,
          message: `record does not encode: ${error.message}`,
          cause: error,
        }),
    )

  const selectOne = (operation: string, scope: string, key: string) =>
    sql`SELECT ${columns} FROM ${t} WHERE scope = ${scope} AND key = ${key}`.withoutTransform.pipe(
      Effect.flatMap((rows) =>
        rows[0] === undefined ? Effect.succeedNone : Effect.asSome(decode(operation)(rows[0])),
      ),
    )

  const insertOrGet = (record: HandleRecord.HandleRecord) =>
    Effect.gen(function* () {
      const v = yield* encode("insertOrGet", record)
      const spread = SqlStore.spreadColumns(record)
      // Identifies this call's insert, so that a retry after a connection died mid-commit knows
      // the row it finds is its own (created) rather than someone else's (attach).
      const token = crypto.randomUUID()
      const attempt = Effect.gen(function* () {
        const inserted = yield* sql`INSERT INTO ${t}
            (scope, key, server_id, status, next_poll_at, lease_owner, lease_expires_at, version, created_at, settled_at, body, write_id,
              poll_interval_ms, cancel_unsent)
          VALUES (${v.scope}, ${v.key}, ${v.serverId}, ${v.status}, ${v.nextPollAt}, ${v.leaseOwner},
            ${v.leaseExpiresAt}, ${v.version}, ${v.createdAt}, ${v.settledAt}, ${v.body}::json, ${token}::uuid,
            ${spread.pollIntervalMs}::float8, ${spread.cancelUnsent})
          ON CONFLICT (scope, key) DO NOTHING
          RETURNING ${columns}`.withoutTransform
        if (inserted[0] !== undefined) {
          const row = yield* decode("insertOrGet")(inserted[0])
          return Option.some({ record: row.record, created: true })
        }
        // ON CONFLICT waited for the other inserter to commit, so a fresh statement sees its row.
        const existing = yield* selectOne("insertOrGet", record.scope, record.key)
        return Option.map(existing, (row) => ({ record: row.record, created: row.writeId === token }))
      })
      // The row can vanish between the two statements only if a GC sweep deleted a settled row
      // of that key; then the key is free again and the insert is retried.
      return yield* run(
        "insertOrGet",
        attempt.pipe(
          Effect.repeat({ until: Option.isSome, times: 3 }),
          Effect.flatMap(
            Option.match({
              onNone: () =>
                Effect.fail(
                  new HandleStore.StoreError({
                    operation: "insertOrGet",
                    message: "the key's row was deleted between insert and read, repeatedly",
                  }),
                ),
              onSome: Effect.succeed,
            }),
          ),
        ),
      )
    })

  const update = (next: HandleRecord.HandleRecord) =>
    Effect.gen(function* () {
      const v = yield* encode("update", next)
      const spread = SqlStore.spreadColumns(next)
      const token = crypto.randomUUID()
      const attempt = Effect.gen(function* () {
        const written = yield* sql`UPDATE ${t} SET
            server_id = ${v.serverId}, status = ${v.status}, next_poll_at = ${v.nextPollAt},
            lease_owner = ${v.leaseOwner}, lease_expires_at = ${v.leaseExpiresAt}, created_at = ${v.createdAt},
            settled_at = ${v.settledAt}, body = ${v.body}::json, task_id = ${taskIdColumn(next.taskId)},
            poll_interval_ms = ${spread.pollIntervalMs}::float8, cancel_unsent = ${spread.cancelUnsent},
            version = ${v.version}, write_id = ${token}::uuid
          WHERE scope = ${v.scope} AND key = ${v.key} AND version = ${v.version - 1}
          RETURNING 1 AS ok`.withoutTransform.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.catchIf(
            (error) => violates(error, Migrations.taskIndex),
            () => Effect.succeed("task-id-taken" as const),
          ),
        )
        if (written !== false) return written === true ? ("written" as const) : written
        // Nothing matched: a lost compare-and-set, unless this is a retry and our previous
        // attempt committed before its connection died. Only then does the row carry our token
        // at exactly the version our write produced.
        const current = yield* selectOne("update", next.scope, next.key)
        return Option.isSome(current) &&
          current.value.writeId === token &&
          current.value.record.version === next.version
          ? ("written" as const)
          : ("version-conflict" as const)
      })
      return yield* run("update", attempt)
    })

  return {
    insertOrGet,
    get: (scope, key) =>
      run("get", selectOne("get", scope, key)).pipe(Effect.map(Option.map((row) => row.record))),
    // What a driver asks before each poll of a row it kept (see `CallStore.peek`): no body read.
    peek: (scope, key) =>
      run(
        "peek",
        sql`SELECT version, lease_owner, lease_expires_at, next_poll_at FROM ${t}
          WHERE scope = ${scope} AND key = ${key}`.withoutTransform.pipe(
          Effect.flatMap((rows) =>
            rows[0] === undefined
              ? Effect.succeedNone
              : Effect.asSome(Effect.mapError(Rows.decodeStamp(rows[0]), corrupt("peek"))),
          ),
        ),
      ),
    update,

    // One statement: the inner SELECT locks due rows, skipping rows another claimer holds at this
    // moment, and the UPDATE stamps them. A claim that dies with its connection is harmless: the
    // rows it took are leased to the same owner, which reclaims them on the retry.
    // Every row with a due time (open rows, and settled ones with a stray task still to cancel) but
    // one in doubt, which waits on the application.
    claimDue: ({ owner, now, leaseMs, limit, servers }) =>
      run(
        "claimDue",
        sql`UPDATE ${t} SET lease_owner = ${owner}, lease_expires_at = ${now + leaseMs},
            version = version + 1, write_id = NULL
          WHERE id IN (
            SELECT id FROM ${t}
            WHERE next_poll_at <= ${now} AND status <> 'in_doubt'
              AND (lease_owner IS NULL OR lease_owner = ${owner} OR lease_expires_at <= ${now})
              AND ${servedBy(servers)}
            ORDER BY next_poll_at, id
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          )
          RETURNING ${columns}`.withoutTransform.pipe(
          Effect.flatMap((rows) => Effect.forEach(rows, decode("claimDue"))),
          // RETURNING has no order; the contract's is oldest due first.
          Effect.map((rows) =>
            rows
              .sort((a, b) => (a.record.nextPollAt ?? 0) - (b.record.nextPollAt ?? 0) || a.id - b.id)
              .map((row) => row.record),
          ),
        ),
      ),

    // The boot spread in one statement per batch, rows locked with SKIP LOCKED like a claim and
    // never read back. The lease runs to the end of the widest window plus leaseMs.
    spreadDue: (options) => {
      const { now, owner } = options
      const takeOver =
        options.takeOver.length > 0 ? sql`lease_owner IN ${sql.in(options.takeOver)}` : sql`FALSE`
      return run(
        "spreadDue",
        sql`UPDATE ${t} SET
            next_poll_at = due.next, lease_owner = ${owner}, lease_expires_at = due.next + ${options.leaseMs},
            version = ${t}.version + 1, write_id = NULL
          FROM (
            SELECT id, greatest(${now}::bigint, next_poll_at + span::bigint) + floor(random() * span)::bigint AS next
            FROM (
              SELECT id, next_poll_at, CASE WHEN poll_interval_ms IS NOT NULL
                  THEN greatest(${options.minIntervalMs}::float8,
                    least(${options.maxIntervalMs}::float8, ceil(poll_interval_ms)))
                  ELSE ${options.defaultIntervalMs}::float8 END AS span
              FROM ${t}
            WHERE status IN ${open} AND status <> 'pending' AND next_poll_at <= ${now}
              AND (lease_owner IS NULL OR lease_owner = ${owner} OR ${takeOver} OR lease_expires_at <= ${now})
              AND json_typeof(body->'taskId') = 'string'
              AND NOT cancel_unsent
              AND ${servedBy(options.servers)}
              ORDER BY next_poll_at, id
              LIMIT ${options.limit}
              FOR UPDATE SKIP LOCKED
            ) AS picked
          ) AS due
          WHERE ${t}.id = due.id
          RETURNING ${t}.id`.withoutTransform.pipe(Effect.map((rows) => rows.length)),
      )
    },

    release: (scope, key, owner) =>
      run(
        "release",
        sql`UPDATE ${t} SET lease_owner = NULL, lease_expires_at = NULL, version = version + 1, write_id = NULL
          WHERE scope = ${scope} AND key = ${key} AND lease_owner = ${owner}`.withoutTransform.pipe(
          Effect.asVoid,
        ),
      ),

    // Both are safe to retry as they stand: a renewal sets an absolute expiry, and a release
    // after a lost reply finds only what is still leased (its count is then a lower bound).
    renewLease: ({ scope, key, owner, until }) =>
      run(
        "renewLease",
        sql`UPDATE ${t} SET lease_expires_at = ${until}
          WHERE scope = ${scope} AND key = ${key} AND lease_owner = ${owner}
          RETURNING 1 AS ok`.withoutTransform.pipe(Effect.map((rows) => rows.length === 1)),
      ),

    // One statement for every row a holder watches (`Claiming.isRenewable`, `Claiming.renewedSchedule`); the rows travel as
    // one JSON parameter. Safe to retry like a single renewal: it sets absolute times.
    renewLeases: ({ owner, rows, until }) =>
      run(
        "renewLeases",
        sql`UPDATE ${t} SET lease_expires_at = ${until},
            next_poll_at = greatest(coalesce(${t}.next_poll_at, ${until}::float8), ${until}::float8)
          FROM json_to_recordset(${JSON.stringify(rows.map(({ scope, key }) => ({ scope, key })))}::json)
            AS wanted(scope text, key text)
          WHERE ${t}.scope = wanted.scope AND ${t}.key = wanted.key AND ${t}.lease_owner = ${owner}
            AND ${t}.status IN ('working', 'input_required')
            AND NOT ${t}.cancel_unsent
          RETURNING ${t}.scope, ${t}.key`.withoutTransform.pipe(
          Effect.map((renewed) => renewed.map((row) => ({ scope: String(row.scope), key: String(row.key) }))),
        ),
      ),

    // The same rule as `Claiming.hasPendingIntent`, through handles_intents (its predicate is
    // the second term here): only rows with an unsent cancel or waiting for input are looked at.
    pendingIntents: ({ owner, limit }) =>
      run(
        "pendingIntents",
        sql`SELECT scope, key FROM ${t}
          WHERE lease_owner = ${owner} AND (cancel_unsent OR status = 'input_required')
            AND status IN ('working', 'input_required')
            AND (cancel_unsent OR EXISTS (SELECT 1 FROM json_each(body->'answers') AS answer
              WHERE answer.value->>'acknowledged' = 'false'))
          LIMIT ${limit}`.withoutTransform.pipe(
          Effect.map((found) => found.map((row) => ({ scope: String(row.scope), key: String(row.key) }))),
        ),
      ),

    // The same rules as `Claiming.isReleasable` and `Claiming.releasedPollAt` (the window as spreadDue's).
    releaseOwner: ({ owner, now, minIntervalMs, maxIntervalMs, defaultIntervalMs }) =>
      run(
        "releaseOwner",
        sql`UPDATE ${t} SET lease_owner = NULL, lease_expires_at = NULL, version = version + 1, write_id = NULL,
            next_poll_at = CASE WHEN next_poll_at = lease_expires_at THEN least(next_poll_at, ${now}::float8 +
              CASE WHEN poll_interval_ms IS NOT NULL
                THEN greatest(${minIntervalMs}::float8, least(${maxIntervalMs}::float8, ceil(poll_interval_ms)))
                ELSE ${defaultIntervalMs}::float8 END)
              ELSE next_poll_at END
          WHERE lease_owner = ${owner} AND (next_poll_at IS NULL OR next_poll_at > ${now})
          RETURNING 1 AS ok`.withoutTransform.pipe(Effect.map((rows) => rows.length)),
      ),

    count: ({ scope, serverId, keyContains: text }) => {
      const where = scope === undefined ? [sql`TRUE`] : [sql`scope = ${scope}`]
      if (serverId !== undefined) where.push(sql`server_id = ${serverId}`)
      if (text !== undefined) where.push(keyContains(text))
      return run(
        "count",
        sql`SELECT status, count(*) AS n FROM ${t} WHERE ${sql.and(where)} GROUP BY status`.withoutTransform.pipe(
          Effect.flatMap(CallStoreDriver.decodeCounts),
        ),
      )
    },

    list: (query) => {
      const allScopes = query.scope === undefined
      const where = allScopes ? [sql`TRUE`] : [sql`scope = ${query.scope}`]
      if (query.statuses !== undefined) where.push(sql`status IN ${sql.in(query.statuses)}`)
      if (query.serverId !== undefined) where.push(sql`server_id = ${query.serverId}`)
      if (query.scheduled === true) where.push(sql`next_poll_at IS NOT NULL`)
      if (query.keyContains !== undefined) where.push(keyContains(query.keyContains))
      if (query.after !== undefined)
        where.push(
          allScopes
            ? sql`(created_at, key, scope) > (${query.after.createdAt}, ${query.after.key}, ${query.after.scope ?? ""})`
            : sql`(created_at, key) > (${query.after.createdAt}, ${query.after.key})`,
        )
      // Across scopes, the scope breaks ties of creation time and key.
      const order = sql.literal(allScopes ? "created_at, key, scope" : "created_at, key")
      return run(
        "list",
        sql`SELECT ${columns} FROM ${t} WHERE ${sql.and(where)} ORDER BY ${order} LIMIT ${query.limit}`.withoutTransform.pipe(
          Effect.flatMap((rows) => Effect.forEach(rows, decode("list"))),
          Effect.map((rows) => rows.map((row) => row.record)),
        ),
      )
    },
  }
}
