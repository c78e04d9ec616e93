/**
 * What each command prints with `--json`: one schema per command, written down here and nowhere
 * else. Every command encodes its output through its schema, so what it prints cannot drift
 * from what is documented; a script can decode it with the same schema.
 *
 * The rules all of them follow: one JSON document on one line (`list --watch --json`: one per
 * refresh), camelCase field names that never change meaning, times as ISO 8601 strings, `null`
 * rather than a missing field, a call's server by its name (`server`) everywhere, and task ids
 * redacted unless `--reveal`.
 *
 * @since 0.2.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import { JsonObject, JsonValue } from "@mcp-handles/core/Json"
import * as Schema from "effect/Schema"

const Time = Schema.String.annotations({ description: "ISO 8601, UTC" })

/**
 * One stored call, as `list`, `show`, `cancel` and `abandon` print it.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Row = Schema.Struct({
  key: Schema.String,
  scope: Schema.String,
  /** The server's name (what rows and `--server NAME=URL` call it). */
  server: Schema.String,
  /** The URL the store's servers table has for it (by identity, else by name); null when none. */
  serverUrl: Schema.NullOr(Schema.String),
  /** The identity rows store: the name and a hash of the URL. */
  serverId: Schema.String,
  tool: Schema.String,
  status: HandleRecord.Status,
  /** Redacted (`13d8…c3`) unless `--reveal`: task ids may be bearer credentials. */
  taskId: Schema.NullOr(Schema.String),
  statusMessage: Schema.NullOr(Schema.String),
  pollIntervalMs: Schema.NullOr(Schema.Number),
  ttlMs: Schema.NullOr(Schema.Number),
  /** Null when only their hash was stored. */
  /** `"encrypted"` when the store is and the CLI was not given its keys (so for the others). */
  arguments: Schema.NullOr(Schema.Union(JsonObject, Schema.Literal("encrypted"))),
  argumentsHash: Schema.String,
  result: Schema.NullOr(Schema.Union(JsonObject, Schema.Literal("encrypted"))),
  error: Schema.NullOr(
    Schema.Struct({ code: Schema.Number, message: Schema.String, data: Schema.NullOr(JsonValue) }),
  ),
  /** The input requests the server has outstanding, by request key. */
  inputRequests: Schema.NullOr(
    Schema.Union(Schema.Record({ key: Schema.String, value: JsonValue }), Schema.Literal("encrypted")),
  ),
  answeredInputKeys: Schema.Array(Schema.String),
  cancel: Schema.NullOr(Schema.Struct({ requestedAt: Time, sent: Schema.Boolean })),
  /** Times `tools/call` was sent for this key: 1, more only by `reissue`. */
  launches: Schema.Number,
  /** Failed attempts in a row since the last good answer. */
  attempts: Schema.Number,
  /** Polls the server answered for the call's task (0 for rows written before they were counted). */
  polls: Schema.Number,
  lastProblem: Schema.NullOr(Schema.String),
  /** The instance holding the row's lease, while the lease lasts (`leaseExpiresAt`). */
  owner: Schema.NullOr(Schema.String),
  leaseExpiresAt: Schema.NullOr(Time),
  /**
   * When a driver last acted on the open call (a poll, an answer or a cancel: the row's last
   * write); null before the server handed out a task id.
   */
  lastPolledAt: Schema.NullOr(Time),
  nextPollAt: Schema.NullOr(Time),
  /** Why the call looks stuck (see `list --stuck`); null when it does not. */
  stuck: Schema.NullOr(Schema.String),
  createdAt: Time,
  updatedAt: Time,
  settledAt: Schema.NullOr(Time),
})

/**
 * @since 0.2.0
 * @category models
 */
export type Row = typeof Row.Type

/**
 * How a followed call ended, or why following it stopped. `null`: not followed (`--detach`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const Outcome = Schema.NullOr(
  Schema.Literal("Completed", "Failed", "Cancelled", "Expired", "InDoubt", "WaitingForInput"),
)

/**
 * A call that `call`, `reissue` or `resume` followed: the row as it ended, what ended the
 * following, and the input keys nobody here could answer.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Followed = Schema.Struct({
  ...Row.fields,
  outcome: Outcome,
  /** Input request keys this process could not answer (`outcome: "WaitingForInput"`). */
  waitingFor: Schema.Array(Schema.String),
})

/**
 * @since 0.2.0
 * @category models
 */
export type Followed = typeof Followed.Type

/**
 * `mcp-handles call --json` (also with `--detach`: then `outcome` is null).
 *
 * @since 0.2.0
 * @category schemas
 */
export const Call = Followed

/**
 * `mcp-handles reissue --json`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Reissue = Followed

/**
 * `mcp-handles list --json`: the rows, oldest first. With `--watch`, one such array per line.
 *
 * @since 0.2.0
 * @category schemas
 */
export const List = Schema.Array(Row)

/**
 * One status change of a call, oldest first (`HandleRecord.history`).
 *
 * @since 0.3.0
 * @category schemas
 */
export const HistoryEntry = Schema.Struct({
  at: Time,
  /** Null for the first entry: the call's intent written. */
  from: Schema.NullOr(HandleRecord.Status),
  to: HandleRecord.Status,
  /** What made it change: the transition's event (`Polled`, `CallInDoubt`, `Reissued`, ...). */
  cause: Schema.String,
  /** The instance that wrote it. */
  instance: Schema.NullOr(Schema.String),
})

/**
 * `mcp-handles show --json`: the row and its history.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Show = Schema.Struct({ ...Row.fields, history: Schema.Array(HistoryEntry) })

/**
 * `mcp-handles cancel --json`: the row once the wait ended.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Cancel = Row

/**
 * `mcp-handles abandon --json`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Abandon = Row

/**
 * `mcp-handles resume --json`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Resume = Schema.Struct({
  reconciled: Schema.Struct({ resumed: Schema.Number, inDoubt: Schema.Number, reissued: Schema.Number }),
  /** Every open call it followed, as each ended. */
  calls: Schema.Array(Followed),
  /** The calls in doubt in the scope once it finished: decide each with reissue or abandon. */
  inDoubt: Schema.Array(Row),
  /** Open calls it could not follow: their server is not in this store's server list. */
  skipped: Schema.Array(Row),
})

/**
 * @since 0.2.0
 * @category models
 */
export type Resume = typeof Resume.Type

/**
 * `mcp-handles servers --json`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Servers = Schema.Struct({
  /** Every server the store knows once the changes are made, by name. */
  servers: Schema.Array(
    Schema.Struct({
      name: Schema.String,
      /** Without credentials: the store never holds them. */
      url: Schema.String,
      /** The identity calls written against this URL carry (`name:hash`). */
      id: Schema.String,
      firstSeenAt: Time,
      lastSeenAt: Time,
    }),
  ),
  /** The names `--remove` forgot. */
  removed: Schema.Array(Schema.String),
  /** Calls `--rebind` moved (0 without it). */
  rebound: Schema.Number,
})

/**
 * `mcp-handles tools --json`: the server asked, and its tools as `tools/list` gave them.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Tools = Schema.Struct({
  /** The server's name (for a URL, the name `call` would record it under). */
  server: Schema.String,
  url: Schema.String,
  tools: Schema.Array(
    Schema.Struct({
      name: Schema.String,
      title: Schema.NullOr(Schema.String),
      description: Schema.NullOr(Schema.String),
      /** `execution.taskSupport` as advertised; null when the server gives none (never a task). */
      taskSupport: Schema.NullOr(Schema.String),
      /** The tool's `idempotentHint` annotation (false when absent). */
      idempotent: Schema.Boolean,
      /** The tool's input schema, whole; null when it sent none that is a JSON object. */
      inputSchema: Schema.NullOr(JsonObject),
    }),
  ),
})

/**
 * `mcp-handles rekey --json`: one line per batch, then the last.
 *
 * @since 0.5.0
 * @category schemas
 */
export const Rekey = Schema.Struct({
  /** The key every re-sealed row is under now. */
  keyId: Schema.String,
  examined: Schema.Number,
  rekeyed: Schema.Number,
  skipped: Schema.Number,
  /** Where to resume (`--from`); null once every row was read. */
  cursor: Schema.NullOr(Schema.String),
  /** False on a batch's progress line, true on the last line. */
  done: Schema.Boolean,
})

/**
 * `mcp-handles gc --json`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Gc = Schema.Struct({
  deleted: Schema.Number,
  olderThan: Schema.String,
  /** The scope swept; null with `--all-scopes`. */
  scope: Schema.NullOr(Schema.String),
  /** Settled calls old enough to go, kept because a known consumer has not acknowledged them. */
  kept: Schema.Number,
  /** Per consumer and scope, the deleted calls it had not acknowledged (past `--consumer-retention`). */
  unacknowledged: Schema.Array(
    Schema.Struct({ consumer: Schema.String, scope: Schema.String, outcomes: Schema.Number }),
  ),
  /** The names `--forget-consumer` forgot (those the store knew in the scope swept). */
  forgotten: Schema.Array(Schema.String),
})

/**
 * `value` as one line of JSON, encoded through `schema` (fields it does not name are left out).
 *
 * @since 0.2.0
 */
export const encode = <A, I>(schema: Schema.Schema<A, I>, value: A): string =>
  JSON.stringify(Schema.encodeSync(schema)(value))

/**
 * Writes `value` as one line of JSON on stdout, encoded through `schema`.
 *
 * @since 0.2.0
 */
export const json = <A, I>(schema: Schema.Schema<A, I>, value: A): void => {
  process.stdout.write(`${encode(schema, value)}\n`)
}

/**
 * Writes a line of text on stdout.
 *
 * @since 0.2.0
 */
export const line = (text = ""): void => {
  process.stdout.write(`${text}\n`)
}
