/**
 * One live process per instance id on a database file: a row of the `instances` table names the
 * process holding each id by pid, host, pid namespace and a random token of that process. The
 * row is read and taken inside one write transaction (BEGIN IMMEDIATE), so of any number of
 * processes finding a stale holder at once, exactly one takes the id: the others see its row.
 *
 * A holder is stale once its heartbeat stops (`staleAfterMs`). Sooner only where this process can
 * ask its pid: the same host and the same pid namespace (`pidSpace`), where a crashed or SIGKILLed
 * holder is stale at once. A pid read in another namespace names another process or none (two
 * containers sharing a host name, not a pid namespace, each see the other's pid as dead), so
 * there, and for rows that name no namespace, only the heartbeat tells.
 *
 * A holder whose heartbeat cannot be written is not alive to the others: it logs each failure,
 * and once it has gone without a beat for long enough that another process may soon judge it
 * stale, it gives the id up (the store then writes nothing) rather than write beside the process
 * that takes it. A second client of this process is refused before the database is asked (see
 * `InstanceHold`).
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { InstanceIdInUse, type InstanceRecord, StoreError } from "@mcp-handles/core/HandleStore"
import * as InstanceHold from "@mcp-handles/core/InstanceHold"
import type Database from "better-sqlite3"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

/** How often a holder writes its heartbeat. */
const heartbeatMs = 10_000
/** A holder on another host whose heartbeat is older than this is stale (a few missed beats). */
export const staleAfterMs = 60_000

/**
 * A holder that has gone this long without a heartbeat written gives its id up: the next beat
 * that failed too would leave it stale to the others.
 */
const giveUpAfterMs = staleAfterMs - 2 * heartbeatMs

/**
 * The pid namespace this process's pids belong to, as the lock rows record it: on Linux the boot
 * and the pid namespace (its inode, unique while the kernel runs); elsewhere there are no pid
 * namespaces, so the platform (the host name is compared beside it). Null when it cannot be read:
 * such a process judges every holder by its heartbeat.
 */
const readPidSpace = (): string | null => {
  if (process.platform !== "linux") return process.platform
  try {
    const namespace = fs.readlinkSync("/proc/self/ns/pid")
    const boot = fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
    return boot === "" ? null : `${boot}/${namespace}`
  } catch {
    return null
  }
}

/** This process's pid namespace (see `readPidSpace`). */
export const pidSpace: string | null = readPidSpace()

/** This process as its lock rows name it. The token tells it apart from a process that had its pid. */
const me = { token: crypto.randomUUID(), pid: process.pid, host: os.hostname(), pidSpace }

interface Holder {
  readonly token: string
  readonly pid: number
  readonly host: string
  readonly pid_space: string | null
  readonly heartbeat_at: number
}

/** Whether `holder`'s pid can be asked from here: it names this host and this pid namespace. */
const pidIsOurs = (holder: Holder): boolean =>
  holder.host === me.host && me.pidSpace !== null && holder.pid_space === me.pidSpace

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
  if (!pidIsOurs(holder)) return true
  // In this pid namespace the pid decides at once. A row with this process's pid but not its
  // token was left by an earlier process that had the pid: it is gone.
  return holder.pid !== me.pid && isAlive(holder.pid)
}

const describeHolder = (holder: Holder) =>
  holder.host !== me.host
    ? `process ${holder.pid} on ${holder.host}`
    : pidIsOurs(holder)
      ? `process ${holder.pid} on this host`
      : `process ${holder.pid} on a host named ${holder.host} (another pid namespace, such as another container)`

const statements = (db: Database.Database) => {
  const read = db.prepare<[string], Holder>(
    "SELECT token, pid, host, pid_space, heartbeat_at FROM instances WHERE instance_id = ?",
  )
  const take = db.prepare(`INSERT INTO instances (instance_id, token, pid, host, pid_space, heartbeat_at)
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (instance_id) DO UPDATE SET token = excluded.token,
    pid = excluded.pid, host = excluded.host, pid_space = excluded.pid_space,
    heartbeat_at = excluded.heartbeat_at`)
  const beat = db.prepare("UPDATE instances SET heartbeat_at = ? WHERE instance_id = ? AND token = ?")
  const drop = db.prepare("DELETE FROM instances WHERE instance_id = ? AND token = ?")
  const transaction = db.transaction((instanceId: string) => {
    const now = Date.now()
    const holder = read.get(instanceId)
    if (holder !== undefined && isLive(holder, now))
      throw new InstanceIdInUse({ instanceId, holder: describeHolder(holder) })
    take.run(instanceId, me.token, me.pid, me.host, me.pidSpace, now)
  })
  // IMMEDIATE: the write lock is taken before the read, so no other process reads in between.
  const acquire = (instanceId: string) => transaction.immediate(instanceId)
  return { acquire, beat, drop }
}

/**
 * Writes the heartbeat; a row that is no longer ours (another process judged this one stale and
 * took the id) marks the id lost in `guard`, and the store stops writing. A beat that fails is
 * logged; once none was written for `giveUpAfterMs` (by this process's clock), the id is marked
 * lost too: the others will soon see this holder as gone.
 */
const heartbeat = (
  beat: Database.Statement,
  instanceId: string,
  guard: InstanceHold.Guard,
  last: { beatAt: number },
): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (guard.lost.has(instanceId)) return
    const now = yield* Clock.currentTimeMillis
    const written = yield* Effect.either(Effect.try(() => beat.run(Date.now(), instanceId, me.token).changes))
    const name = JSON.stringify(instanceId)
    if (Either.isRight(written)) {
      if (written.right > 0) {
        last.beatAt = now
        return
      }
      guard.lost.set(instanceId, "another process took it over")
      return yield* Effect.logError(
        `instance id ${name} was taken over by another process; this store refuses every write`,
      )
    }
    const cause = String(written.left.error)
    const silentMs = now - last.beatAt
    if (silentMs < giveUpAfterMs) {
      return yield* Effect.logError(
        `the heartbeat of instance id ${name} could not be written (${cause}); without one for ${Math.round(staleAfterMs / 1000)} s another process may take the id, and this store stops writing ${Math.round((giveUpAfterMs - silentMs) / 1000)} s from now`,
      )
    }
    guard.lost.set(instanceId, `no heartbeat could be written for ${Math.round(silentMs / 1000)} s: ${cause}`)
    return yield* Effect.logError(
      `the heartbeat of instance id ${name} could not be written for ${Math.round(silentMs / 1000)} s (${cause}); another process may take the id: this store refuses every write`,
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
  const last = { beatAt: 0 }
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
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        last.beatAt = now
        return Effect.forkScoped(
          Effect.repeat(
            heartbeat(beat, instanceId, guard, last),
            Schedule.spaced(Duration.millis(heartbeatMs)),
          ),
        )
      }),
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
 * heartbeat within `staleAfterMs`, and in this pid namespace a process that exists. A SIGKILLed holder's
 * row stays in the table until its id is taken again; it is not listed.
 */
export const list = (db: Database.Database, now: number): ReadonlyArray<InstanceRecord> =>
  db
    .prepare<[], Holder & { readonly instance_id: string }>(
      "SELECT instance_id, token, pid, host, pid_space, heartbeat_at FROM instances ORDER BY instance_id",
    )
    .all()
    .filter(
      (holder) =>
        now - holder.heartbeat_at < staleAfterMs &&
        (!pidIsOurs(holder) || holder.pid === me.pid || isAlive(holder.pid)),
    )
    .map((holder) => ({
      instanceId: holder.instance_id,
      heartbeatAt: holder.heartbeat_at,
      host: holder.host,
      pid: holder.pid,
    }))
