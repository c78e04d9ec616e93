/**
 * Mapping between a HandleRecord and its row. Rows are decoded through the HandleRecord schema:
 * a database is outside input (another process, another version, a hand edit) and its shape is
 * never trusted.
 */

import type * as CallStore from "@mcp-handles/core/CallStore"
import { RowStamp } from "@mcp-handles/core/CallStoreDriver"
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import { StoreError } from "@mcp-handles/core/HandleStore"
import { fromColumns, type IndexedColumns } from "@mcp-handles/core/SqlStore"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const columnList = [
  "scope",
  "key",
  "server_id",
  "status",
  "next_poll_at",
  "lease_owner",
  "lease_expires_at",
  "version",
  "created_at",
  "settled_at",
  "body",
  "task_id",
] as const

export type Column = (typeof columnList)[number]

/** Column order shared by every SELECT and INSERT, and of `toParams`'s values. */
export const columns: string = columnList.join(", ")

/** One `?` per column, for an INSERT of `toParams`'s values. */
export const placeholders: string = columnList.map(() => "?").join(", ")

/** Where each column's value is among `toParams`'s. */
export const columnIndex = Object.fromEntries(columnList.map((column, i) => [column, i])) as Record<
  Column,
  number
>

export interface Row extends IndexedColumns {
  readonly body: unknown
}

const numbersOf = (record: HandleRecord): ReadonlyArray<number | null | undefined> => [
  record.nextPollAt,
  record.leaseExpiresAt,
  record.version,
  record.createdAt,
  record.settledAt,
  record.updatedAt,
  record.stuckSince,
  record.attempts,
  record.pollsWithoutInterval,
  record.launches,
  record.polls,
  record.snapshot?.pollIntervalMs,
  record.snapshot?.ttlMs,
  record.snapshot?.createdAt,
  record.snapshot?.lastUpdatedAt,
  record.error?.code,
  record.cancel?.requestedAt,
]

/**
 * The row's values in `columns` order, or a StoreError when the record holds something that
 * would not read back (NaN and infinities become NULL in SQLite and JSON). JSON values inside
 * the record are already finite: the record's schema checks them on construction.
 */
export const toParams = (
  operation: string,
  record: HandleRecord,
): Either.Either<Array<unknown>, StoreError> => {
  for (const n of numbersOf(record)) {
    if (typeof n === "number" && !Number.isFinite(n)) {
      return Either.left(
        new StoreError({
          operation,
          message: `record ${JSON.stringify(record.key)} holds a non-finite number (${n}), which cannot be stored`,
        }),
      )
    }
  }
  const body = {
    tool: record.tool,
    arguments: record.arguments,
    argumentsHash: record.argumentsHash,
    taskId: record.taskId,
    snapshot: record.snapshot,
    result: record.result,
    error: record.error,
    inputRequests: record.inputRequests,
    answers: record.answers,
    stuckSince: record.stuckSince,
    cancel: record.cancel,
    strayTasks: record.strayTasks,
    attempts: record.attempts,
    pollsWithoutInterval: record.pollsWithoutInterval,
    launches: record.launches,
    polls: record.polls,
    lastProblem: record.lastProblem,
    updatedAt: record.updatedAt,
    history: record.history,
    progress: record.progress,
  }
  return Either.right([
    record.scope,
    record.key,
    record.serverId,
    record.status,
    record.nextPollAt,
    record.leaseOwner,
    record.leaseExpiresAt,
    record.version,
    record.createdAt,
    record.settledAt,
    JSON.stringify(body),
    // The body's task id again, as the column its unique index reads (the body stays the record).
    record.taskId,
  ])
}

const decodeRecord = Schema.decodeUnknownEither(HandleRecord)

const corrupt = (operation: string, row: Partial<Row>, detail: string) =>
  new StoreError({
    operation,
    message: `stored row ${JSON.stringify(row.scope)}/${JSON.stringify(row.key)} is not a valid record: ${detail}`,
  })

/** Decodes one row; a row that does not decode is a StoreError naming it, never a partial record. */
export const decodeRow = (operation: string, row: Row): Either.Either<HandleRecord, StoreError> => {
  let body: unknown
  try {
    body = typeof row.body === "string" ? JSON.parse(row.body) : undefined
  } catch (error) {
    return Either.left(corrupt(operation, row, `body is not JSON (${String(error)})`))
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return Either.left(corrupt(operation, row, "body is not a JSON object"))
  }
  return decodeRecord(fromColumns(body, row)).pipe(
    Either.mapLeft((error) =>
      corrupt(operation, row, ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 2000)),
    ),
  )
}

const decodeStampEither = Schema.decodeUnknownEither(RowStamp)

/** A row's stamp (`peek`), decoded; a StoreError when its columns hold what a record would refuse. */
export const decodeStamp = (row: unknown): Either.Either<CallStore.RowStamp, StoreError> =>
  Either.mapLeft(
    decodeStampEither(row),
    (error) =>
      new StoreError({
        operation: "peek",
        message: `stored row's version or lease is not valid: ${ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 2000)}`,
      }),
  )

/** All rows decoded, or the first that does not decode. */
export const decodeRows = (
  operation: string,
  rows: ReadonlyArray<Row>,
): Either.Either<Array<HandleRecord>, StoreError> => {
  const records: Array<HandleRecord> = []
  for (const row of rows) {
    const decoded = decodeRow(operation, row)
    if (Either.isLeft(decoded)) return Either.left(decoded.left)
    records.push(decoded.right)
  }
  return Either.right(records)
}
