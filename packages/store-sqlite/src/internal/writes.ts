/**
 * The store's writes, as synchronous operations on the writer's own better-sqlite3 connection,
 * with statements prepared once. They run inside the writer's batch transaction (see
 * writer.ts); each keeps its own semantics there, so a lost compare-and-set fails only itself.
 */
import type { HandleRecord, Status } from "@mcp-handles/core/HandleRecord"
import {
  type AckOutcomeOptions,
  type ClaimOptions,
  type ClaimOutcomesOptions,
  type InsertOrGetResult,
  type OutcomeDelivery,
  type ReleaseOwnerOptions,
  type RenewManyOptions,
  type ServerFilter,
  type SpreadOptions,
  StoreError,
} from "@mcp-handles/core/HandleStore"
import { claimedState, type DeliveryState, type WriteOutcome } from "@mcp-handles/core/HandleStoreDriver"
import { openStatusList, restingStatusList, spreadColumns as spreadOf } from "@mcp-handles/core/SqlStore"
import type Database from "better-sqlite3"
import * as Either from "effect/Either"
import * as Rows from "./rows.js"
import type { Transactor } from "./writer.js"

/** What a routine write sets, and the columns it leaves as they are (see `updateRoutine`). */
const routineSet: ReadonlyArray<Rows.Column> = [
  "next_poll_at",
  "lease_owner",
  "lease_expires_at",
  "version",
  "body",
]
const routineKept: ReadonlyArray<Rows.Column> = ["server_id", "status", "created_at", "settled_at", "task_id"]

/**
 * The rows of an instance's servers (`HandleStore.ServerFilter`): by identity, or by the name
 * part of it (an identity is the name, a colon and 16 hex digits; an id without them, from before
 * identities had them, is its own name). `@servers` is 0 for every row.
 */
const servedBy = `(@servers = 0 OR server_id IN (SELECT value FROM json_each(@ids))
  OR (CASE WHEN length(server_id) > 17 AND substr(server_id, -17, 1) = ':'
    THEN substr(server_id, 1, length(server_id) - 17) ELSE server_id END) IN (SELECT value FROM json_each(@names)))`

const serverParams = (servers: ServerFilter | undefined) => ({
  servers: servers === undefined ? 0 : 1,
  ids: JSON.stringify(servers?.ids ?? []),
  names: JSON.stringify(servers?.names ?? []),
})

/**
 * The columns that repeat what the spread and the lease renewal read of the body (migration
 * 11), in this order after the row's own columns in every write of the body: the interval the
 * server asked for (null when it named none), and 1 while a cancel is recorded but unsent.
 */
export const spreadColumns = ["poll_interval_ms", "cancel_unsent"] as const

/** `spreadColumns`' values for `record` (core's `SqlStore.spreadColumns`), as SQLite stores them. */
export const spreadValues = (record: HandleRecord): [number | null, 0 | 1] => {
  const { pollIntervalMs, cancelUnsent } = spreadOf(record)
  return [pollIntervalMs, cancelUnsent ? 1 : 0]
}

/**
 * The boot spread (`spreadDue`) in one statement: no row is read back, decoded or written one at
 * a time. The lease runs to the end of the row's window plus leaseMs. It reads no JSON: SQLite
 * parses a whole body (about 13 k instructions for B3's rows) for each JSON function handed it,
 * and those parses were most of B3's cost, so the interval and the cancel check are columns
 * (migration 11). `picked` and `timed` are materialized, so the window and the next poll are
 * computed once a row. The offset is a multiplicative hash of the rowid and a per-call seed
 * (random() would differ between the two columns that use it).
 */
export const spreadStatement = `WITH picked AS MATERIALIZED (
    SELECT rowid AS id, next_poll_at AS due, poll_interval_ms AS interval
    FROM handles
    WHERE status IN (${openStatusList}) AND status <> 'pending' AND next_poll_at <= @now
      AND (lease_owner IS NULL OR lease_owner = @owner
        OR lease_owner IN (SELECT value FROM json_each(@takeOver)) OR lease_expires_at <= @now)
      AND task_id IS NOT NULL
      AND cancel_unsent = 0
      AND ${servedBy}
    ORDER BY next_poll_at, created_at, scope, key LIMIT @limit),
  windowed AS (SELECT id, due, CASE WHEN typeof(interval) IN ('integer', 'real')
    THEN max(@min, min(@max, CAST(interval AS INTEGER))) ELSE @default END AS window
    FROM picked),
  timed AS MATERIALIZED (SELECT id,
    max(@now, due + window) + ((id * 2654435761 + @seed) % 4294967296) % window AS next FROM windowed)
  UPDATE handles SET next_poll_at = timed.next, lease_owner = @owner, lease_expires_at = timed.next + @lease,
    version = version + 1
  FROM timed WHERE handles.rowid = timed.id`

/** A consumer's delivery state beside a row, all NULL when the row was never handed out. */
interface DeliveryColumns {
  readonly d_status: string | null
  readonly d_launches: number | null
  readonly d_member: string | null
  readonly d_lease_until: number | null
  readonly d_acked: number | null
  readonly d_deliveries: number | null
}

/** Only compared with the row's own rest, so an unknown status simply reads as another rest. */
const deliveryState = (row: DeliveryColumns): DeliveryState | undefined =>
  row.d_status === null
    ? undefined
    : {
        rest: { status: row.d_status as Status, launches: row.d_launches ?? 0 },
        member: row.d_member,
        leaseUntil: row.d_lease_until,
        acked: row.d_acked === 1,
        deliveries: row.d_deliveries ?? 0,
      }

export const make = (db: Database.Database) => {
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  const rollback = db.prepare("ROLLBACK")
  const insert = db.prepare(`INSERT INTO handles (${Rows.columns}, ${spreadColumns.join(", ")})
    VALUES (${Rows.placeholders}, ${spreadColumns.map(() => "?").join(", ")})
    ON CONFLICT (scope, key) DO NOTHING`)
  const selectOne = db.prepare(`SELECT ${Rows.columns} FROM handles WHERE scope = ? AND key = ?`)
  const selectStamp = db.prepare(`SELECT version, lease_owner AS leaseOwner,
    lease_expires_at AS leaseExpiresAt, next_poll_at AS nextPollAt FROM handles WHERE scope = ? AND key = ?`)
  const update = db.prepare(`UPDATE handles SET server_id = ?, status = ?, next_poll_at = ?, lease_owner = ?,
    lease_expires_at = ?, version = ?, created_at = ?, settled_at = ?, body = ?, task_id = ?,
    ${spreadColumns.map((column) => `${column} = ?`).join(", ")}
    WHERE scope = ? AND key = ? AND version = ?`)
  // A routine write sets only what a poll changes, where the other columns already hold what it
  // would write: SQLite then leaves the list, status and settled indexes alone, and a write
  // among many rows dirties fewer pages (each one a frame in the WAL).
  const updateRoutine =
    db.prepare(`UPDATE handles SET ${[...routineSet, ...spreadColumns].map((column) => `${column} = ?`).join(", ")}
    WHERE scope = ? AND key = ? AND version = ? AND ${routineKept.map((column) => `${column} IS ?`).join(" AND ")}`)
  // Every row with a due time (open, or settled with a stray to cancel) but one in doubt (it waits
  // on the application), through handles_due_any.
  const due = db.prepare(`SELECT ${Rows.columns} FROM handles
    WHERE next_poll_at <= @now AND status <> 'in_doubt'
      AND (lease_owner IS NULL OR lease_owner = @owner OR lease_expires_at <= @now)
      AND ${servedBy}
    ORDER BY next_poll_at, created_at, scope, key LIMIT @limit`)
  const lease = db.prepare(`UPDATE handles SET lease_owner = ?, lease_expires_at = ?, version = version + 1
    WHERE scope = ? AND key = ? AND version = ?`)
  const release = db.prepare(`UPDATE handles SET lease_owner = NULL, lease_expires_at = NULL,
    version = version + 1 WHERE scope = ? AND key = ? AND lease_owner = ?`)
  const renew = db.prepare(`UPDATE handles SET lease_expires_at = ?
    WHERE scope = ? AND key = ? AND lease_owner = ?`)
  // The same rules as `Claiming.isRenewable` and `Claiming.renewedSchedule`, per row inside the writer's one transaction.
  const renewWatched = db.prepare(`UPDATE handles SET lease_expires_at = @until,
      next_poll_at = max(coalesce(next_poll_at, @until), @until)
    WHERE scope = @scope AND key = @key AND lease_owner = @owner
      AND status IN ('working', 'input_required')
      AND cancel_unsent = 0`)
  // The same rule as `Claiming.hasPendingIntent`, through handles_intents (its WHERE is the
  // second term here, as SQLite needs to use a partial index): only the few rows with an unsent
  // cancel or waiting for input are looked at, never every row the owner holds.
  const intents = db.prepare(`SELECT scope, key FROM handles
    WHERE lease_owner = @owner AND (cancel_unsent = 1 OR status = 'input_required')
      AND status IN ('working', 'input_required')
      AND (cancel_unsent = 1 OR EXISTS (SELECT 1 FROM json_each(body, '$.answers')
        WHERE json_extract(value, '$.acknowledged') = 0))
    LIMIT @limit`)
  // The same rules as `Claiming.isReleasable` and `Claiming.releasedPollAt` (the window as spreadDue's).
  const releaseOwner = db.prepare(`UPDATE handles SET lease_owner = NULL, lease_expires_at = NULL,
    next_poll_at = CASE WHEN next_poll_at = lease_expires_at THEN min(next_poll_at, @now +
      CASE WHEN typeof(poll_interval_ms) IN ('integer', 'real')
        THEN max(@min, min(@max, CAST(poll_interval_ms AS INTEGER))) ELSE @default END)
      ELSE next_poll_at END,
    version = version + 1 WHERE lease_owner = @owner AND (next_poll_at IS NULL OR next_poll_at > @now)`)
  const spread = db.prepare(spreadStatement)

  // Outcome delivery (issue 15): rows that rest and are due for the consumer, with its state.
  const joined = Rows.columns
    .split(", ")
    .map((column) => `h.${column}`)
    .join(", ")
  const dueOutcomes = db.prepare(`SELECT ${joined}, d.status AS d_status, d.launches AS d_launches,
      d.member AS d_member, d.lease_until AS d_lease_until, d.acked AS d_acked, d.deliveries AS d_deliveries
    FROM handles h LEFT JOIN outcome_deliveries d ON d.consumer = @consumer AND d.scope = h.scope AND d.key = h.key
    WHERE h.scope = @scope AND h.status IN (${restingStatusList})
      AND (d.consumer IS NULL OR d.status <> h.status OR d.launches <> json_extract(h.body, '$.launches')
        OR (d.acked = 0 AND (d.lease_until IS NULL OR d.lease_until <= @now)))
    ORDER BY h.created_at, h.key LIMIT @limit`)
  const claimOutcome = db.prepare(`INSERT INTO outcome_deliveries
      (consumer, scope, key, status, launches, member, lease_until, acked, deliveries)
    VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)
    ON CONFLICT (consumer, scope, key) DO UPDATE SET status = excluded.status, launches = excluded.launches,
      member = excluded.member, lease_until = excluded.lease_until, acked = 0, deliveries = excluded.deliveries`)
  const ackOutcome = db.prepare(`UPDATE outcome_deliveries SET acked = 1
    WHERE consumer = @consumer AND scope = @scope AND key = @key
      AND (@status IS NULL OR (status = @status AND launches = @launches))`)
  const releaseOutcomes = db.prepare(`UPDATE outcome_deliveries SET member = NULL, lease_until = NULL
    WHERE consumer = ? AND member = ? AND acked = 0`)

  /** Runs a compare-and-set statement: its changes, or a refused task id (only this statement undone). */
  const compareAndSet = (run: () => number): WriteOutcome => {
    let changes: number
    try {
      changes = run()
    } catch (error) {
      // Only this statement is undone; the batch's other writes stand.
      if ((error as { code?: unknown }).code !== "SQLITE_CONSTRAINT_UNIQUE") throw error
      return "task-id-taken"
    }
    return changes === 1 ? "written" : "version-conflict"
  }

  /** Every column of `next` written where the stored version is the one before it. */
  const writeAll = (next: HandleRecord, params: ReadonlyArray<unknown>): WriteOutcome => {
    const [scope, key, ...rest] = params
    return compareAndSet(
      () => update.run(...rest, ...spreadValues(next), scope, key, next.version - 1).changes,
    )
  }

  const transactor: Transactor = {
    begin: () => void begin.run(),
    commit: () => void commit.run(),
    rollback: () => void rollback.run(),
  }

  return {
    transactor,

    /**
     * One row by its key, read on this connection outside any batch (a batch runs from BEGIN to
     * COMMIT in one step of the event loop, so a read never lands inside one). A driver reads
     * the row it is about to write: here the pages its last write touched are still cached, while
     * another connection's cache is dropped whenever this one commits, and the statement is
     * prepared once.
     */
    readOne: (scope: string, key: string): Rows.Row | undefined =>
      selectOne.get(scope, key) as Rows.Row | undefined,

    /** The row's version, lease and next poll (`peek`), on this connection as `readOne`; not decoded. */
    readStamp: (scope: string, key: string): unknown => selectStamp.get(scope, key),

    /** `pendingIntents`, on this connection as `readOne`. */
    readIntents: (owner: string, limit: number): Array<{ readonly scope: string; readonly key: string }> =>
      intents.all({ owner, limit }) as Array<{ readonly scope: string; readonly key: string }>,

    /** Insert-or-get: the new record when this call created the row, else the stored one. */
    insertOrGet:
      (record: HandleRecord, params: ReadonlyArray<unknown>) =>
      (): Either.Either<InsertOrGetResult, StoreError> => {
        if (insert.run(...params, ...spreadValues(record)).changes === 1)
          return Either.right({ record, created: true })
        // Inserted by an earlier write of this transaction or an earlier commit: it cannot have
        // gone in between, short of a corrupt database.
        const row = selectOne.get(record.scope, record.key) as Rows.Row | undefined
        if (row === undefined) {
          return Either.left(
            new StoreError({ operation: "insertOrGet", message: "the row neither inserted nor found" }),
          )
        }
        return Either.map(Rows.decodeRow("insertOrGet", row), (stored) => ({
          record: stored,
          created: false,
        }))
      },

    /**
     * Compare-and-set: writes `next` where the stored version is the one before it; the row is
     * found by the record's own scope and key.
     */
    update: (next: HandleRecord, params: ReadonlyArray<unknown>) => (): Either.Either<WriteOutcome> =>
      Either.right(writeAll(next, params)),

    /**
     * `update` for a routine write (`HandleStore.UpdateOptions`): the narrow statement first; a
     * row it does not match (the version or another column differs, or the row is gone) goes
     * through `update`, which tells a lost compare-and-set from a column that changed.
     */
    updateRoutine:
      (next: HandleRecord, params: ReadonlyArray<unknown>) => (): Either.Either<WriteOutcome> => {
        const value = (column: Rows.Column) => params[Rows.columnIndex[column]]
        const narrow = compareAndSet(
          () =>
            updateRoutine.run(
              ...routineSet.map(value),
              ...spreadValues(next),
              value("scope"),
              value("key"),
              next.version - 1,
              ...routineKept.map(value),
            ).changes,
        )
        return Either.right(narrow === "version-conflict" ? writeAll(next, params) : narrow)
      },

    /**
     * Leases due rows; returns them as they were read (before the lease). Rows are decoded
     * before anything is written: a corrupt row fails the claim and leases nothing.
     */
    claimDue:
      ({ owner, now, leaseMs, limit, servers }: ClaimOptions) =>
      (): Either.Either<ReadonlyArray<HandleRecord>, StoreError> =>
        Either.map(
          Rows.decodeRows(
            "claimDue",
            due.all({ now, owner, limit, ...serverParams(servers) }) as Array<Rows.Row>,
          ),
          (records) =>
            records.filter(
              (record) =>
                lease.run(owner, now + leaseMs, record.scope, record.key, record.version).changes === 1,
            ),
        ),

    spreadDue: (options: SpreadOptions) => (): Either.Either<number> =>
      Either.right(
        spread.run({
          now: options.now,
          min: options.minIntervalMs,
          max: options.maxIntervalMs,
          default: options.defaultIntervalMs,
          seed: Math.floor(Math.random() * 4294967296),
          owner: options.owner,
          lease: options.leaseMs,
          takeOver: JSON.stringify(options.takeOver),
          limit: options.limit,
          ...serverParams(options.servers),
        }).changes,
      ),

    release: (scope: string, key: string, owner: string) => (): Either.Either<void> => {
      release.run(scope, key, owner)
      return Either.void
    },

    renewLease: (scope: string, key: string, owner: string, until: number) => (): Either.Either<boolean> =>
      Either.right(renew.run(until, scope, key, owner).changes === 1),

    renewLeases:
      ({ owner, rows, until }: RenewManyOptions) =>
      (): Either.Either<ReadonlyArray<{ readonly scope: string; readonly key: string }>> =>
        Either.right(
          rows.filter(({ scope, key }) => renewWatched.run({ until, scope, key, owner }).changes === 1),
        ),

    releaseOwner:
      ({ owner, now, minIntervalMs, maxIntervalMs, defaultIntervalMs }: ReleaseOwnerOptions) =>
      (): Either.Either<number> =>
        Either.right(
          releaseOwner.run({ owner, now, min: minIntervalMs, max: maxIntervalMs, default: defaultIntervalMs })
            .changes,
        ),

    /** Claims the due outcomes, read and written in one transaction of the writer. */
    claimOutcomes:
      (options: ClaimOutcomesOptions) => (): Either.Either<ReadonlyArray<OutcomeDelivery>, StoreError> => {
        const rows = dueOutcomes.all(options) as Array<Rows.Row & DeliveryColumns>
        const claimed: Array<OutcomeDelivery> = []
        for (const row of rows) {
          const decoded = Rows.decodeRow("claimOutcomes", row)
          if (Either.isLeft(decoded)) return Either.left(decoded.left)
          const record = decoded.right
          const state = claimedState(record, deliveryState(row), options)
          claimOutcome.run(
            options.consumer,
            record.scope,
            record.key,
            state.rest.status,
            state.rest.launches,
            state.member,
            state.leaseUntil,
            state.deliveries,
          )
          claimed.push({ consumer: options.consumer, record, deliveries: state.deliveries })
        }
        return Either.right(claimed)
      },

    ackOutcome: (options: AckOutcomeOptions) => (): Either.Either<boolean> =>
      Either.right(
        ackOutcome.run({
          consumer: options.consumer,
          scope: options.scope,
          key: options.key,
          status: options.rest?.status ?? null,
          launches: options.rest?.launches ?? null,
        }).changes === 1,
      ),

    releaseOutcomes: (consumer: string, member: string) => (): Either.Either<number> =>
      Either.right(releaseOutcomes.run(consumer, member).changes),
  }
}
