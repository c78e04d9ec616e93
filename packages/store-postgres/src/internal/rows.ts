/**
 * How a HandleRecord maps onto a row. The fields the database filters, orders or locks on are
 * real columns; everything else lives in one `json` body. Rows coming back are decoded through
 * the record's schema: a row that does not decode is corrupt, never trusted.
 *
 * @internal
 */
import type * as CallStore from "@mcp-handles/core/CallStore"
import { RowStamp } from "@mcp-handles/core/CallStoreDriver"
import { HandleRecord } from "@mcp-handles/core/HandleRecord"
import { fromColumns } from "@mcp-handles/core/SqlStore"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** The columns every query returns, in a fixed order. `body` comes back as text (see below). */
export const selectColumns =
  "id, scope, key, server_id, status, next_poll_at, lease_owner, lease_expires_at, version, created_at, settled_at, body::text AS body, write_id::text AS write_id"

/**
 * A number as the driver may hand it over: `double precision` arrives as a number, `bigint` as a
 * string (pg's default, to avoid silent precision loss), or as a bigint with custom type parsers.
 */
const DbNumber = Schema.Union(
  Schema.Number,
  Schema.NumberFromString,
  Schema.BigIntFromSelf.pipe(
    Schema.transformOrFail(Schema.Number, {
      strict: true,
      decode: (n, _, ast) =>
        n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER)
          ? ParseResult.succeed(Number(n))
          : ParseResult.fail(new ParseResult.Type(ast, n, "bigint out of range")),
      encode: (n) => ParseResult.succeed(BigInt(n)),
    }),
  ),
)

/**
 * The body is read as text and parsed here rather than by the driver, so a client configured
 * with other type parsers (or name transforms) cannot change what we decode.
 */
const Body = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

const Row = Schema.Struct({
  id: DbNumber,
  scope: Schema.String,
  key: Schema.String,
  server_id: Schema.String,
  status: Schema.String,
  next_poll_at: Schema.NullOr(DbNumber),
  lease_owner: Schema.NullOr(Schema.String),
  lease_expires_at: Schema.NullOr(DbNumber),
  version: DbNumber,
  created_at: DbNumber,
  settled_at: Schema.NullOr(DbNumber),
  body: Body,
  write_id: Schema.NullOr(Schema.String),
})

/** A decoded row: the record plus the columns only the adapter sees. */
export interface StoredRow {
  readonly id: number
  readonly writeId: string | null
  readonly record: HandleRecord
}

const decodeRowUnknown = Schema.decodeUnknown(Row)
const decodeRecord = Schema.decodeUnknown(HandleRecord)
const encodeRecord = Schema.encode(HandleRecord)

/** Column fields win over anything a body might claim for the same name. */
export const decodeRow = (raw: unknown): Effect.Effect<StoredRow, ParseResult.ParseError> =>
  Effect.flatMap(decodeRowUnknown(raw), (row) =>
    Effect.map(
      decodeRecord(fromColumns(row.body, row)),
      (record): StoredRow => ({ id: row.id, writeId: row.write_id, record }),
    ),
  )

const Stamp = Schema.Struct({
  version: DbNumber,
  lease_owner: Schema.NullOr(Schema.String),
  lease_expires_at: Schema.NullOr(DbNumber),
  next_poll_at: Schema.NullOr(DbNumber),
})
const decodeStampColumns = Schema.decodeUnknown(Stamp)
const decodeRowStamp: (raw: unknown) => Effect.Effect<CallStore.RowStamp, ParseResult.ParseError> =
  Schema.decodeUnknown(RowStamp)

/** A row's stamp (`peek`) from its columns, under the record's rules for those fields. */
export const decodeStamp = (raw: unknown): Effect.Effect<CallStore.RowStamp, ParseResult.ParseError> =>
  Effect.flatMap(decodeStampColumns(raw), (row) =>
    decodeRowStamp({
      version: row.version,
      leaseOwner: row.lease_owner,
      leaseExpiresAt: row.lease_expires_at,
      nextPollAt: row.next_poll_at,
    }),
  )

/** The values written for a record: column values plus the JSON text of the body. */
export interface RowValues {
  readonly scope: string
  readonly key: string
  readonly serverId: string
  readonly status: string
  readonly nextPollAt: number | null
  readonly leaseOwner: string | null
  readonly leaseExpiresAt: number | null
  readonly version: number
  readonly createdAt: number
  readonly settledAt: number | null
  readonly body: string
}

export const encodeRow = (record: HandleRecord): Effect.Effect<RowValues, ParseResult.ParseError> =>
  Effect.map(encodeRecord(record), (encoded) => {
    const {
      scope,
      key,
      serverId,
      status,
      nextPollAt,
      leaseOwner,
      leaseExpiresAt,
      version,
      createdAt,
      settledAt,
      ...body
    } = encoded
    return {
      scope,
      key,
      serverId,
      status,
      nextPollAt,
      leaseOwner,
      leaseExpiresAt,
      version,
      createdAt,
      settledAt,
      body: JSON.stringify(body),
    }
  })
