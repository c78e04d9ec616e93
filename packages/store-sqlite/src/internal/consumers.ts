/**
 * Consumers (issue 28): the `consumers` table and GC, which waits for them. Statements are
 * prepared once on the writer's connection; each write runs inside the writer's batch
 * transaction like every other, so a sweep reads what it reports and deletes in one transaction.
 */
import type {
  ClaimOutcomesOptions,
  ConsumerRecord,
  ForgetConsumerOptions,
  GcOptions,
  GcReport,
  UnacknowledgedOutcomes,
} from "@mcp-handles/core/HandleStore"
import { ConsumerRow } from "@mcp-handles/core/HandleStoreDriver"
import { terminalStatusList } from "@mcp-handles/core/SqlStore"
import type Database from "better-sqlite3"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

export const columns = "consumer, scope, first_seen_at AS firstSeenAt, last_seen_at AS lastSeenAt"

const decodeConsumers = Schema.decodeUnknownEither(Schema.Array(ConsumerRow))

/** Rows read back from the table, decoded: a hand-edited table is outside input. */
export const decode = (rows: unknown): Either.Either<ReadonlyArray<ConsumerRecord>, Error> =>
  Either.mapLeft(
    decodeConsumers(rows),
    (error) =>
      new Error(`stored consumers are not valid: ${ParseResult.TreeFormatter.formatErrorSync(error)}`),
  )

/**
 * A terminal row of `handles` old enough for the sweep (`GcOptions` as named parameters). One with
 * a due time still has a stray task to cancel: it is that task's only record, never collected.
 */
const oldEnough = `handles.status IN (${terminalStatusList}) AND handles.settled_at < @before
  AND handles.next_poll_at IS NULL AND (@scope IS NULL OR handles.scope = @scope)`
/** Settled before `unacknowledgedBefore`: taken whoever has not acknowledged it. */
const pastConsumers = "(@past IS NOT NULL AND handles.settled_at < @past)"
/** Consumer `c` has acknowledged the rest the row of `handles` is in now. */
const acknowledged = `EXISTS (SELECT 1 FROM outcome_deliveries d
  WHERE d.consumer = c.consumer AND d.scope = handles.scope AND d.key = handles.key
    AND d.acked = 1 AND d.status = handles.status AND d.launches = json_extract(handles.body, '$.launches'))`
/** A consumer known in the row's scope has not acknowledged it. */
const held = `EXISTS (SELECT 1 FROM consumers c WHERE c.scope = handles.scope AND NOT ${acknowledged})`

export const make = (db: Database.Database) => {
  const seen = db.prepare(`INSERT INTO consumers (scope, consumer, first_seen_at, last_seen_at)
    VALUES (@scope, @consumer, @now, @now)
    ON CONFLICT (scope, consumer) DO UPDATE SET last_seen_at = max(last_seen_at, excluded.last_seen_at)`)
  const forget = db.prepare(`DELETE FROM consumers
    WHERE consumer = @consumer AND (@scope IS NULL OR scope = @scope)`)
  const forgetDeliveries = db.prepare(`DELETE FROM outcome_deliveries
    WHERE consumer = @consumer AND (@scope IS NULL OR scope = @scope)`)
  const unacknowledged =
    db.prepare(`SELECT c.consumer AS consumer, handles.scope AS scope, count(*) AS outcomes
    FROM handles JOIN consumers c ON c.scope = handles.scope
    WHERE ${oldEnough} AND ${pastConsumers} AND NOT ${acknowledged}
    GROUP BY c.consumer, handles.scope`)
  const kept = db.prepare(`SELECT count(*) AS n FROM handles
    WHERE ${oldEnough} AND NOT ${pastConsumers} AND ${held}`)
  const collect = db.prepare(`DELETE FROM handles WHERE ${oldEnough} AND (${pastConsumers} OR NOT ${held})`)

  return {
    /** Part of a claim: the consumer is known in the claim's scope from now on. */
    seen: (options: ClaimOutcomesOptions): void =>
      void seen.run({ scope: options.scope, consumer: options.consumer, now: options.now }),

    forget:
      ({ consumer, scope }: ForgetConsumerOptions) =>
      (): Either.Either<number> => {
        const params = { consumer, scope: scope ?? null }
        forgetDeliveries.run(params)
        return Either.right(forget.run(params).changes)
      },

    /** Reports, counts what it keeps, then deletes: one transaction, so all three agree. */
    collect: (options: GcOptions) => (): Either.Either<GcReport> => {
      const params = {
        before: options.settledBefore,
        scope: options.scope ?? null,
        past: options.unacknowledgedBefore ?? null,
      }
      const report = unacknowledged.all(params) as Array<UnacknowledgedOutcomes>
      const { n } = kept.get(params) as { readonly n: number }
      return Either.right({ deleted: collect.run(params).changes, kept: n, unacknowledged: report })
    },
  }
}
