/**
 * A stored call as the CLI shows it: the `Output.Row` every `--json` prints, and the text views
 * built from it (the `list` table). The server is named by its name everywhere.
 *
 * @since 0.2.0
 */
import * as EncryptedStore from "@mcp-handles/core/EncryptedStore"
import type * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as ToolResult from "@mcp-handles/core/ToolResult"
import type * as Output from "./Output.js"
import * as Render from "./Render.js"
import * as ServerRegistry from "./ServerRegistry.js"
import * as Stuck from "./Stuck.js"

/**
 * What a row needs besides the record.
 *
 * @since 0.2.0
 * @category models
 */
export interface Context {
  readonly reveal: boolean
  readonly servers: ReadonlyArray<ServerRegistry.KnownServer>
  /** The store's clock, for `stuck`. */
  readonly now: number
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

/**
 * @since 0.2.0
 * @category constructors
 */
export const make = (record: HandleRecord.HandleRecord, context: Context): Output.Row => {
  // Every string of the row (a key adopted under its task id, a result's related-task `_meta`,
  // an error quoting the id) is redacted with the ids the row holds.
  Render.known.addRecord(record)
  const row = view(record, context)
  return context.reveal ? row : Render.known.value(row)
}

/** A field sealed in the store, read without its keys (`--key-env`/`--key-file`): shown as this. */
const encrypted = "encrypted" as const
const sealed = EncryptedStore.isSealedValue

const view = (record: HandleRecord.HandleRecord, context: Context): Output.Row => {
  const server = ServerRegistry.serverOf(record.serverId, context.servers)
  return {
    key: record.key,
    scope: record.scope,
    server: ServerRegistry.displayName(record.serverId),
    serverUrl: server?.url ?? null,
    serverId: record.serverId,
    tool: record.tool,
    status: record.status,
    taskId:
      record.taskId === null
        ? null
        : sealed(record.taskId)
          ? encrypted
          : Render.taskId(record.taskId, context.reveal),
    statusMessage: record.snapshot?.statusMessage ?? null,
    pollIntervalMs: record.snapshot?.pollIntervalMs ?? null,
    ttlMs: record.snapshot?.ttlMs ?? null,
    arguments: sealed(record.arguments) ? encrypted : record.arguments,
    argumentsHash: sealed(record.argumentsHash) ? encrypted : record.argumentsHash,
    result:
      record.result === null ? null : sealed(record.result) ? encrypted : ToolResult.encode(record.result),
    error:
      record.error === null
        ? null
        : { code: record.error.code, message: record.error.message, data: record.error.data ?? null },
    inputRequests: sealed(record.inputRequests) ? encrypted : record.inputRequests,
    answeredInputKeys: sealed(record.answers) ? [encrypted] : Object.keys(record.answers),
    cancel:
      record.cancel === null
        ? null
        : { requestedAt: new Date(record.cancel.requestedAt).toISOString(), sent: record.cancel.sent },
    launches: record.launches,
    attempts: record.attempts,
    polls: record.polls,
    lastProblem: record.lastProblem,
    owner: owner(record, context.now),
    leaseExpiresAt: iso(record.leaseExpiresAt),
    lastPolledAt: iso(lastPolledAt(record)),
    nextPollAt: iso(record.nextPollAt),
    stuck: Stuck.reason(record, context.now) ?? null,
    createdAt: new Date(record.createdAt).toISOString(),
    updatedAt: new Date(record.updatedAt).toISOString(),
    settledAt: iso(record.settledAt),
  }
}

/**
 * When a driver last acted on the task: once a task id is known, every poll, answer and cancel
 * writes the row (a lease claim does not touch `updatedAt`), so its last write is its last poll.
 *
 * @since 0.2.0
 */
export const lastPolledAt = (record: HandleRecord.HandleRecord): number | null =>
  record.taskId === null ? null : (record.settledAt ?? record.updatedAt)

/**
 * The instance driving the call: the lease's owner while the lease lasts. A lease that ran out
 * (its process detached, died or hung) names nobody.
 *
 * @since 0.2.0
 */
export const owner = (record: HandleRecord.HandleRecord, now: number): string | null =>
  record.leaseOwner !== null && (record.leaseExpiresAt === null || record.leaseExpiresAt >= now)
    ? record.leaseOwner
    : null

/** "in 3s", "4s ago", "-". */
const relative = (at: number | null, now: number): string =>
  at === null ? "-" : at >= now ? `in ${Render.age(now, at)}` : `${Render.age(at, now)} ago`

/**
 * The `list` table: one line per call.
 *
 * @since 0.2.0
 */
export const table = (
  records: ReadonlyArray<HandleRecord.HandleRecord>,
  context: Context,
  options: { readonly stuck: boolean; readonly allScopes?: boolean | undefined },
): string => {
  const open = (r: HandleRecord.HandleRecord) => r.settledAt === null && r.status !== "in_doubt"
  // Across scopes a key is not unique: the scope leads.
  const scoped = options.allScopes === true
  return Render.table(
    [
      ...(scoped ? ["SCOPE"] : []),
      "KEY",
      "STATUS",
      "TOOL",
      "SERVER",
      "TASK",
      "OWNER",
      "LAST POLL",
      "NEXT POLL",
      "POLLS",
      "AGE",
      "NOTE",
    ],
    records.map((r) => {
      // Each row is shown with its own ids shortened (its key may be `adopted:{taskId}`, its
      // note may quote the id), whatever else this process met.
      Render.known.addRecord(r)
      const cells = [
        ...(scoped ? [r.scope] : []),
        r.key,
        Render.status(r),
        r.tool,
        ServerRegistry.displayName(r.serverId),
        Render.taskId(r.taskId, context.reveal),
        owner(r, context.now) ?? "-",
        relative(lastPolledAt(r), context.now),
        open(r) ? relative(r.nextPollAt, context.now) : "-",
        String(r.polls),
        Render.age(r.createdAt, context.now),
        // A reason is what --stuck is for: it is shown whole.
        (options.stuck ? Stuck.reason(r, context.now) : undefined) ??
          Render.truncate(Render.shown(Render.note(r), context.reveal), 80),
      ]
      return cells.map((cell) => Render.shown(cell, context.reveal))
    }),
  )
}
