/**
 * One live process per instance id on a database file: a row of the `instances` table names the
 * process holding each id by pid, host and a random token of that process. The row is read and
 * taken inside one write transaction (BEGIN IMMEDIATE), so of any number of processes finding a
 * stale holder at once, exactly one takes the id: the others see its row. A holder whose process
 * is gone (a crash, SIGKILL) is stale at once on its host; another host's holder, whose pid
 * cannot be asked, is stale once its heartbeat stops. A second client of this process is refused
 * before the database is asked (see `InstanceHold`).
 */
import * as crypto from "node:crypto"
import * as os from "node:os"
import * as path from "node:path"
import { InstanceIdInUse, type InstanceRecord, StoreError } from "@mcp-handles/core/HandleStore"
import * as InstanceHold from "@mcp-handles/core/InstanceHold"
import type Database from "better-sqlite3"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

/** How often a holder writes its heartbeat. */
const heartbeatMs = 10_000
/** A holder on another host whose heartbeat is older than this is stale (a few missed beats). */
export const staleAfterMs = 60_000

/** This process as its lock rows name it. The token tells it apart from a process that had its pid. */
const me = { token: crypto.randomUUID(), pid: process.pid, host: os.hostname() }

interface Holder {
  readonly token: string
  readonly pid: number
  readonly host: string
  readonly heartbeat_at: number
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as { code?: unknown }).code === "EPERM"
  }
}

/** Whether `holder` still stands for a live process other than this one. */
const isLive = (holder: Holder, now: number): boolean => {
  if (now - holder.heartbeat_at >= staleAfterMs) return false
  if (holder.host !== me.host) return true
  // On this host the pid decides at once. A row with this process's pid but not its token was
  // left by an earlier process that had the pid: it is gone.
  return holder.pid !== me.pid && isAlive(holder.pid)
}

const describeHolder = (holder: Holder) =>
  holder.host === me.host ? `process ${holder.pid} on this host` : `process ${holder.pid} on ${holder.host}`

const statements = (db: Database.Database) => {
  const read = db.prepare<[string], Holder>(
    "SELECT token, pid, host, heartbeat_at FROM instances WHERE instance_id = ?",
  )
  const take = db.prepare(`INSERT INTO instances (instance_id, token, pid, host, heartbeat_at)
    VALUES (?, ?, ?, ?, ?) ON CONFLICT (instance_id) DO UPDATE SET token = excluded.token,
    pid = excluded.pid, host = excluded.host, heartbeat_at = excluded.heartbeat_at`)
  const beat = db.prepare("UPDATE instances SET heartbeat_at = ? WHERE instance_id = ? AND token = ?")
  const drop = db.prepare("DELETE FROM instances WHERE instance_id = ? AND token = ?")
  const transaction = db.transaction((instanceId: string) => {
    const now = Date.now()
    const holder = read.get(instanceId)
    if (holder !== undefined && isLive(holder, now))
      throw new InstanceIdInUse({ instanceId, holder: describeHolder(holder) })
    take.run(instanceId, me.token, me.pid, me.host, now)
  })
  // IMMEDIATE: the write lock is taken before the read, so no other process reads in between.
  const acquire = (instanceId: string) => transaction.immediate(instanceId)
  return { acquire, beat, drop }
}

/**
 * Writes the heartbeat; a row that is no longer ours (another process judged this one stale and
 * took the id) marks the id lost in `guard`, and the store stops writing.
 */
const heartbeat = (
  beat: Database.Statement,
  instanceId: string,
  guard: InstanceHold.Guard,
): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (guard.lost.has(instanceId)) return Effect.void
    const changes = Effect.try(() => beat.run(Date.now(), instanceId, me.token).changes)
    return Effect.flatMap(
      Effect.orElseSucceed(changes, () => 1),
      (written): Effect.Effect<void> => {
        if (written > 0) return Effect.void
        guard.lost.set(instanceId, "another process took it over")
        return Effect.logError(
          `instance id ${JSON.stringify(instanceId)} was taken over by another process; this store refuses every write`,
        )
      },
    )
  })

export const lockInstance = (
  filename: string,
  db: Database.Database,
  guard: InstanceHold.Guard,
  instanceId: string,
): Effect.Effect<void, InstanceIdInUse | StoreError, Scope.Scope> => {
  // A database in memory is this store's alone: only its own clients are to be kept apart.
  if (filename === ":memory:") return InstanceHold.once(guard.holds, instanceId, instanceId, Effect.void)
  const { acquire, beat, drop } = statements(db)
  const take = Effect.acquireRelease(
    Effect.try({
      try: () => acquire(instanceId),
      catch: (error) =>
        error instanceof InstanceIdInUse
          ? error
          : new StoreError({
              operation: "lockInstance",
              message: `cannot lock the instance id: ${String(error)}`,
            }),
    }),
    () =>
      Effect.sync(() => {
        guard.lost.delete(instanceId)
        try {
          drop.run(instanceId, me.token)
        } catch {
          // A row left behind names this process, which is gone by the time anyone reads it.
        }
      }),
  ).pipe(
    Effect.zipRight(
      Effect.forkScoped(
        Effect.repeat(heartbeat(beat, instanceId, guard), Schedule.spaced(Duration.millis(heartbeatMs))),
      ),
    ),
    Effect.asVoid,
  )
  return InstanceHold.once(
    InstanceHold.thisProcess,
    `sqlite:${path.resolve(filename)}:${instanceId}`,
    instanceId,
    take,
  )
}

/**
 * The holders of instance ids on this file still alive (`HandleStore.listInstances`): a
 * heartbeat within `staleAfterMs`, and on this host a process that exists. A SIGKILLed holder's
 * row stays in the table until its id is taken again; it is not listed.
 */
export const list = (db: Database.Database, now: number): ReadonlyArray<InstanceRecord> =>
  db
    .prepare<[], Holder & { readonly instance_id: string }>(
      "SELECT instance_id, token, pid, host, heartbeat_at FROM instances ORDER BY instance_id",
    )
    .all()
    .filter(
      (holder) =>
        now - holder.heartbeat_at < staleAfterMs &&
        (holder.host !== me.host || holder.pid === me.pid || isAlive(holder.pid)),
    )
    .map((holder) => ({
      instanceId: holder.instance_id,
      heartbeatAt: holder.heartbeat_at,
      host: holder.host,
      pid: holder.pid,
    }))
