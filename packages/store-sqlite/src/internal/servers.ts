/**
 * Servers (issues 15 item 7 and 16): the `servers` table's statements, prepared once on the
 * writer's connection; each write runs inside the writer's batch transaction like every other.
 */
import type { RebindOptions, SeenServer, ServerRecord } from "@mcp-handles/core/HandleStore"
import { type RebindOutcome, ServerRow } from "@mcp-handles/core/HandleStoreDriver"
import type Database from "better-sqlite3"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

export const columns = "name, url, id, first_seen_at AS firstSeenAt, last_seen_at AS lastSeenAt"

const decodeServers = Schema.decodeUnknownEither(Schema.Array(ServerRow))

/** Rows read back from the table, decoded: a hand-edited table is outside input. */
export const decode = (rows: unknown): Either.Either<ReadonlyArray<ServerRecord>, Error> =>
  Either.mapLeft(
    decodeServers(rows),
    (error) => new Error(`stored servers are not valid: ${ParseResult.TreeFormatter.formatErrorSync(error)}`),
  )

export const make = (db: Database.Database) => {
  const upsert = db.prepare(`INSERT INTO servers (name, url, id, first_seen_at, last_seen_at)
    VALUES (@name, @url, @id, @now, @now)
    ON CONFLICT (name) DO UPDATE SET url = excluded.url, id = excluded.id,
      last_seen_at = max(last_seen_at, excluded.last_seen_at)
    RETURNING ${columns}`)
  const remove = db.prepare("DELETE FROM servers WHERE name = ?")
  const clash = db.prepare(`SELECT a.scope, a.key FROM handles a
    WHERE a.server_id = @from AND (@scope IS NULL OR a.scope = @scope)
      AND a.task_id IS NOT NULL
      AND EXISTS (SELECT 1 FROM handles b WHERE b.server_id = @to AND b.task_id = a.task_id)
    LIMIT 1`)
  const move = db.prepare(`UPDATE handles SET server_id = @to, version = version + 1
    WHERE server_id = @from AND (@scope IS NULL OR scope = @scope)`)

  return {
    record: (seen: SeenServer) => (): Either.Either<ServerRecord, Error> =>
      Either.flatMap(decode([upsert.get(seen)]), ([server]) =>
        server === undefined ? Either.left(new Error("the upsert returned no row")) : Either.right(server),
      ),

    remove: (name: string) => (): Either.Either<boolean> => Either.right(remove.run(name).changes > 0),

    /** Checked and moved in one write of the batch: nothing moves when a task id would clash. */
    rebind:
      ({ from, to, scope }: RebindOptions) =>
      (): Either.Either<RebindOutcome> => {
        const params = { from, to, scope: scope ?? null }
        const taken = clash.get(params) as { scope: string; key: string } | undefined
        return Either.right(taken === undefined ? { moved: move.run(params).changes } : { taken })
      },
  }
}
