/**
 * The store's writes, as synchronous operations on the writer's own better-sqlite3 connection,
 * with statements prepared once. They run inside the writer's batch transaction (see
 * writer.ts); each keeps its own semantics there, so a lost compare-and-set fails only itself.
 */
import type { HandleRecord } from "@mcp-handles/core/HandleRecord"
import * as Record from "@mcp-handles/core/HandleRecord"
import { StoreError, VersionConflict } from "@mcp-handles/core/HandleStore"
import type Database from "better-sqlite3"
import * as Either from "effect/Either"
import * as Rows from "./rows.js"
import type { Transactor } from "./writer.js"

const openStatuses = "'pending', 'working', 'input_required'"
const terminalStatuses = Record.terminalStatuses.map((status) => `'${status}'`).join(", ")

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
    WHERE status IN (${openStatuses}) AND next_poll_at <= ?
      AND (lease_owner IS NULL OR lease_owner = ? OR lease_expires_at <= ?)
    ORDER BY next_poll_at, created_at, scope, key LIMIT ?`)
  const lease = db.prepare(`UPDATE handles SET lease_owner = ?, lease_expires_at = ?, version = version + 1
    WHERE scope = ? AND key = ? AND version = ?`)
  const release = db.prepare(`UPDATE handles SET lease_owner = NULL, lease_expires_at = NULL,
    version = version + 1 WHERE scope = ? AND key = ? AND lease_owner = ?`)
  const deleteSettled = db.prepare(`DELETE FROM handles
    WHERE status IN (${terminalStatuses}) AND settled_at < ?`)
  const deleteSettledInScope = db.prepare(`DELETE FROM handles
    WHERE status IN (${terminalStatuses}) AND settled_at < ? AND scope = ?`)

  const transactor: Transactor = {
    begin: () => void begin.run(),
    commit: () => void commit.run(),
    rollback: () => void rollback.run(),
  }

  return {
    transactor,

    /** Insert-or-get: the new record when this call created the row, else the stored one. */
    begin:
      (record: HandleRecord, params: ReadonlyArray<unknown>) =>
      (): Either.Either<{ readonly record: HandleRecord; readonly created: boolean }, StoreError> => {
        if (insert.run(...params).changes === 1) return Either.right({ record, created: true })
        const row = selectOne.get(record.scope, record.key) as Rows.Row | undefined
        if (row === undefined) {
          return Either.left(new StoreError({ operation: "begin", message: "the row vanished during begin" }))
        }
        return Either.map(Rows.decodeRow("begin", row), (stored) => ({ record: stored, created: false }))
      },

    /** Compare-and-set on `record.version`; the row is found by the record's own scope and key. */
    update:
      (record: HandleRecord, params: ReadonlyArray<unknown>) => (): Either.Either<void, VersionConflict> => {
        const [scope, key, ...rest] = params
        if (update.run(...rest, scope, key, record.version).changes === 1) return Either.void
        return Either.left(
          new VersionConflict({ scope: record.scope, key: record.key, expectedVersion: record.version }),
        )
      },

    /**
     * Leases due rows. Rows are decoded before anything is written: a corrupt row fails the
     * claim and leases nothing.
     */
    claimDue:
      (owner: string, now: number, leaseMs: number, limit: number) =>
      (): Either.Either<
        ReadonlyArray<{ readonly record: HandleRecord; readonly expiresAt: number }>,
        StoreError
      > =>
        Either.map(
          Rows.decodeRows("claimDue", due.all(now, owner, now, limit) as Array<Rows.Row>),
          (records) => {
            const expiresAt = now + leaseMs
            return records.flatMap((record) =>
              lease.run(owner, expiresAt, record.scope, record.key, record.version).changes === 1
                ? [{ record, expiresAt }]
                : [],
            )
          },
        ),

    release: (scope: string, key: string, owner: string) => (): Either.Either<void> => {
      release.run(scope, key, owner)
      return Either.void
    },

    deleteSettledBefore: (settledBefore: number, scope: string | undefined) => (): Either.Either<number> =>
      Either.right(
        scope === undefined
          ? deleteSettled.run(settledBefore).changes
          : deleteSettledInScope.run(settledBefore, scope).changes,
      ),
  }
}
