/**
 * The store's writes, as synchronous operations on the writer's own better-sqlite3 connection,
 * with statements prepared once. They run inside the writer's batch transaction (see
 * writer.ts); each keeps its own semantics there, so a lost compare-and-set fails only itself.
 */
import type { HandleRecord } from "@mcp-handles/core/HandleRecord"
import { type InsertOrGetResult, type SpreadOptions, StoreError } from "@mcp-handles/core/HandleStore"
import type { WriteOutcome } from "@mcp-handles/core/HandleStoreDriver"
import { openStatusList, terminalStatusList } from "@mcp-handles/core/SqlStore"
import type Database from "better-sqlite3"
import * as Either from "effect/Either"
import * as Rows from "./rows.js"
import type { Transactor } from "./writer.js"

export const make = (db: Database.Database) => {
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  const rollback = db.prepare("ROLLBACK")
  const insert = db.prepare(`INSERT INTO handles (${Rows.columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (scope, key) DO NOTHING`)
  const selectOne = db.prepare(`SELECT ${Rows.columns} FROM handles WHERE scope = ? AND key = ?`)
  const update = db.prepare(`UPDATE handles SET server_id = ?, status = ?, next_poll_at = ?, lease_owner = ?,
    lease_expires_at = ?, version = ?, created_at = ?, settled_at = ?, body = ?
    WHERE scope = ? AND key = ? AND version = ?`)
  // The status list must read exactly as in the handles_due_order index for SQLite to use it.
  const due = db.prepare(`SELECT ${Rows.columns} FROM handles
    WHERE status IN (${openStatusList}) AND next_poll_at <= ?
      AND (lease_owner IS NULL OR lease_owner = ? OR lease_expires_at <= ?)
    ORDER BY next_poll_at, created_at, scope, key LIMIT ?`)
  const lease = db.prepare(`UPDATE handles SET lease_owner = ?, lease_expires_at = ?, version = version + 1
    WHERE scope = ? AND key = ? AND version = ?`)
  const release = db.prepare(`UPDATE handles SET lease_owner = NULL, lease_expires_at = NULL,
    version = version + 1 WHERE scope = ? AND key = ? AND lease_owner = ?`)
  const renew = db.prepare(`UPDATE handles SET lease_expires_at = ?
    WHERE scope = ? AND key = ? AND lease_owner = ?`)
  const releaseOwner = db.prepare(`UPDATE handles SET lease_owner = NULL, lease_expires_at = NULL,
    version = version + 1 WHERE lease_owner = ? AND (next_poll_at IS NULL OR next_poll_at > ?)`)
  // The boot spread in one statement: no row is read back, decoded or written one at a time.
  // random() is evaluated per row; the lease runs to the end of the widest window plus leaseMs.
  const window = `(CASE WHEN json_type(body, '$.snapshot.pollIntervalMs') IN ('integer', 'real')
    THEN max(@min, min(@max, CAST(json_extract(body, '$.snapshot.pollIntervalMs') AS INTEGER)))
    ELSE @default END)`
  // SET expressions all see the row's old values, and random() would differ between them: the
  // offset is a multiplicative hash of the rowid and a per-call seed, the same in both places.
  const next = `(max(@now, next_poll_at + ${window}) + ((rowid * 2654435761 + @seed) % 4294967296) % ${window})`
  const spread = db.prepare(`UPDATE handles SET
      next_poll_at = ${next}, lease_owner = @owner, lease_expires_at = ${next} + @lease,
      version = version + 1
    WHERE rowid IN (SELECT rowid FROM handles
      WHERE status IN (${openStatusList}) AND status <> 'pending' AND next_poll_at <= @now
        AND (lease_owner IS NULL OR lease_owner = @owner
          OR lease_owner IN (SELECT value FROM json_each(@takeOver)) OR lease_expires_at <= @now)
        AND json_type(body, '$.taskId') = 'text'
        AND (json_type(body, '$.cancel') IS NOT 'object' OR json_extract(body, '$.cancel.sent') = 1)
      ORDER BY next_poll_at, created_at, scope, key LIMIT @limit)`)
  const deleteSettled = db.prepare(`DELETE FROM handles
    WHERE status IN (${terminalStatusList}) AND settled_at < ?`)
  const deleteSettledInScope = db.prepare(`DELETE FROM handles
    WHERE status IN (${terminalStatusList}) AND settled_at < ? AND scope = ?`)

  const transactor: Transactor = {
    begin: () => void begin.run(),
    commit: () => void commit.run(),
    rollback: () => void rollback.run(),
  }

  return {
    transactor,

    /** Insert-or-get: the new record when this call created the row, else the stored one. */
    insertOrGet:
      (record: HandleRecord, params: ReadonlyArray<unknown>) =>
      (): Either.Either<InsertOrGetResult, StoreError> => {
        if (insert.run(...params).changes === 1) return Either.right({ record, created: true })
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
    update: (next: HandleRecord, params: ReadonlyArray<unknown>) => (): Either.Either<WriteOutcome> => {
      const [scope, key, ...rest] = params
      let changes: number
      try {
        changes = update.run(...rest, scope, key, next.version - 1).changes
      } catch (error) {
        // Only this statement is undone; the batch's other writes stand.
        if ((error as { code?: unknown }).code !== "SQLITE_CONSTRAINT_UNIQUE") throw error
        return Either.right("task-id-taken")
      }
      return Either.right(changes === 1 ? "written" : "version-conflict")
    },

    /**
     * Leases due rows; returns them as they were read (before the lease). Rows are decoded
     * before anything is written: a corrupt row fails the claim and leases nothing.
     */
    claimDue:
      (owner: string, now: number, leaseMs: number, limit: number) =>
      (): Either.Either<ReadonlyArray<HandleRecord>, StoreError> =>
        Either.map(
          Rows.decodeRows("claimDue", due.all(now, owner, now, limit) as Array<Rows.Row>),
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
        }).changes,
      ),

    release: (scope: string, key: string, owner: string) => (): Either.Either<void> => {
      release.run(scope, key, owner)
      return Either.void
    },

    renewLease: (scope: string, key: string, owner: string, until: number) => (): Either.Either<boolean> =>
      Either.right(renew.run(until, scope, key, owner).changes === 1),

    releaseOwner: (owner: string, now: number) => (): Either.Either<number> =>
      Either.right(releaseOwner.run(owner, now).changes),

    deleteSettledBefore: (settledBefore: number, scope: string | undefined) => (): Either.Either<number> =>
      Either.right(
        scope === undefined
          ? deleteSettled.run(settledBefore).changes
          : deleteSettledInScope.run(settledBefore, scope).changes,
      ),
  }
}
